/*
 * filter_write.cpp: writing segment filter groups (src/segments.md,
 * *Segment filters*; the page format is in core/page_layout.hpp).
 *
 * A build fills a group slot by slot as it writes segments, from the
 * column hashes of each segment's rows, in backend memory, and writes the
 * group whole once its slots are all taken or the build ends: a header
 * page and its region pages in one run of new blocks, each logged whole.
 * Only then are the filters named in the segments' directory entries,
 * which the leader publishes with the rest of the build.
 */
#include "bloomidx.h"

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

/* Opens a group sized for the segment of `rows`, its first. */
static void
open_group(FilterGroupBuild *g, const BloomidxState *state, const SegmentRows *rows,
		   uint32 group_id)
{
	uint32		distinct[INDEX_MAX_KEYS];

	if (g->scratch == NULL)
		g->scratch = (uint64 *) palloc(bloomidx::kDistinctWords * sizeof(uint64));
	if (g->slot_scratch == NULL)
		g->slot_scratch = (uint8 *) palloc(bloomidx::kFilterScratchBytes);
	for (int c = 0; c < state->ncolumns; c++)
		distinct[c] = bloomidx::distinct_estimate(rows->hashes + c, rows->nrows,
												  (uint32) state->ncolumns, g->scratch);
	bloomidx::filter_group_init(&g->header, group_id, (uint32) state->ncolumns, distinct,
								state->filter_bits_per_key, bloomidx::kGroupSlots);
	g->image = (uint8 *) palloc_extended((Size) bloomidx::group_region_rows(g->header) *
										 bloomidx::group_row_bytes(g->header),
										 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	g->open = true;
}

/*
 * Adds the segment of `rows` (written: entries[entry_index] is its entry)
 * to the part's group, and writes the group when it is full.  Nothing
 * without filters (segment_filter_rate = 0) or column hashes.
 */
void
bloomidx_filter_group_add(Relation index, FilterGroupBuild *g, const BloomidxState *state,
						  const SegmentRows *rows, bloomidx::SegmentEntry *entries,
						  uint32 entry_index, const BlockWriter *writer)
{
	if (rows->hashes == NULL || state->filter_bits_per_key <= 0 || rows->nrows == 0)
		return;
	if (!g->open)
		open_group(g, state, rows, entries[entry_index].segment_id);

	uint32		slot = g->header.slots_taken;
	uint32		ncolumns = (uint32) state->ncolumns;

	for (uint32 c = 0; c < ncolumns; c++)
		bloomidx::group_image_add_column(g->image, g->header, c, slot, rows->hashes + c,
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
 * Frees the filter groups of the `removed` segments (just published away)
 * that no segment of `dir` (the directory after that publish) names any
 * more, page by page, stamped with the publish's generation; a stale
 * reader that meets one knows it was recycled.  A group whose header is
 * not sound is left to VACUUM's sweep and bloomidx_verify.  A crash before
 * this leaves the pages for the sweep too.  Under the seal lock.
 */
void
bloomidx_free_unused_groups(Relation index, const DirectoryCopy *dir,
							const bloomidx::SegmentEntry *removed, uint32 nremoved,
							BlockNumber nblocks, uint32 generation)
{
	for (uint32 r = 0; r < nremoved; r++)
	{
		BlockNumber block = removed[r].filter_block;
		bool		named = block == 0;

		for (uint32 q = 0; q < r && !named; q++)
			named = removed[q].filter_block == block;	/* freed already */
		for (uint32 i = 0; i < dir->header.nsegments && !named; i++)
			named = dir->entries[i].filter_block == block;
		if (named)
			continue;

		Buffer		buffer = ReadBuffer(index, block);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		bool		sound = bloomidx::check_filter_group_page(page, removed[r].filter_group,
															  (uint32) RelationGetNumberOfAttributes(index),
															  block, nblocks) ==
			bloomidx::PageProblem::None;
		uint32		pages = sound ? 1 + bloomidx::filter_group_header(page)->region_pages : 0;

		UnlockReleaseBuffer(buffer);
		for (uint32 b = 0; b < pages; b++)
			bloomidx_free_page(index, block + b, generation);
	}
}
