/*
 * filter_gather.cpp: VACUUM gathers the small filter groups that seals
 * and merges leave (a group of each segment's own) into groups of many
 * slots (storage/README.md, *Segment filters*).
 *
 * A query reads a group's header and a region page per key it asks,
 * whatever the group's slots: a build's group of 1,016 segments costs it
 * about 3 pages, the same segments sealed one by one about 3 each.
 * So VACUUM, holding the seal lock, takes groups that hold few live
 * slots and whose filters are of one family (each column's probes the
 * same, and block counts one of which divides the other: a seal or a merge
 * takes its index's full segment's count times a power of two,
 * filter_write.cpp), and writes their live slots as one new group of the
 * largest counts; a slot of fewer blocks is widened, each of its blocks
 * ORed whole into the blocks its keys' range covers (a multiple: never a
 * block drawing on two), so each segment keeps its filters' rate.  The
 * protocol is the merge's: the new group is written where nothing names it
 * (single free pages, a listed group; past those the free space map has,
 * a run off the free list, left on it by a crash before the publish:
 * SEAL_STEP_GROUP_WRITTEN); one publish names it in its segments'
 * directory entries, taking its id from the directory's counter
 * (SEAL_STEP_GROUP_PUBLISHED); then the groups no segment names any more
 * are freed page by page, stamped with that publish's generation, so that
 * a scan holding an older directory copy that meets one starts again
 * (SEAL_STEP_GROUP_FREED).  A crash between the steps leaves pages
 * nothing names, which the sweep frees.
 */
#include "storage/storage.h"

/* A group with fewer live slots than this is gathered with others of its family. */
#define GATHER_BELOW_SLOTS 16

/* Groups looked at in one VACUUM at most: the rest wait for the next. */
#define GATHER_MAX_GROUPS 1024

/* A group VACUUM may gather: its header, its live segments' entries. */
typedef struct GatherGroup
{
	bloomidx::FilterGroupHeader header;
	uint32		first;			/* its entries: entries[first .. first + n) */
	uint32		n;
	uint32		live_slots;		/* slots its segments hold */
	bool		filling;		/* taken only to be filled: a listed group of
								 * GATHER_BELOW_SLOTS live slots or more, over
								 * half of them live, not full */
} GatherGroup;

/* A block count without its factors of two: counts of one family share it. */
static uint32
odd_part(uint32 blocks)
{
	while (blocks > 0 && blocks % 2 == 0)
		blocks /= 2;
	return blocks;
}

/*
 * The order of groups' filter families (each column's probes and its
 * block count's odd part); 0: one family, whose groups gather into one,
 * every column's count a power of two times another's.
 */
static int
family_order(const bloomidx::FilterGroupHeader *a, const bloomidx::FilterGroupHeader *b)
{
	if (a->ncolumns != b->ncolumns)
		return a->ncolumns < b->ncolumns ? -1 : 1;
	for (uint32 c = 0; c < bloomidx::kMaxColumns; c++)
	{
		const bloomidx::FilterColumn *x = &a->columns[c];
		const bloomidx::FilterColumn *y = &b->columns[c];

		if (x->probes != y->probes)
			return x->probes < y->probes ? -1 : 1;
		if (odd_part(x->blocks) != odd_part(y->blocks))
			return odd_part(x->blocks) < odd_part(y->blocks) ? -1 : 1;
	}
	return 0;
}

/*
 * Groups by family, then fewest live slots first (a batch starts from the
 * smallest group not yet taken), then by id.
 */
static int
compare_family(const void *x, const void *y)
{
	const GatherGroup *a = (const GatherGroup *) x;
	const GatherGroup *b = (const GatherGroup *) y;
	int			c = family_order(&a->header, &b->header);

	if (c != 0)
		return c;
	if (a->live_slots != b->live_slots)
		return a->live_slots < b->live_slots ? -1 : 1;
	return a->header.group_id < b->header.group_id ? -1 : a->header.group_id > b->header.group_id;
}

/* The shape a group gathered from groups of shapes a and b (one family) takes: each column's most blocks. */
static bloomidx::FilterGroupHeader
widest_shape(const bloomidx::FilterGroupHeader *a, const bloomidx::FilterGroupHeader *b)
{
	bloomidx::FilterGroupHeader w = *a;

	for (uint32 c = 0; c < bloomidx::kMaxColumns; c++)
		w.columns[c].blocks = Max(a->columns[c].blocks, b->columns[c].blocks);
	return w;
}

