/*
 * filter_merge.cpp: the filters of a segment VACUUM merges from others
 * (merge.cpp), made from the sources' filters (storage/README.md, *Segment
 * filters*).
 *
 * Only small segments keep their rows' filter keys (key pages, format
 * 16): a merge whose sources all kept them makes its filters from them
 * (bloomidx_segment_filters); this file serves the others.  Reading the
 * rows' values back from the table would evaluate index expressions
 * inside VACUUM and meet tuples that are dead or HOT-updated since.  A
 * source's filter is enough: the merged segment gets a group of its own whose slots each
 * hold one source slot's filter, every column widened to the most blocks
 * any source has (core: filter_widened_blocks), and a scan lets the
 * segment through if any of its slots passes.  Keys of rows VACUUM
 * removed stay, as in any filter.
 *
 * Such a filter costs each source's pages and lets through what any
 * source's lets through: past MERGED_SLOTS_MAX source slots it would cost
 * more than a few fresh filters of the merged rows and pass too much, and
 * the merged segment gets none (it is read like a segment without
 * filters, as is one merged from a source without filters or from a
 * damaged source group, which is warned of).
 */
#include "storage/storage.h"

/*
 * Source slots a merged segment's filters keep at most: its rate is up to
 * that many times a source's (2 % each by default), its pages up to that
 * many sources' (each sized for a segment's rows).
 */
#define MERGED_SLOTS_MAX 4

/* Sources in group order (by header block). */
static int
compare_by_group(const void *a, const void *b)
{
	const bloomidx::SegmentEntry *x = *(const bloomidx::SegmentEntry *const *) a;
	const bloomidx::SegmentEntry *y = *(const bloomidx::SegmentEntry *const *) b;

	if (x->filter_block != y->filter_block)
		return x->filter_block < y->filter_block ? -1 : 1;
	return 0;
}

/*
 * Copies source e's group header page (h == NULL) or region page
 * region_page of group h, at blkno, into copy, checked; false (warned) if
 * damaged.
 */
static bool
read_group_page(Relation index, const bloomidx::SegmentEntry *e,
				const bloomidx::FilterGroupHeader *h, uint32 region_page, BlockNumber blkno,
				BlockNumber nblocks, BufferAccessStrategy strategy, bool merging, char *copy)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bloomidx::PageProblem problem = h == NULL
		? bloomidx::check_filter_group_page(page, e->filter_group,
											(uint32) RelationGetNumberOfAttributes(index),
											e->filter_block, nblocks)
		: bloomidx::check_filter_page(page, *h, region_page, bloomidx::Sums::Verify);

	if (problem == bloomidx::PageProblem::None)
		memcpy(copy, page, BLCKSZ);
	UnlockReleaseBuffer(buffer);
	if (problem != bloomidx::PageProblem::None)
		bloomidx_warn_corrupted_page(index, blkno,
									 psprintf(merging
											  ? "%s.  VACUUM merged segment %u with others into one without filters."
											  : "%s.  VACUUM left the filters of segment %u in their group.",
											  bloomidx::page_problem_text(problem),
											  e->segment_id));
	return problem == bloomidx::PageProblem::None;
}

/*
 * Reads the source groups' headers: each group once (ngroups), its header
 * (groups), where its region pages are (region_blocks), the slots that
 * hold sources (group_slots) and an entry naming it (group_entry).  False
 * (warned) if a group is damaged.
 */
typedef struct MergeSources
{
	uint32		ngroups;
	uint32		nslots;			/* source slots in all */
	bloomidx::FilterGroupHeader *groups;
	uint32	  **region_blocks;
	bloomidx::SlotMask *group_slots;
	const bloomidx::SegmentEntry **group_entry;
} MergeSources;

