/*
 * segment_write.cpp: turning a block of rows (signatures and heap TIDs,
 * gathered in memory) into a sealed segment's pages, one extent of
 * consecutive blocks: its slice pages (m, or fewer with several slices a
 * page: packed slices), the live page, the TID pages, its rows' filter
 * keys' pages if it keeps them, the header (storage/README.md has the
 * protocol, core/page_layout.hpp the formats).
 * Each page is written whole and WAL-logged whole; nothing points at the
 * segment until its directory entry is published.
 */
#include "storage/storage.h"

/* Rows per segment: kSegmentRows, or fewer for tests (superuser only). */
int			bloomidx_segment_rows = bloomidx::kSegmentRows;

/* Slices transposed at a time: 64 slices, 520 kB, whatever the signature. */
#define SLICE_BATCH 64

/*
 * Rows a segment takes: bloomidx.segment_rows, but at least a pending
 * page's worth (page_capacity), as a seal takes whole pages.
 */
uint32
bloomidx_segment_capacity(uint32 page_capacity)
{
	return Min(Max((uint32) bloomidx_segment_rows, page_capacity), bloomidx::kSegmentRows);
}

/*
 * Whether new segments pack their slices (format 14), or keep one a page
 * where the tests ask for format 13's layout
 * (bloomidx.debug_unpacked_slices), so that readers meet both.
 */
bool
bloomidx_packs_slices(void)
{
	return !bloomidx_debug_unpacked_slices;
}

/* The slices a page of a new segment of `rows` rows (0: one a page). */
uint16
bloomidx_slices_per_page(uint32 rows)
{
	return bloomidx_packs_slices() ? bloomidx::packed_slices_per_page(rows) : 0;
}

/*
 * Blocks a segment of `rows` rows takes at least: its slice pages, the
 * live page, a TID page and the header.
 */
uint32
bloomidx_segment_blocks_for_rows(const bloomidx::MetaPageData *meta, uint32 rows)
{
	return bloomidx::slice_page_count(meta->signature_bits, bloomidx_slices_per_page(rows)) + 3;
}

/*
 * Those of a segment of this session's size.  Free runs shorter than this
 * are left to pending pages (sweep.cpp).
 */
uint32
bloomidx_segment_min_blocks(const bloomidx::MetaPageData *meta)
{
	return bloomidx_segment_blocks_for_rows(meta, bloomidx_segment_capacity(meta->capacity));
}

