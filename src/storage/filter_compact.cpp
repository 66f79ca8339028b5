/*
 * filter_compact.cpp: VACUUM gathers the small filter groups that seals
 * and merges leave (a group of each segment's own) into groups of many
 * slots (storage/README.md, *Segment filters*).
 *
 * A query reads a group's header and a region page per key it asks,
 * whatever the group's slots: a build's group of 127 segments costs it
 * about 3 pages, the same 127 segments sealed one by one about 3 each.
 * So VACUUM, holding the seal lock, takes groups that hold few live
 * slots and whose filters have the same shape (each column's blocks and
 * probes: a seal sizes them in powers of two so that seals of like rows
 * match, filter_write.cpp), and writes their live slots as one new group;
 * a slot's bits are copied, never widened, so each segment keeps its
 * filters' rate.  The protocol is the merge's: the new group is written
 * where nothing names it (single free pages, a listed group: SEAL_STEP_GROUP_WRITTEN);
 * one publish names it in its segments' directory entries, taking its id
 * from the directory's counter (SEAL_STEP_GROUP_PUBLISHED); then the
 * groups no segment names any more are freed page by page, stamped with
 * that publish's generation, so that a scan holding an older directory
 * copy that meets one starts again (SEAL_STEP_GROUP_FREED).  A crash
 * between the steps leaves pages nothing names, which the sweep frees.
 */
#include "storage/storage.h"

/* A group with fewer live slots than this is gathered with others of its shape. */
#define COMPACT_BELOW_SLOTS 16

/* Groups looked at in one VACUUM at most: the rest wait for the next. */
#define COMPACT_MAX_GROUPS 1024

/* A group VACUUM may gather: its header, its live segments' entries. */
typedef struct CompactGroup
{
	bloomidx::FilterGroupHeader header;
	uint32		first;			/* its entries: entries[first .. first + n) */
	uint32		n;
	uint32		live_slots;		/* slots its segments hold */
} CompactGroup;

/* Whether groups a and b have filters of one shape (same blocks and probes a column). */
static bool
same_shape(const bloomidx::FilterGroupHeader *a, const bloomidx::FilterGroupHeader *b)
{
	return a->ncolumns == b->ncolumns &&
		memcmp(a->columns, b->columns, sizeof(a->columns)) == 0;
}

static int
compare_shape(const void *x, const void *y)
{
	const CompactGroup *a = (const CompactGroup *) x;
	const CompactGroup *b = (const CompactGroup *) y;

	if (a->header.ncolumns != b->header.ncolumns)
		return a->header.ncolumns < b->header.ncolumns ? -1 : 1;

	int			c = memcmp(a->header.columns, b->header.columns, sizeof(a->header.columns));

	if (c != 0)
		return c;
	return a->header.group_id < b->header.group_id ? -1 : a->header.group_id > b->header.group_id;
}

/*
 * The most slots a gathered group of h's shape may have: its region pages
 * listed on its header page (bloomidx_write_filter_group).
 */
static uint32
max_slots_of_shape(const bloomidx::FilterGroupHeader *h)
{
	bloomidx::FilterGroupHeader g = *h;

	for (uint32 s = bloomidx::kGroupSlots; s > 1; s--)
	{
		g.slot_capacity = (uint16) s;
		if (bloomidx::group_region_pages(g) <= bloomidx::kMaxListedRegionPages)
			return s;
	}
	return 1;
}

/*
 * Reads the groups of dir's segments that VACUUM may gather: those whose
 * header is sound and names each of its segments where their entries say,
 * holding fewer than COMPACT_BELOW_SLOTS live slots or less than half of
 * the slots taken.  Their segments' entries go to *entries, in group order.
 * Returns how many groups.
 */
static uint32
read_small_groups(Relation index, const DirectoryCopy *dir, BlockNumber nblocks,
				  BufferAccessStrategy strategy, CompactGroup *groups,
				  bloomidx::SegmentEntry *entries)
{
	uint32		n = dir->header.nsegments;
	uint32		ncolumns = (uint32) RelationGetNumberOfAttributes(index);
	uint64	   *order = (uint64 *) palloc(Max(n, 1) * sizeof(uint64));
	uint32		norder = 0;
	uint32		ngroups = 0;
	uint32		nentries = 0;

	for (uint32 i = 0; i < n; i++)
		if (dir->entries[i].filter_block != 0)
			order[norder++] = bloomidx::group_order_key(dir->entries[i].filter_block, i);
	bloomidx::sort_group_order(order, norder);

	for (uint32 at = 0; at < norder && ngroups < COMPACT_MAX_GROUPS;)
	{
		uint32		end = at + 1;
		BlockNumber block = (BlockNumber) (order[at] >> 32);
		const bloomidx::SegmentEntry *e = &dir->entries[(uint32) order[at]];

		while (end < norder && (BlockNumber) (order[end] >> 32) == block)
			end++;
		bloomidx_vacuum_delay_point();

		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, block, RBM_NORMAL, strategy);
		bool		sound;
		CompactGroup *g = &groups[ngroups];

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		sound = bloomidx::check_filter_group_page((const uint8 *) BufferGetPage(buffer),
												  e->filter_group, ncolumns, block,
												  nblocks) == bloomidx::PageProblem::None;
		if (sound)
			g->header = *bloomidx::filter_group_header((const uint8 *) BufferGetPage(buffer));
		UnlockReleaseBuffer(buffer);

		/* Each segment where its entry says, its slots counted once. */
		bloomidx::SlotMask live = bloomidx::SlotMask::none();

		for (uint32 k = at; sound && k < end; k++)
		{
			const bloomidx::SegmentEntry *s = &dir->entries[(uint32) order[k]];
			bloomidx::SlotMask mask = bloomidx::group_segment_slots(g->header, s->segment_id);

			sound = s->filter_group == g->header.group_id &&
				s->filter_offset < g->header.slots_taken && mask.has(s->filter_offset) &&
				(live & mask) == bloomidx::SlotMask::none();
			live |= mask;
		}
		g->live_slots = live.count();
		if (sound && (g->live_slots < COMPACT_BELOW_SLOTS ||
					  2 * g->live_slots <= g->header.slots_taken))
		{
			g->first = nentries;
			g->n = end - at;
			for (uint32 k = at; k < end; k++)
				entries[nentries++] = dir->entries[(uint32) order[k]];
			ngroups++;
		}
		at = end;
	}
	pfree(order);
	return ngroups;
}