static bool
read_sources(Relation index, const bloomidx::SegmentEntry *sources, uint32 nsources,
			 BlockNumber nblocks, BufferAccessStrategy strategy, bool merging, MergeSources *m,
			 char *copy, uint32 *failed_segment)
{
	const bloomidx::SegmentEntry **order = (const bloomidx::SegmentEntry **)
		palloc(nsources * sizeof(bloomidx::SegmentEntry *));

	m->groups = (bloomidx::FilterGroupHeader *) palloc(nsources * sizeof(bloomidx::FilterGroupHeader));
	m->region_blocks = (uint32 **) palloc(nsources * sizeof(uint32 *));
	m->group_slots = (bloomidx::SlotMask *) palloc0(nsources * sizeof(bloomidx::SlotMask));
	m->group_entry = (const bloomidx::SegmentEntry **) palloc(nsources * sizeof(bloomidx::SegmentEntry *));
	m->ngroups = 0;
	m->nslots = 0;
	for (uint32 i = 0; i < nsources; i++)
		order[i] = &sources[i];
	qsort(order, nsources, sizeof(order[0]), compare_by_group);
	for (uint32 i = 0; i < nsources; i++)
	{
		const bloomidx::SegmentEntry *e = order[i];
		uint32		g = m->ngroups;

		if (g == 0 || m->group_entry[g - 1]->filter_block != e->filter_block)
		{
			if (!read_group_page(index, e, NULL, 0, e->filter_block, nblocks, strategy, merging,
								 copy))
			{
				*failed_segment = e->segment_id;
				return false;
			}
			m->groups[g] = *bloomidx::filter_group_header((const uint8 *) copy);
			m->region_blocks[g] = (uint32 *) palloc(Max(m->groups[g].region_pages, 1) * sizeof(uint32));
			for (uint32 p = 0; p < m->groups[g].region_pages; p++)
				m->region_blocks[g][p] = bloomidx::group_region_block((const uint8 *) copy,
																	  e->filter_block, p);
			m->group_entry[g] = e;
			m->ngroups++;
		}
		g = m->ngroups - 1;

		bloomidx::SlotMask mask = bloomidx::group_segment_slots(m->groups[g], e->segment_id);

		if (e->filter_group != m->groups[g].group_id || e->filter_offset >= m->groups[g].slots_taken ||
			!mask.has(e->filter_offset))
		{
			bloomidx_warn_corrupted_page(index, e->filter_block,
										 psprintf(merging
												  ? "Slot %u of the filter group does not hold segment %u.  VACUUM merged it with others into one without filters."
												  : "Slot %u of the filter group does not hold segment %u.  VACUUM left its filters in their group.",
												  e->filter_offset, e->segment_id));
			*failed_segment = e->segment_id;
			return false;
		}
		m->group_slots[g] |= mask;
		m->nslots += mask.count();
	}
	return true;
}

/*
 * The filter slots segment e's filters take (its group's slots taken for
 * it): 0 when it has none, and MERGED_SLOTS_MAX + 1 when its group page
 * is unsound (warned), as a merge with it would keep no filters either.
 * A merge groups its sources by these (merge.cpp), so that a merge of
 * segments with filters keeps them.
 */
uint32
bloomidx_filter_slots(Relation index, const bloomidx::SegmentEntry *e, BlockNumber nblocks,
					  BufferAccessStrategy strategy)
{
	if (e->filter_block == 0)
		return 0;

	PGAlignedBlock copy;

	if (!read_group_page(index, e, NULL, 0, e->filter_block, nblocks, strategy, true, copy.data))
		return MERGED_SLOTS_MAX + 1;
	return bloomidx::group_segment_slots(*bloomidx::filter_group_header((const uint8 *) copy.data),
										 e->segment_id).count();
}

/* The most filter slots a merged segment's filters keep (filter_merge.cpp). */
uint32
bloomidx_merged_slots_max(void)
{
	return MERGED_SLOTS_MAX;
}