/* Room for `capacity` rows (1..kSegmentRows) of signature_bytes each. */
void
bloomidx_segment_rows_init(SegmentRows *rows, uint32 signature_bytes, uint32 capacity)
{
	Assert(capacity >= 1 && capacity <= bloomidx::kSegmentRows);
	rows->nrows = 0;
	rows->capacity = capacity;
	rows->signature_bytes = signature_bytes;
	rows->signatures = (uint8 *) palloc_extended((Size) rows->capacity * signature_bytes,
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	rows->tids = (ItemPointerData *) palloc((Size) rows->capacity * sizeof(ItemPointerData));
	rows->keys = NULL;
	rows->scratch = NULL;
}

/* Makes room for the rows' filter keys, ncolumns a row. */
void
bloomidx_segment_rows_keep_keys(SegmentRows *rows, uint32 ncolumns)
{
	rows->keys = (uint32 *) palloc_extended((Size) rows->capacity * ncolumns * sizeof(uint32),
											MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* Row r's pending-page tail (g.tail_bytes: its TID, then its filter keys). */
void
bloomidx_segment_rows_tail(const SegmentRows *rows, uint32 r, const bloomidx::RowPageGeometry *g,
						   uint8 *tail)
{
	memcpy(tail, &rows->tids[r], sizeof(ItemPointerData));
	if (g->keys > 0)
		memcpy(tail + bloomidx::kTidSize, rows->keys + (Size) r * g->keys,
			   g->keys * bloomidx::kFilterKeySize);
}

void
bloomidx_segment_rows_free(SegmentRows *rows)
{
	pfree(rows->signatures);
	pfree(rows->tids);
	if (rows->keys)
		pfree(rows->keys);
	if (rows->scratch)
		pfree(rows->scratch);
}

/* What writing a segment needs besides the rows, allocated on first use. */
typedef struct SegmentScratch
{
	uint64		slices[SLICE_BATCH][bloomidx::kSliceWords];
	uint64		packed[bloomidx::kSliceWords];	/* the slice page being filled */
	uint64		live[bloomidx::kSliceWords];
	bloomidx::HeapTid tids[bloomidx::kSegmentRows];
	uint8		tid_bytes[bloomidx::segment_tid_bytes_bound(bloomidx::kSegmentRows)];
	uint32		page_start[bloomidx::kMaxTidPages];
	uint16		page_used[bloomidx::kMaxTidPages];
	bloomidx::SegmentHeader header;
	BloomidxIOBlock page;
} SegmentScratch;

/*
 * Whether segment e's filter group has block blkno at place `at` (0 its
 * header, 1 + i its region page i; filter_page_place): right after its
 * header, or, in a group whose header lists its region pages, there.
 */
static bool
group_has_block(Relation index, const bloomidx::SegmentEntry *e, BlockNumber blkno, int64 at)
{
	if ((int64) blkno - (int64) e->filter_block == at)
		return true;
	/* blkno, locked here, as the group's header too: damage, reported (not read). */
	if (e->filter_block == blkno)
		return true;
	if (at <= 0 || e->filter_block == 0 || e->filter_block >= RelationGetNumberOfBlocks(index))
		return false;

	Buffer		buffer = ReadBuffer(index, e->filter_block);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		has = bloomidx::check_filter_group_page(page, e->filter_group,
														(uint32) RelationGetNumberOfAttributes(index),
														e->filter_block,
														RelationGetNumberOfBlocks(index)) ==
		bloomidx::PageProblem::None &&
		at - 1 < bloomidx::filter_group_header(page)->region_pages &&
		bloomidx::group_region_block(page, e->filter_block, (uint32) (at - 1)) == blkno;

	UnlockReleaseBuffer(buffer);
	return has;
}

/*
 * A block taken off the free list, about to be overwritten, must hold what
 * the list gives: a free, listed or new page, or a page of a segment or
 * filter group that is not in the directory, or not there: a segment a
 * merge removed, or what a seal or merge that failed or crashed before
 * publishing left (its id is the next segment's, as ids are only spent by
 * a publish, so the page's id may be a listed segment's whose pages are
 * elsewhere).  A page where a listed segment or its filter group lies
 * means the list is wrong, and writing would destroy it.
 */
static void
check_reused_block(Relation index, Buffer buffer, const DirectoryCopy *dir)
{
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	uint32		owner;

	if (PageIsNew((Page) page) || bloomidx::check_free_page(page) == bloomidx::PageProblem::None ||
		bloomidx::check_listed_page(page) == bloomidx::PageProblem::None)
		return;
	owner = bloomidx::segment_page_owner(page);
	if (owner != 0)
	{
		for (uint32 i = 0; i < dir->header.nsegments; i++)
		{
			const bloomidx::SegmentEntry *e = &dir->entries[i];

			if (e->segment_id == owner && blkno >= e->first_slice && blkno <= e->header_block)
				owner = 0;
		}
		if (owner != 0)
			return;
	}
	else
	{
		/* A group page: in use where a listed segment's group has it. */
		uint32		group = 0;
		int64		at = bloomidx::filter_page_place(page, &group);
		bool		in_use = false;

		for (uint32 i = 0; group != 0 && i < dir->header.nsegments && !in_use; i++)
			if (dir->entries[i].filter_group == group)
				in_use = group_has_block(index, &dir->entries[i], blkno, at);
		if (at >= 0 && !in_use)
			return;
	}
	bloomidx_report_corrupted_page(index, blkno,
								   "An extent of the metapage's free list includes a page in use.");
}

/*
 * Writes `image` to block blkno of the segment's extent: checked first if
 * the free list gave it (`listed`: the directory it came with).
 */
static void
write_block(Relation index, BlockNumber blkno, char *image, const BlockWriter *writer,
			const DirectoryCopy *listed)
{
	if (listed == NULL)
	{
		bloomidx_write_run_block(index, blkno, image, writer);
		return;
	}
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	check_reused_block(index, buffer, listed);
	bloomidx_write_page(index, buffer, image);
}

/*
 * A single page for a filter group's page, exclusively locked, or
 * InvalidBuffer with *blkno set (written by the caller through
 * write_block, checked).  Without `spill`, a free page from the free space
 * map, else a new one.  With it (GroupSpill): the map's before its limit;
 * else the next block of a run taken off its free list for the `remaining`
 * pages (this one and those after it), the lowest that fits, before the
 * limit or past it; else the map's anywhere; else a new page.  The run
 * past the limit rather than the map's pages: those may lie anywhere, and
 * the group's header at the index's end held a 10 M-row index, 99 %
 * deleted, at 17,579 pages where its segments took 250 (VACUUM's
 * truncation gives back only the free pages that end the index).
 */
static Buffer
group_single_page(Relation index, GroupSpill *spill, uint32 remaining, BlockNumber *blkno)
{
	if (spill != NULL && spill->used < spill->nblocks)
	{
		*blkno = spill->first + spill->used++;
		return InvalidBuffer;
	}

	Buffer		buffer = bloomidx_free_buffer_before(index, spill != NULL ? spill->limit
													 : InvalidBlockNumber);

	if (BufferIsValid(buffer) || spill == NULL)
		return BufferIsValid(buffer) ? buffer : bloomidx_extend_buffer(index);
	if (spill->first == 0)
	{
		/* The first page the map has none for before the limit: a run, once. */
		bloomidx::FreeList list = spill->dir->free;
		BlockNumber first = bloomidx::free_list_take(&list, remaining);

		spill->first = InvalidBlockNumber;
		if (first != 0)
		{
			bloomidx_check_free_list(index, spill->dir, bloomidx_cached_meta(index)->signature_bits,
									 RelationGetNumberOfBlocks(index));
			spill->first = first;
			spill->nblocks = remaining;
			*blkno = spill->first + spill->used++;
			return InvalidBuffer;
		}
	}
	return bloomidx_free_or_new_buffer(index);
}

/*
 * Writes page image `data` of a filter group written in single pages
 * (group_single_page) and returns its block.
 */
static BlockNumber
write_group_single_page(Relation index, char *data, const BlockWriter *writer, GroupSpill *spill,
						uint32 remaining)
{
	BlockNumber blkno = InvalidBlockNumber;
	Buffer		buffer = group_single_page(index, spill, remaining, &blkno);

	if (!BufferIsValid(buffer))
	{
		write_block(index, blkno, data, writer, spill->dir);
		return blkno;
	}
	blkno = BufferGetBlockNumber(buffer);
	bloomidx_write_page(index, buffer, data);
	return blkno;
}

/*
 * Writes filter group h (its id and slots set; made a listed group here)
 * whose region rows are `image`, and returns its header's block.  Its
 * header lists where its region pages are, so they may lie anywhere:
 *  - `first` valid: in the blocks from `first` on (a seal's or merge's
 *    group, right after its segment's header, taken with the segment from
 *    the free list, `listed`, or new ones); the segment's removal gives
 *    them back with its extent, so that segments written one after
 *    another still leave one run of blocks;
 *  - else in single free pages (the free space map's), where the free
 *    list had an extent for the segment only (a build's segments have no
 *    group of their own), and for the groups VACUUM gathers
 *    (filter_gather.cpp); a group's removal frees them page by page
 *    (bloomidx_free_unused_groups), for the next group or pending page.
 *    With `spill` (VACUUM's gathering, under the seal lock), pages before
 *    the last segment's header first, the map's, else a run off the free
 *    list, which the publish naming the group takes off it (*spill says
 *    which): a group past them would hold the truncation of the free
 *    blocks a merge left before it.
 * Nothing points at the pages until a publish names the group.
 */
BlockNumber
bloomidx_write_filter_group(Relation index, bloomidx::FilterGroupHeader *h, const uint8 *image,
							BlockNumber first, const BlockWriter *writer,
							const DirectoryCopy *listed, GroupSpill *spill,
							BloomidxIOBlock *page)
{
	uint32		rows_total = bloomidx::group_region_rows(*h);
	uint32		per_page = bloomidx::group_rows_per_page(*h);
	Size		row_bytes = bloomidx::group_row_bytes(*h);
	BlockNumber header_block;

	/* A seal's one slot takes 1,021 pages at most, a merge's are bounded: a check. */
	if (h->region_pages > bloomidx::group_listed_pages_max(h->slot_capacity, false))
		elog(ERROR, "bloomidx: a filter group of %u pages is too large", h->region_pages);

	uint32	   *blocks = (uint32 *) palloc(Max(h->region_pages, 1) * sizeof(uint32));

	h->flags = bloomidx::kGroupListed;
	h->check = bloomidx::filter_group_check(*h);
	for (uint32 i = 0; i < h->region_pages; i++)
	{
		PageInit((Page) page->data, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::filter_page_fill((uint8 *) page->data, *h,
								   image + (Size) i * per_page * row_bytes,
								   Min(per_page, rows_total - i * per_page), i);
		if (BlockNumberIsValid(first))
		{
			blocks[i] = first + 1 + i;
			write_block(index, blocks[i], page->data, writer, listed);
		}
		else
			blocks[i] = write_group_single_page(index, page->data, writer, spill,
												h->region_pages - i + 1);
		bloomidx_vacuum_delay_point();	/* VACUUM's gathering writes up to 1,986 */
	}
	/* The header, which names the others, last. */
	PageInit((Page) page->data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::filter_group_page_fill((uint8 *) page->data, *h, blocks);
	if (BlockNumberIsValid(first))
	{
		header_block = first;
		write_block(index, first, page->data, writer, listed);
	}
	else
		header_block = write_group_single_page(index, page->data, writer, spill, 1);
	pfree(blocks);
	return header_block;
}

/*
 * Writes a seal's or merge's filter group, every slot taken for the
 * segment (group id = segment id; a build's groups and those VACUUM
 * gathers take ids from next_group_id, above every segment's), where
 * bloomidx_write_filter_group says, and names it in the entry.
 */
static void
write_own_group(Relation index, SegmentFilters *filters, uint32 segment_id, BlockNumber first,
				bloomidx::SegmentEntry *entry, const BlockWriter *writer,
				const DirectoryCopy *listed, BloomidxIOBlock *page)
{
	bloomidx::FilterGroupHeader *g = &filters->header;

	g->group_id = segment_id;
	g->slots_taken = g->slot_capacity;
	for (uint32 s = 0; s < g->slot_capacity; s++)
		g->slot_segment[s] = segment_id;
	entry->filter_block = bloomidx_write_filter_group(index, g, filters->image, first, writer,
													  listed, NULL, page);
	entry->filter_offset = 0;
	entry->filter_group = segment_id;
}

/*
 * Writes rows->nrows rows (1..kSegmentRows) as segment `segment_id` and
 * fills *entry, its directory entry (not published: the caller does).  The
 * segment takes one extent of consecutive blocks: its slices, its live
 * page, its TID pages, its key pages (keep_keys: below) and its header, in
 * that order; with `filters` (a seal's or merge's: a group of the
 * segment's own), the group's pages after them where the blocks allow
 * (write_own_group).  With a free list
 * (`list`, the caller's copy of the directory's, and `dir`, that
 * directory), the blocks come off it if an extent has enough (*taken: how
 * many, 0 if none), else from the end of the index.
 */
void
bloomidx_write_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
					   uint32 segment_id, const BlockWriter *writer, bloomidx::FreeList *list,
					   const DirectoryCopy *dir, SegmentFilters *filters, bool keep_keys,
					   uint32 *taken, bloomidx::SegmentEntry *entry)
{
	const uint32 nrows = rows->nrows;
	const uint32 nslices = state->meta.signature_bits;
	const uint32 sig_bytes = state->meta.signature_bytes;

	Assert(nrows >= 1 && nrows <= bloomidx::kSegmentRows);
	Assert(!writer->direct || list == NULL);	/* a build's index has no free list */
	if (rows->scratch == NULL)
		rows->scratch = bloomidx_alloc_io_aligned(sizeof(SegmentScratch));
	SegmentScratch *s = (SegmentScratch *) rows->scratch;
	bloomidx::SegmentHeader *h = &s->header;

	/* TIDs first: damage here (an offset out of range) writes nothing. */
	for (uint32 r = 0; r < nrows; r++)
	{
		s->tids[r].block = ItemPointerGetBlockNumberNoCheck(&rows->tids[r]);
		s->tids[r].offset = ItemPointerGetOffsetNumberNoCheck(&rows->tids[r]);
	}
	memset(h, 0, sizeof(*h));
	h->segment_id = segment_id;
	h->rows = (uint16) nrows;
	h->nslices = (uint16) nslices;
	h->slices_per_page = bloomidx_slices_per_page(nrows);
	if (!bloomidx::segment_encode_tids(s->tids, nrows, s->tid_bytes, h, s->page_start,
									   s->page_used))
		elog(ERROR, "bloomidx: a heap TID out of range reached index \"%s\"",
			 RelationGetRelationName(index));

	/*
	 * Where: slices, live page, TID pages, key pages, header.  With
	 * keep_keys, a segment of a quarter of this session's segment size or
	 * less whose rows came with their filter keys keeps them (format 16),
	 * for the merge that makes its filters again (merge.cpp): VACUUM's seals
	 * and merges of small segments write such segments.  Not a build's,
	 * whose segments are full but its last ones, which would make a small
	 * table's index a third larger; not a merge's of sources that did not
	 * all keep theirs (rows->keys then holds only some rows' keys).
	 */
	const uint32 slice_pages = bloomidx::slice_page_count(nslices, h->slices_per_page);
	const uint32 slice_words = h->slices_per_page <= 1 ? bloomidx::kSliceWords :
		bloomidx::slice_lines(nrows) * bloomidx::kSliceLineWords;
	const uint32 nkeys = state->geometry.keys;

	h->key_pages = keep_keys && rows->keys != NULL &&
		nrows <= bloomidx_segment_capacity(state->geometry.capacity) / 4
		? (uint16) bloomidx::key_page_count(nrows, nkeys) : 0;
	uint32		need = slice_pages + 2 + h->ntid_pages + h->key_pages;
	uint32		group_blocks = filters != NULL ? 1 + filters->header.region_pages : 0;
	BlockNumber first = list != NULL ? bloomidx::free_list_take(list, need + group_blocks) : 0;
	bool		group_after = true; /* the group in the blocks after the header */

	/* Only extents too short for the group too: the group goes to free pages. */
	if (first == 0 && group_blocks > 0 && list != NULL &&
		(first = bloomidx::free_list_take(list, need)) != 0)
		group_after = false;

	const DirectoryCopy *listed = first != 0 ? dir : NULL;

	*taken = first != 0 ? need + (group_after ? group_blocks : 0) : 0;
	if (first == 0)
		first = bloomidx_extend_run(index, need + group_blocks, writer);
	h->first_slice = first;
	h->live_block = first + slice_pages;
	for (uint32 p = 0; p < h->ntid_pages; p++)
		h->tid_blocks[p] = first + slice_pages + 1 + p;

	for (uint32 at = 0; at < nslices; at += SLICE_BATCH)
	{
		uint32		n = Min((uint32) SLICE_BATCH, nslices - at);
		uint64	   *ptrs[SLICE_BATCH];

		memset(s->slices, 0, (Size) n * sizeof(s->slices[0]));
		for (uint32 j = 0; j < n; j++)
			ptrs[j] = s->slices[j];
		/* A batch starts at a byte: bits at.. of each signature. */
		bloomidx::transpose_signatures(rows->signatures + at / 8, sig_bytes, nrows,
									   sig_bytes - at / 8, n, ptrs);
		for (uint32 j = 0; j < n; j++)
		{
			bloomidx::SliceSpot spot = bloomidx::slice_spot(at + j, nrows, h->slices_per_page);

			/* Packed: slice after slice, the page written once full or at the last. */
			if (spot.word == 0)
				memset(s->packed, 0, sizeof(s->packed));
			memcpy(s->packed + spot.word, s->slices[j], slice_words * sizeof(uint64));
			if (at + j + 1 < nslices &&
				bloomidx::slice_spot(at + j + 1, nrows, h->slices_per_page).page == spot.page)
				continue;
			PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
			bloomidx::slice_page_fill((uint8 *) s->page.data, s->packed, (uint16) nrows,
									  (uint16) spot.first, segment_id);
			write_block(index, first + spot.page, s->page.data, writer, listed);
		}
		CHECK_FOR_INTERRUPTS();
	}

	memset(s->live, 0, sizeof(s->live));
	for (uint32 r = 0; r < nrows; r++)
		s->live[r / 64] |= UINT64CONST(1) << (r % 64);
	PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::live_page_fill((uint8 *) s->page.data, s->live, (uint16) nrows, segment_id);
	write_block(index, h->live_block, s->page.data, writer, listed);

	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		uint16		groups = 0;

		for (uint32 g = 0; g < h->ngroups; g++)
			groups += h->groups[g].page == p;
		PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::tid_page_fill((uint8 *) s->page.data, s->tid_bytes + s->page_start[p],
								s->page_used[p], groups, (uint16) p, segment_id);
		write_block(index, h->tid_blocks[p], s->page.data, writer, listed);
	}

	for (uint32 p = 0; p < h->key_pages; p++)
	{
		const uint32 per_page = bloomidx::key_rows_per_page(nkeys);
		const uint32 n = Min(per_page, nrows - p * per_page);

		PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::key_page_fill((uint8 *) s->page.data, rows->keys + (Size) p * per_page * nkeys,
								(uint16) n, (uint16) nkeys, (uint16) p, segment_id);
		write_block(index, h->live_block + 1 + h->ntid_pages + p, s->page.data, writer, listed);
	}

	/* The header, which names the others, last. */
	memset(entry, 0, sizeof(*entry));
	entry->header_block = first + need - 1;
	PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::segment_header_fill((uint8 *) s->page.data, *h);
	write_block(index, entry->header_block, s->page.data, writer, listed);

	entry->segment_id = segment_id;
	entry->first_slice = h->first_slice;
	entry->rows = (uint16) nrows;
	entry->live_rows = (uint16) nrows;
	entry->slices_per_page = h->slices_per_page;
	if (filters != NULL)
		write_own_group(index, filters, segment_id,
						group_after ? entry->header_block + 1 : InvalidBlockNumber, entry, writer,
						listed, &s->page);
	entry->check = bloomidx::segment_entry_check(*entry);
}

/*
 * Writes rows as the directory's next segment (dir: the seal lock
 * holder's copy), in blocks off its free list if an extent has enough,
 * and makes it the segment change adds.
 */
void
bloomidx_write_next_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
							const DirectoryCopy *dir, BlockNumber nblocks, SegmentFilters *filters,
							bool keep_keys, bloomidx::SegmentEntry *entry, DirectoryChange *change)
{
	bloomidx::FreeList list = dir->free;

	/* A damaged list could send the segment over pages in use. */
	bloomidx_check_free_list(index, dir, state->meta.signature_bits, nblocks);
	BlockWriter writer;

	bloomidx_block_writer_init(&writer, index, !RELATION_IS_LOCAL(index), false);
	bloomidx_write_segment(index, state, rows, dir->header.next_segment_id, &writer, &list, dir,
						   filters, keep_keys, &change->taken_blocks, entry);
	change->added = entry;
}