/*
 * Gathers groups[0 .. n) (one shape, their live slots fitting one group)
 * into one new group, group id `group_id`: writes it, publishes it, frees
 * the groups left unnamed.  False (nothing changed) when the filters could
 * not be gathered (a damaged group, warned).
 */
static bool
gather_groups(Relation index, const CompactGroup *groups, uint32 n,
			  const bloomidx::SegmentEntry *entries, uint32 max_slots, uint32 group_id,
			  BufferAccessStrategy strategy)
{
	uint32		nsources = 0;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	for (uint32 i = 0; i < n; i++)
		nsources += groups[i].n;

	bloomidx::SegmentEntry *sources = (bloomidx::SegmentEntry *)
		palloc(nsources * sizeof(bloomidx::SegmentEntry));
	uint32		at = 0;

	for (uint32 i = 0; i < n; i++)
		for (uint32 k = 0; k < groups[i].n; k++)
			sources[at++] = entries[groups[i].first + k];

	SegmentFilters filters;

	if (!bloomidx_gather_filters(index, (uint32) RelationGetNumberOfAttributes(index), sources,
								 nsources, max_slots, false, nblocks, strategy, &filters))
		return false;

	/* Written where nothing names it, then named in its segments' entries. */
	BloomidxIOBlock page;

	filters.header.group_id = group_id;
	BlockNumber header_block = bloomidx_write_filter_group(index, &filters.header, filters.image,
														   InvalidBlockNumber, NULL, NULL,
														   &page);

	pfree(filters.image);
	bloomidx_seal_step(SEAL_STEP_GROUP_WRITTEN);

	bloomidx::SegmentEntry *refiled = (bloomidx::SegmentEntry *)
		palloc(nsources * sizeof(bloomidx::SegmentEntry));

	for (uint32 i = 0; i < nsources; i++)
	{
		uint32		slot = 0;

		while (filters.header.slot_segment[slot] != sources[i].segment_id)
			slot++;				/* there: gathered from its slots */
		refiled[i] = sources[i];
		refiled[i].filter_block = header_block;
		refiled[i].filter_offset = (uint16) slot;
		refiled[i].filter_group = group_id;
	}

	DirectoryChange change;

	memset(&change, 0, sizeof(change));
	change.refiled = refiled;
	change.nrefiled = nsources;
	change.new_groups = 1;

	uint32		generation = bloomidx_publish(index, &change);

	bloomidx_seal_step(SEAL_STEP_GROUP_PUBLISHED);

	/* The old groups, named by no segment now, page by page. */
	DirectoryCopy *after = bloomidx_directory_copy_new();
	uint32	   *own_blocks = (uint32 *) palloc0(nsources * sizeof(uint32));

	nblocks = RelationGetNumberOfBlocks(index);
	bloomidx_read_directory(index, &nblocks, after);
	bloomidx_free_unused_groups(index, after, sources, own_blocks, nsources, nblocks, generation);
	bloomidx_seal_step(SEAL_STEP_GROUP_FREED);
	bloomidx_directory_copy_free(after);
	return true;				/* the rest goes with the caller's context */
}

/*
 * Gathers the small filter groups of like shape into groups of many
 * slots, each batch of two or more groups whose live slots fit one group
 * (max_slots_of_shape).  The caller holds the seal lock.
 */
void
bloomidx_compact_filter_groups(Relation index, BufferAccessStrategy strategy)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx compact filters",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);

	CompactGroup *groups = (CompactGroup *)
		palloc(Min(Max(dir->header.nsegments, 1), COMPACT_MAX_GROUPS) * sizeof(CompactGroup));
	bloomidx::SegmentEntry *entries = (bloomidx::SegmentEntry *)
		palloc(Max(dir->header.nsegments, 1) * sizeof(bloomidx::SegmentEntry));
	uint32		ngroups = read_small_groups(index, dir, nblocks, strategy, groups, entries);
	uint32		next_id = dir->header.next_group_id;

	qsort(groups, ngroups, sizeof(CompactGroup), compare_shape);
	for (uint32 at = 0; at < ngroups;)
	{
		uint32		max_slots = max_slots_of_shape(&groups[at].header);
		uint32		end = at;
		uint32		slots = 0;

		/* Groups of this shape while their live slots fit one group. */
		while (end < ngroups && same_shape(&groups[end].header, &groups[at].header) &&
			   slots + groups[end].live_slots <= max_slots)
			slots += groups[end++].live_slots;
		if (end == at)
			end = at + 1;		/* one group alone too large: left as it is */
		else if (end - at >= 2 &&
				 gather_groups(index, &groups[at], end - at, entries, max_slots, next_id,
							   strategy))
			next_id++;
		at = end;
		CHECK_FOR_INTERRUPTS();
	}
	IndexFreeSpaceMapVacuum(index);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