/* The shape a group gathered from batch[0 .. n) takes (n >= 1): each column's most blocks. */
static bloomidx::FilterGroupHeader
batch_shape(GatherGroup *const *batch, uint32 n)
{
	bloomidx::FilterGroupHeader shape = batch[0]->header;

	for (uint32 i = 1; i < n; i++)
		shape = widest_shape(&shape, &batch[i]->header);
	return shape;
}

/* The blocks a slot of h's shape holds, every column's. */
static uint64
slot_blocks(const bloomidx::FilterGroupHeader *h)
{
	uint64		blocks = 0;

	for (uint32 c = 0; c < bloomidx::kMaxColumns; c++)
		blocks += h->columns[c].blocks;
	return blocks;
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
		if (bloomidx::group_region_pages(g) <= bloomidx::group_listed_pages_max(s, false))
			return s;
	}
	return 1;
}

/*
 * Reads the groups of dir's segments that VACUUM may gather: those whose
 * header is sound and names each of its segments where their entries say,
 * holding fewer than GATHER_BELOW_SLOTS live slots, fewer than a listed
 * group of their shape may hold (so that VACUUM fills the groups it
 * gathered before, rather than starting new ones beside them: `filling`),
 * or less than half of the slots taken.  Their segments' entries go to *entries, in group order.
 * Returns how many groups.
 */
