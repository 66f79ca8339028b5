/*
 * filter_write.cpp: writing segment filter groups (storage/README.md,
 * *Segment filters*; the page format is in core/page_layout.hpp).
 *
 * A build fills a group slot by slot as it writes segments, from the
 * filter keys of each segment's rows, in backend memory, and writes the
 * group whole once its slots are all taken or the build ends: a header
 * page and its region pages in one run of new blocks, each logged whole.
 * Only then are the filters named in the segments' directory entries,
 * which the leader publishes with the rest of the build.
 *
 * A seal gives its segment a group of its own, of one slot, made from the
 * filter keys the pending rows keep (bloomidx_seal_filters) and written
 * with the segment (segment_write.cpp).
 */
#include "storage/storage.h"

void
bloomidx_filter_group_init(FilterGroupBuild *g)
{
	memset(g, 0, sizeof(*g));
}

void
bloomidx_filter_group_free(FilterGroupBuild *g)
{
	if (g->image)
		pfree(g->image);
	if (g->scratch)
		pfree(g->scratch);
	if (g->slot_scratch)
		pfree(g->slot_scratch);
	bloomidx_filter_group_init(g);
}

/*
 * A group header of `slots` slots sized for the segment of `rows` (each
 * column's distinct filter keys, counted in bitmap: kDistinctWords words),
 * and its image, zeroed.
 */