/*
 * The filters of `sources` (nsources >= 1, all read) gathered into one
 * group in memory, *filters: each source's slots (those its group holds
 * for it) in slots of their own, group by group, every column widened to
 * the most blocks any source has, header.slot_segment naming each slot's
 * segment.  False (nothing made) when a source has no filters, a source
 * group is damaged (warned: `merging` says what VACUUM did instead;
 * *failed_segment, unless NULL, names a segment of that group), or they
 * would take more than max_slots slots or more region pages than a listed
 * group has.  The image in the caller's memory context; the rest
 * in a context of its own.
 */
bool
bloomidx_gather_filters(Relation index, uint32 ncolumns, const bloomidx::SegmentEntry *sources,
						uint32 nsources, uint32 max_slots, bool merging, BlockNumber nblocks,
						BufferAccessStrategy strategy, SegmentFilters *filters,
						uint32 *failed_segment)
{
	uint32		slots = 0;
	uint32		failed = 0;

	filters->image = NULL;
	if (nsources == 0)
		return false;
	for (uint32 i = 0; i < nsources; i++)
		if (sources[i].filter_block == 0)
			return false;

	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(caller, "bloomidx gather filters",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	char	   *copy = (char *) palloc(BLCKSZ);
	MergeSources m;
	bool		ok = read_sources(index, sources, nsources, nblocks, strategy, merging, &m, copy,
								  &failed);

	if (ok)
	{
		slots = m.nslots;
		ok = slots >= 1 && slots <= Min(max_slots, bloomidx::kGroupSlots);
	}
	if (ok)
	{
		bloomidx::merged_group_init(&filters->header, m.groups, m.ngroups, ncolumns, slots);
		ok = filters->header.region_pages <=
			bloomidx::group_listed_pages_max(filters->header.slot_capacity, false);
	}
	if (ok)
		filters->image = (uint8 *) MemoryContextAllocExtended(caller,
															  (Size) bloomidx::group_region_rows(filters->header) *
															  bloomidx::group_row_bytes(filters->header),
															  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	/* Each source slot into a slot of its own; every region page read once. */
	uint32		next = 0;

	for (uint32 g = 0; ok && g < m.ngroups; g++)
	{
		int16		slot_map[bloomidx::kGroupSlots];

		for (uint32 s = 0; s < bloomidx::kGroupSlots; s++)
		{
			slot_map[s] = m.group_slots[g].has(s) ? (int16) next : -1;
			if (slot_map[s] >= 0)
				filters->header.slot_segment[next++] = m.groups[g].slot_segment[s];
		}
		for (uint32 p = 0; ok && p < m.groups[g].region_pages; p++)
		{
			bloomidx_vacuum_delay_point();
			ok = read_group_page(index, m.group_entry[g], &m.groups[g], p, m.region_blocks[g][p],
								 nblocks, strategy, merging, copy);
			if (!ok)
				failed = m.group_entry[g]->segment_id;
			if (ok)
				bloomidx::group_image_merge_page(filters->image, filters->header, m.groups[g], p,
												 (const uint8 *) copy + SizeOfPageHeaderData,
												 slot_map);
		}
	}
	if (ok)
		filters->header.slots_taken = (uint16) slots;
	if (!ok && filters->image != NULL)
	{
		pfree(filters->image);
		filters->image = NULL;
	}
	if (failed_segment != NULL)
		*failed_segment = failed;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return ok;
}

/*
 * The filters of the segment merged from `sources` (nsources >= 1, all
 * read): false (nothing made) when the index writes no filters, a source
 * has none, or they would keep more than MERGED_SLOTS_MAX slots.  Memory
 * as bloomidx_gather_filters's.
 */
bool
bloomidx_merge_filters(Relation index, const BloomidxState *state,
					   const bloomidx::SegmentEntry *sources, uint32 nsources, BlockNumber nblocks,
					   BufferAccessStrategy strategy, SegmentFilters *filters)
{
	filters->image = NULL;
	if (state->filter_bits_per_key <= 0 || nsources > MERGED_SLOTS_MAX)
		return false;
	return bloomidx_gather_filters(index, (uint32) state->ncolumns, sources, nsources,
								   MERGED_SLOTS_MAX, true, nblocks, strategy, filters, NULL);
}