static uint32
read_small_groups(Relation index, const DirectoryCopy *dir, BlockNumber nblocks,
				  BufferAccessStrategy strategy, GatherGroup *groups,
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

	for (uint32 at = 0; at < norder && ngroups < GATHER_MAX_GROUPS;)
	{
		uint32		end = at + 1;
		BlockNumber block = (BlockNumber) (order[at] >> 32);
		const bloomidx::SegmentEntry *e = &dir->entries[(uint32) order[at]];

		while (end < norder && (BlockNumber) (order[end] >> 32) == block)
			end++;
		bloomidx_vacuum_delay_point();

		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, block, RBM_NORMAL, strategy);
		GatherGroup *g = &groups[ngroups];

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		bloomidx::PageProblem problem =
			bloomidx::check_filter_group_page((const uint8 *) BufferGetPage(buffer),
											  e->filter_group, ncolumns, block, nblocks);

		if (problem == bloomidx::PageProblem::None)
			g->header = *bloomidx::filter_group_header((const uint8 *) BufferGetPage(buffer));
		UnlockReleaseBuffer(buffer);
		if (problem != bloomidx::PageProblem::None)
		{
			bloomidx_warn_corrupted_page(index, block,
										 psprintf("%s.  VACUUM left the filters of segment %u in their group.",
												  bloomidx::page_problem_text(problem),
												  e->segment_id));
			at = end;
			continue;
		}

		/*
		 * The slots its segments hold (whether each is where its entry says
		 * is checked as the filters are read: bloomidx_gather_filters).
		 */
		bloomidx::SlotMask live = bloomidx::SlotMask::none();

		for (uint32 k = at; k < end; k++)
			live |= bloomidx::group_segment_slots(g->header, dir->entries[(uint32) order[k]].segment_id);
		g->live_slots = live.count();
		g->filling = g->live_slots >= GATHER_BELOW_SLOTS && 2 * g->live_slots > g->header.slots_taken;
		if (!g->filling ||
			((g->header.flags & bloomidx::kGroupListed) != 0 &&
			 g->live_slots < max_slots_of_shape(&g->header)))
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
 * Gathers batch[0 .. n) (one family, their live slots fitting one group
 * of their widest shape) into one new group, group id `group_id`: writes it, publishes it, frees
 * the groups left unnamed.  False (nothing changed) when the filters could
 * not be gathered: a damaged group (warned), which *failed_segment names
 * a segment of (0: none).
 */
static bool
gather_groups(Relation index, GatherGroup *const *batch, uint32 n,
			  const bloomidx::SegmentEntry *entries, uint32 max_slots, uint32 group_id,
			  BufferAccessStrategy strategy, uint32 *failed_segment)
{
	uint32		nsources = 0;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	for (uint32 i = 0; i < n; i++)
		nsources += batch[i]->n;

	bloomidx::SegmentEntry *sources = (bloomidx::SegmentEntry *)
		palloc(nsources * sizeof(bloomidx::SegmentEntry));
	uint32		at = 0;

	for (uint32 i = 0; i < n; i++)
		for (uint32 k = 0; k < batch[i]->n; k++)
			sources[at++] = entries[batch[i]->first + k];

	SegmentFilters filters;

	if (!bloomidx_gather_filters(index, (uint32) RelationGetNumberOfAttributes(index), sources,
								 nsources, max_slots, false, nblocks, strategy, &filters,
								 failed_segment))
		return false;

	/*
	 * Written where nothing names it, then named in its segments' entries:
	 * in single free pages before the last segment's header where it can (a
	 * run off the free list, the lowest that fits, which the publish takes
	 * off it, if the free space map has none: bloomidx_write_filter_group).  The directory
	 * is read again for its list: an earlier batch's publish may have
	 * changed it.
	 */
	BloomidxIOBlock page;
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	GroupSpill	spill;
	BlockWriter writer;

	nblocks = RelationGetNumberOfBlocks(index);
	bloomidx_read_directory(index, &nblocks, dir);
	memset(&spill, 0, sizeof(spill));
	spill.dir = dir;
	spill.limit = bloomidx::kMetaBlock + 1;
	for (uint32 i = 0; i < dir->header.nsegments; i++)
		spill.limit = Max(spill.limit, dir->entries[i].header_block + 1);
	bloomidx_block_writer_init(&writer, index, !RELATION_IS_LOCAL(index), false);
	filters.header.group_id = group_id;
	BlockNumber header_block = bloomidx_write_filter_group(index, &filters.header, filters.image,
														   InvalidBlockNumber, &writer, NULL,
														   &spill, &page);

	pfree(filters.image);
	bloomidx_seal_step(SEAL_STEP_GROUP_WRITTEN);

	bloomidx::SegmentEntry *refiled = (bloomidx::SegmentEntry *)
		palloc(nsources * sizeof(bloomidx::SegmentEntry));

	for (uint32 i = 0; i < nsources; i++)
	{
		uint32		slot = 0;

		/* There: every source's slots were gathered, in order. */
		while (slot < filters.header.slots_taken &&
			   filters.header.slot_segment[slot] != sources[i].segment_id)
			slot++;
		Assert(slot < filters.header.slots_taken);
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
	if (spill.nblocks > 0)
	{
		change.taken_blocks = spill.nblocks;
		change.taken_first = spill.first;
	}

	uint32		generation = bloomidx_publish(index, &change);

	bloomidx_seal_step(SEAL_STEP_GROUP_PUBLISHED);

	/*
	 * The old groups, named by no segment now, page by page: also those
	 * right after their segment's header, whose blocks their segment's
	 * removal would otherwise give back with its extent (own_blocks all 0):
	 * its entry no longer names them.  (The sweep joins such pages to the
	 * extent once it is on the free list: sweep.cpp.)
	 */
	DirectoryCopy *after = bloomidx_directory_copy_new();
	uint32	   *own_blocks = (uint32 *) palloc0(nsources * sizeof(uint32));

	nblocks = RelationGetNumberOfBlocks(index);
	bloomidx_read_directory(index, &nblocks, after);
	bloomidx_free_unused_groups(index, after, sources, own_blocks, nsources, nblocks, generation);
	bloomidx_seal_step(SEAL_STEP_GROUP_FREED);
	bloomidx_directory_copy_free(after);
	bloomidx_directory_copy_free(dir);
	return true;				/* the rest goes with the caller's context */
}

/*
 * Gathers the small filter groups of one family into groups of many
 * slots, each batch of two or more groups whose live slots fit one group
 * of their widest shape (max_slots_of_shape).  A batch with a damaged group is gathered again
 * without it.  The caller holds the seal lock.
 */
void
bloomidx_gather_filter_groups(Relation index, BufferAccessStrategy strategy)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx gather filter groups",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);

	GatherGroup *groups = (GatherGroup *)
		palloc(Min(Max(dir->header.nsegments, 1), GATHER_MAX_GROUPS) * sizeof(GatherGroup));
	GatherGroup **batch = (GatherGroup **)
		palloc(Min(Max(dir->header.nsegments, 1), GATHER_MAX_GROUPS) * sizeof(GatherGroup *));
	bloomidx::SegmentEntry *entries = (bloomidx::SegmentEntry *)
		palloc(Max(dir->header.nsegments, 1) * sizeof(bloomidx::SegmentEntry));
	uint32		ngroups = read_small_groups(index, dir, nblocks, strategy, groups, entries);
	uint32		next_id = dir->header.next_group_id;

	qsort(groups, ngroups, sizeof(GatherGroup), compare_family);

	bool	   *taken = (bool *) palloc0(Max(ngroups, 1) * sizeof(bool));

	for (uint32 at = 0; at < ngroups; at++)
	{
		if (taken[at])
			continue;

		bloomidx::FilterGroupHeader shape = groups[at].header;
		uint32		shape_max = max_slots_of_shape(&shape); /* kept while the shape is */
		uint32		slots = 0;
		uint32		n = 0;
		uint64		own_blocks = 0;	/* the batch's live slots' blocks as they are */

		/*
		 * From the first group not yet taken, the groups of its family
		 * (fewest live slots first) whose live slots still fit one group of
		 * the batch's widest shape, whose blocks are at most half again the
		 * slots' own: sixty seals of 2,000 rows are not widened fiftyfold to
		 * gather with one of a segment's rows, which gathers with its like.
		 */
		for (uint32 k = at; k < ngroups && family_order(&groups[k].header, &groups[at].header) == 0;
			 k++)
		{
			const GatherGroup *g = &groups[k];

			if (taken[k])
				continue;

			bloomidx::FilterGroupHeader wider = widest_shape(&shape, &g->header);
			uint64		own = own_blocks + g->live_slots * slot_blocks(&g->header);

			/* The cheap test first: max_slots_of_shape walks the capacities. */
			if (2 * (slots + g->live_slots) * slot_blocks(&wider) > 3 * own)
				continue;

			uint32		wider_max = slot_blocks(&wider) == slot_blocks(&shape)
				? shape_max : max_slots_of_shape(&wider);

			if (slots + g->live_slots > wider_max)
				continue;
			shape = wider;
			shape_max = wider_max;
			slots += g->live_slots;
			own_blocks = own;
			batch[n++] = &groups[k];
		}

		/*
		 * A group taken only to be filled is rewritten only for as many
		 * slots more as GATHER_BELOW_SLOTS and half its own: not a group of
		 * 30 slots a VACUUM to add one (it stays for a later batch).
		 */
		for (uint32 i = 0; i < n;)
		{
			if (n >= 2 && batch[i]->filling &&
				slots - batch[i]->live_slots < Max(GATHER_BELOW_SLOTS, batch[i]->live_slots / 2))
			{
				slots -= batch[i]->live_slots;
				batch[i] = batch[--n];
				i = 0;			/* the others' counts changed */
			}
			else
				i++;
		}
		taken[at] = true;		/* tried: a group alone is left as it is */
		for (uint32 i = 0; i < n; i++)
			taken[batch[i] - groups] = true;
		if (n > 0)
			shape = batch_shape(batch, n);	/* the widest of those left */

		uint32		max_slots = max_slots_of_shape(&shape);

		/*
		 * Without a damaged group (warned) while two or more are left; or a
		 * group alone at most half of whose slots are live, rewritten with
		 * those only (its segments' others merged away).
		 */
		while (n >= 2 ||
			   (n == 1 && 2 * batch[0]->live_slots <= batch[0]->header.slots_taken &&
				batch[0]->live_slots <= max_slots))
		{
			uint32		failed = 0;
			uint32		keep = 0;

			if (gather_groups(index, batch, n, entries, max_slots, next_id, strategy, &failed))
			{
				next_id++;
				break;
			}
			for (uint32 i = 0; i < n && failed != 0; i++)
			{
				bool		has = false;

				for (uint32 k = 0; k < batch[i]->n; k++)
					has |= entries[batch[i]->first + k].segment_id == failed;
				if (!has)
					batch[keep++] = batch[i];
			}
			if (keep == 0 || keep == n)
				break;			/* nothing to drop: the batch stays as it is */
			n = keep;
			shape = batch_shape(batch, n);
			max_slots = max_slots_of_shape(&shape);
		}
		CHECK_FOR_INTERRUPTS();
	}
	IndexFreeSpaceMapVacuum(index);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