static uint8 *
size_group(bloomidx::FilterGroupHeader *h, const BloomidxState *state, const SegmentRows *rows,
		   uint32 group_id, uint32 slots, uint64 *bitmap)
{
	uint32		distinct[INDEX_MAX_KEYS];

	for (int c = 0; c < state->ncolumns; c++)
		distinct[c] = bloomidx::distinct_estimate(rows->keys + c, rows->nrows,
												  (uint32) state->ncolumns, bitmap);
	bloomidx::filter_group_init(h, group_id, (uint32) state->ncolumns, distinct,
								state->filter_bits_per_key, slots);
	return (uint8 *) palloc_extended((Size) bloomidx::group_region_rows(*h) *
									 bloomidx::group_row_bytes(*h),
									 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* Opens a group sized for the segment of `rows`, its first. */
static void
open_group(FilterGroupBuild *g, const BloomidxState *state, const SegmentRows *rows,
		   uint32 group_id)
{
	if (g->scratch == NULL)
		g->scratch = (uint64 *) palloc(bloomidx::kDistinctWords * sizeof(uint64));
	if (g->slot_scratch == NULL)
		g->slot_scratch = (uint8 *) palloc(bloomidx::kFilterScratchBytes);
	g->image = size_group(&g->header, state, rows, group_id, bloomidx::kGroupSlots, g->scratch);
	g->open = true;
}

/*
 * Adds the segment of `rows` (written: entries[entry_index] is its entry)
 * to the part's group, and writes the group when it is full.  Nothing
 * without filters (segment_filter_rate = 0) or filter keys.
 */
void
bloomidx_filter_group_add(Relation index, FilterGroupBuild *g, const BloomidxState *state,
						  const SegmentRows *rows, bloomidx::SegmentEntry *entries,
						  uint32 entry_index, const BlockWriter *writer)
{
	if (rows->keys == NULL || state->filter_bits_per_key <= 0 || rows->nrows == 0)
		return;
	if (!g->open)
		open_group(g, state, rows, entries[entry_index].segment_id);

	uint32		slot = g->header.slots_taken;
	uint32		ncolumns = (uint32) state->ncolumns;

	for (uint32 c = 0; c < ncolumns; c++)
		bloomidx::group_image_add_column(g->image, g->header, c, slot, rows->keys + c,
										 rows->nrows, ncolumns, g->slot_scratch);
	g->header.slot_segment[slot] = entries[entry_index].segment_id;
	g->header.slots_taken++;
	g->entry_index[slot] = entry_index;
	if (g->header.slots_taken == g->header.slot_capacity)
		bloomidx_filter_group_flush(index, g, entries, writer);
}

/*
 * Writes the open group, if any, at the end of the index, and names it in
 * its segments' entries.
 */
void
bloomidx_filter_group_flush(Relation index, FilterGroupBuild *g, bloomidx::SegmentEntry *entries,
							const BlockWriter *writer)
{
	if (!g->open)
		return;

	bloomidx::FilterGroupHeader *h = &g->header;

	/* A last group of fewer segments than it holds: its rows for them alone. */
	bloomidx::group_image_shrink(g->image, h);

	uint32		rows_total = bloomidx::group_region_rows(*h);
	uint32		per_page = bloomidx::group_rows_per_page(*h);
	BlockNumber first = bloomidx_extend_run(index, 1 + h->region_pages, writer);
	BloomidxIOBlock page;

	h->check = bloomidx::filter_group_check(*h);
	for (uint32 i = 0; i < h->region_pages; i++)
	{
		uint32		n = Min(per_page, rows_total - i * per_page);

		PageInit((Page) page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::filter_page_fill((uint8 *) page.data, *h,
								   g->image + (Size) i * per_page * bloomidx::group_row_bytes(*h),
								   n, i);
		bloomidx_write_run_block(index, first + 1 + i, page.data, writer);
		CHECK_FOR_INTERRUPTS();
	}
	/* The header, which names the others, last. */
	PageInit((Page) page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::filter_group_page_fill((uint8 *) page.data, *h);
	bloomidx_write_run_block(index, first, page.data, writer);

	for (uint32 s = 0; s < h->slots_taken; s++)
	{
		bloomidx::SegmentEntry *e = &entries[g->entry_index[s]];

		e->filter_block = first;
		e->filter_offset = (uint16) s;
		e->filter_group = h->group_id;
		e->check = bloomidx::segment_entry_check(*e);
	}
	pfree(g->image);
	g->image = NULL;
	g->open = false;
	memset(h, 0, sizeof(*h));
}

/*
 * The blocks of the filter group segment e has right after its header (a
 * seal's or merge's, every slot its own, its pages one run), which its
 * removal gives back with its extent; 0 if it has none there, or if the
 * group's header is not sound (then its pages are left to VACUUM's sweep).
 */
uint32
bloomidx_own_group_blocks(Relation index, const bloomidx::SegmentEntry *e, BlockNumber nblocks,
						  BufferAccessStrategy strategy)
{
	if (e->filter_block == 0 || e->filter_block != e->header_block + 1 ||
		e->filter_group != e->segment_id)
		return 0;

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, e->filter_block, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	uint32		blocks = 0;

	if (bloomidx::check_filter_group_page(page, e->filter_group,
										  (uint32) RelationGetNumberOfAttributes(index),
										  e->filter_block, nblocks) == bloomidx::PageProblem::None)
	{
		const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header(page);
		bool		run = bloomidx::group_segment_slots(*h, e->segment_id) ==
			bloomidx::SlotMask::first(h->slots_taken);

		for (uint32 i = 0; run && i < h->region_pages; i++)
			run = bloomidx::group_region_block(page, e->filter_block, i) == e->filter_block + 1 + i;
		if (run)
			blocks = 1 + h->region_pages;
	}
	UnlockReleaseBuffer(buffer);
	return blocks;
}

/*
 * Frees the filter groups of the `removed` segments (just published away)
 * that no segment of `dir` (the directory after that publish) names any
 * more, page by page, stamped with the publish's generation; a stale
 * reader that meets one knows it was recycled.  Groups right after their
 * segment's header (own_blocks[r] > 0) went with its extent.  A group
 * whose header is not sound is left to VACUUM's sweep and bloomidx_verify.
 * A crash before this leaves the pages for the sweep too.  Under the seal
 * lock.
 */
void
bloomidx_free_unused_groups(Relation index, const DirectoryCopy *dir,
							const bloomidx::SegmentEntry *removed, const uint32 *own_blocks,
							uint32 nremoved, BlockNumber nblocks, uint32 generation)
{
	PGAlignedBlock copy;

	for (uint32 r = 0; r < nremoved; r++)
	{
		BlockNumber block = removed[r].filter_block;
		bool		named = block == 0 || own_blocks[r] > 0;

		for (uint32 q = 0; q < r && !named; q++)
			named = removed[q].filter_block == block;	/* freed already */
		for (uint32 i = 0; i < dir->header.nsegments && !named; i++)
			named = dir->entries[i].filter_block == block;
		if (named)
			continue;

		/* The header's copy: freeing the region pages reads their blocks from it. */
		Buffer		buffer = ReadBuffer(index, block);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(copy.data, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);

		const uint8 *page = (const uint8 *) copy.data;

		if (bloomidx::check_filter_group_page(page, removed[r].filter_group,
											  (uint32) RelationGetNumberOfAttributes(index),
											  block, nblocks) != bloomidx::PageProblem::None)
			continue;
		for (uint32 i = 0; i < bloomidx::filter_group_header(page)->region_pages; i++)
			bloomidx_free_page(index, bloomidx::group_region_block(page, block, i), generation);
		bloomidx_free_page(index, block, generation);
	}
}

/*
 * The filters of a seal's segment, from its rows' filter keys: a group of
 * one slot, sized by each column's distinct keys.  False (nothing made)
 * without filters or keys.  Memory in the current context.
 */
bool
bloomidx_seal_filters(const BloomidxState *state, const SegmentRows *rows, SegmentFilters *filters)
{
	uint32		ncolumns = (uint32) state->ncolumns;

	if (rows->keys == NULL || state->filter_bits_per_key <= 0 || rows->nrows == 0)
		return false;

	uint64	   *bitmap = (uint64 *) palloc(bloomidx::kDistinctWords * sizeof(uint64));
	uint8	   *scratch = (uint8 *) palloc(bloomidx::kFilterScratchBytes);

	filters->image = size_group(&filters->header, state, rows, 0, 1, bitmap);
	for (uint32 c = 0; c < ncolumns; c++)
		bloomidx::group_image_add_column(filters->image, filters->header, c, 0, rows->keys + c,
										 rows->nrows, ncolumns, scratch);
	pfree(bitmap);
	pfree(scratch);
	return true;
}

/*
 * Bits per value of the segment filters a build, seal or merge writes (0:
 * none).  ALTER INDEX ... SET (segment_filter_rate = ...) takes effect at
 * the next seal or merge, as far as pending rows keep filter keys (frozen
 * by the build: an index built without filters needs a REINDEX for them).
 */
double
bloomidx_filter_bits_per_key(Relation index)
{
	/*
	 * The sizing search evaluates the rate formula a few thousand times
	 * (milliseconds): every scan and INSERT statement asks, so the last
	 * answer is kept.
	 */
	static double last_rate = -1;
	static double last_bits = 0;
	const BloomidxOptions *opts = (const BloomidxOptions *) index->rd_options;
	double		rate = opts ? opts->segment_filter_rate : BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE;

	if (rate <= 0)
		return 0;
	if (rate != last_rate)
	{
		last_bits = bloomidx::filter_bits_per_key(rate);
		last_rate = rate;
	}
	return last_bits;
}

/*
 * Sets the bits per key of the filters a build, seal or merge writes: the
 * index's segment_filter_rate, where pending rows keep the filter keys
 * that seals need (MetaPageData::filter_keys, frozen by the build); else
 * none.  (Sizing takes milliseconds: INSERTs that do not seal skip it.)
 */
void
bloomidx_state_filters(BloomidxState *state, Relation index)
{
	state->filter_bits_per_key = state->meta.filter_keys ? bloomidx_filter_bits_per_key(index) : 0;
}
