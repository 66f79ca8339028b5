/*
 * segment_write.cpp: turning a block of rows (signatures and heap TIDs,
 * gathered in memory) into a sealed segment's pages, one extent of
 * consecutive blocks: m slice pages, the live page, the TID pages, the
 * header (src/segments.md has the protocol, core/page_layout.hpp the
 * formats).
 * Each page is written whole and WAL-logged whole; nothing points at the
 * segment until its directory entry is published.
 */
#include "bloomidx.h"

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
	rows->hashes = NULL;
	rows->scratch = NULL;
}

void
bloomidx_segment_rows_free(SegmentRows *rows)
{
	pfree(rows->signatures);
	pfree(rows->tids);
	if (rows->hashes)
		pfree(rows->hashes);
	if (rows->scratch)
		pfree(rows->scratch);
}

/* What writing a segment needs besides the rows, allocated on first use. */
typedef struct SegmentScratch
{
	uint64		slices[SLICE_BATCH][bloomidx::kSliceWords];
	uint64		live[bloomidx::kSliceWords];
	bloomidx::HeapTid tids[bloomidx::kSegmentRows];
	uint8		tid_bytes[bloomidx::segment_tid_bytes_bound(bloomidx::kSegmentRows)];
	uint32		page_start[bloomidx::kMaxTidPages];
	uint16		page_used[bloomidx::kMaxTidPages];
	bloomidx::SegmentHeader header;
	BloomidxIOBlock page;
} SegmentScratch;

/*
 * A block taken off the free list, about to be overwritten, must hold what
 * the list gives: a free, listed or new page, or a page of a segment that is not
 * in the directory, or not there: a segment a merge removed, or what a
 * seal or merge that failed or crashed before publishing left (its id is
 * the next segment's, as ids are only spent by a publish, so the page's id
 * may be a listed segment's whose extent is elsewhere).  A page inside a
 * listed segment's extent means the list is wrong, and writing would
 * destroy it.
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
 * Writes rows->nrows rows (1..kSegmentRows) as segment `segment_id` and
 * fills *entry, its directory entry (not published: the caller does).  The
 * segment takes one extent of consecutive blocks: its slices, its live
 * page, its TID pages and its header, in that order.  With a free list
 * (`list`, the caller's copy of the directory's, and `dir`, that
 * directory), the blocks come off it if an extent has enough (*taken: how
 * many, 0 if none), else from the end of the index.
 */
void
bloomidx_write_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
					   uint32 segment_id, const BlockWriter *writer, bloomidx::FreeList *list,
					   const DirectoryCopy *dir, uint32 *taken, bloomidx::SegmentEntry *entry)
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
	if (!bloomidx::segment_encode_tids(s->tids, nrows, s->tid_bytes, h, s->page_start,
									   s->page_used))
		elog(ERROR, "bloomidx: a heap TID out of range reached index \"%s\"",
			 RelationGetRelationName(index));

	/* Where: slices, live page, TID pages, header. */
	uint32		need = nslices + 2 + h->ntid_pages;
	BlockNumber first = list != NULL ? bloomidx::free_list_take(list, need) : 0;
	const DirectoryCopy *listed = first != 0 ? dir : NULL;

	*taken = first != 0 ? need : 0;
	if (first == 0)
		first = bloomidx_extend_run(index, need, writer);
	h->first_slice = first;
	h->live_block = first + nslices;
	for (uint32 p = 0; p < h->ntid_pages; p++)
		h->tid_blocks[p] = first + nslices + 1 + p;

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
			PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
			bloomidx::slice_page_fill((uint8 *) s->page.data, s->slices[j], (uint16) nrows,
									  (uint16) (at + j), segment_id);
			write_block(index, first + at + j, s->page.data, writer, listed);
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
	entry->check = bloomidx::segment_entry_check(*entry);
}

/*
 * Writes rows as the directory's next segment (dir: the seal lock
 * holder's copy), in blocks off its free list if an extent has enough,
 * and makes it the segment change adds.
 */
void
bloomidx_write_next_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
							const DirectoryCopy *dir, BlockNumber nblocks,
							bloomidx::SegmentEntry *entry, DirectoryChange *change)
{
	bloomidx::FreeList list = dir->free;

	/* A damaged list could send the segment over pages in use. */
	for (uint32 i = 0; i < list.count; i++)
		if (!bloomidx::free_extent_ok(list, i, state->meta.signature_bits, nblocks, dir->entries,
									  dir->header.nsegments))
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
										   psprintf("Extent %u of the metapage's free list overlaps pages in use.",
													i));
	BlockWriter writer;

	bloomidx_block_writer_init(&writer, index, !RELATION_IS_LOCAL(index), false);
	bloomidx_write_segment(index, state, rows, dir->header.next_segment_id, &writer, &list, dir,
						   &change->taken_blocks, entry);
	change->added = entry;
}
