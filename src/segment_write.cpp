/*
 * segment_write.cpp: turning a block of rows (signatures and heap TIDs,
 * gathered in memory) into a sealed segment's pages: the header, the live
 * page, the TID pages and one run of m consecutive slice pages
 * (src/segments.md has the protocol, core/page_layout.hpp the formats).
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
	rows->scratch = NULL;
}

void
bloomidx_segment_rows_free(SegmentRows *rows)
{
	pfree(rows->signatures);
	pfree(rows->tids);
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
	PGAlignedBlock page;
} SegmentScratch;

/* Writes `image` to the locked buffer, logs it whole and releases it. */
static void
write_page(Relation index, Buffer buffer, const char *image)
{
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buffer), image, BLCKSZ);
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
}

/*
 * Extends the index by n blocks in one run, returning the first; the
 * blocks are left new (zero) until written.  Beside other extenders
 * (parallel build participants, inserts), the extension lock keeps the run
 * consecutive.
 */
static BlockNumber
extend_run(Relation index, uint32 n, bool shared_extension)
{
	BlockNumber first = InvalidBlockNumber;

	if (shared_extension)
		LockRelationForExtension(index, ExclusiveLock);
	for (uint32 i = 0; i < n; i++)
	{
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
		BlockNumber blkno = BufferGetBlockNumber(buffer);

		ReleaseBuffer(buffer);
		if (i == 0)
			first = blkno;
		else if (blkno != first + i)
			elog(ERROR, "bloomidx: index \"%s\" grew by other means while a run of slices was added",
				 RelationGetRelationName(index));
	}
	if (shared_extension)
		UnlockRelationForExtension(index, ExclusiveLock);
	return first;
}

/*
 * A free page the free space map knows of (a freed segment or pending
 * page), locked; InvalidBuffer if none.  Only pages recorded wholly free
 * qualify (pending pages with room are the inserts'), and the page's kind
 * decides, under the lock, as an insert that took it first changed it.
 */
static Buffer
reuse_free_page(Relation index)
{
	for (int tries = 0; tries < 8; tries++)
	{
		/* The largest request there is: only pages recorded free (BLCKSZ - 1) have as much. */
		BlockNumber blkno = GetPageWithFreeSpace(index, MaxHeapTupleSize);

		if (blkno == InvalidBlockNumber)
			return InvalidBuffer;
		if (blkno != bloomidx::kMetaBlock && blkno < RelationGetNumberOfBlocks(index))
		{
			Buffer		buffer = ReadBuffer(index, blkno);

			/* No other buffer is locked here: waiting (for a reader, an insert) is safe. */
			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			const uint8 *page = (const uint8 *) BufferGetPage(buffer);

			if (PageIsNew((Page) page) ||
				bloomidx::check_free_page(page) == bloomidx::PageProblem::None)
			{
				RecordUsedIndexPage(index, blkno);
				return buffer;
			}
			UnlockReleaseBuffer(buffer);
		}
		RecordUsedIndexPage(index, blkno);	/* a stale hint: in use */
	}
	return InvalidBuffer;
}

/*
 * A page of a free run about to be overwritten must be what a run holds:
 * the slice of a removed segment, or a free or new page.  Anything else
 * means the run list is wrong, and writing would destroy what the page is.
 */
static void
check_run_page(Relation index, Buffer buffer)
{
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);

	if (PageIsNew((Page) page) || bloomidx::check_free_page(page) == bloomidx::PageProblem::None ||
		(bloomidx::page_opaque(page)->page_id == bloomidx::kPageId &&
		 bloomidx::page_opaque(page)->flags == bloomidx::kPageSlice))
		return;
	bloomidx_report_corrupted_page(index, BufferGetBlockNumber(buffer),
								   "A run of free slice pages in the metapage's list includes a page in use.");
}

/* A block for a header, live or TID page, locked: a free one, else a new one. */
static Buffer
new_page_buffer(Relation index, bool shared_extension)
{
	Buffer		buffer = reuse_free_page(index);

	if (BufferIsValid(buffer))
		return buffer;
	/* Locked before the extension lock goes: a new page is free to every other taker. */
	if (shared_extension)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (shared_extension)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}

/*
 * Writes rows->nrows rows (1..kSegmentRows) as segment `segment_id` and
 * fills *entry, its directory entry (not published: the caller does).  The
 * slices go to the free run at `run` (a run a removed segment left, which
 * the caller takes off the list when it publishes), or to a new run at the
 * end of the index (run InvalidBlockNumber).
 */
void
bloomidx_write_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
					   uint32 segment_id, bool shared_extension, BlockNumber run,
					   bloomidx::SegmentEntry *entry)
{
	const uint32 nrows = rows->nrows;
	const uint32 nslices = state->meta.signature_bits;
	const uint32 sig_bytes = state->meta.signature_bytes;

	Assert(nrows >= 1 && nrows <= bloomidx::kSegmentRows);
	if (rows->scratch == NULL)
		rows->scratch = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(SegmentScratch));
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

	/* The live bits, the TIDs, the slices; the header, which names them, last. */
	Buffer		live_buffer = new_page_buffer(index, shared_extension);

	memset(s->live, 0, sizeof(s->live));
	for (uint32 r = 0; r < nrows; r++)
		s->live[r / 64] |= UINT64CONST(1) << (r % 64);
	h->live_block = BufferGetBlockNumber(live_buffer);
	PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::live_page_fill((uint8 *) s->page.data, s->live, (uint16) nrows, segment_id);
	write_page(index, live_buffer, s->page.data);

	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		Buffer		buffer = new_page_buffer(index, shared_extension);
		uint16		groups = 0;

		for (uint32 g = 0; g < h->ngroups; g++)
			groups += h->groups[g].page == p;
		h->tid_blocks[p] = BufferGetBlockNumber(buffer);
		PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::tid_page_fill((uint8 *) s->page.data, s->tid_bytes + s->page_start[p],
								s->page_used[p], groups, (uint16) p, segment_id);
		write_page(index, buffer, s->page.data);
	}

	h->first_slice = BlockNumberIsValid(run) ? run : extend_run(index, nslices, shared_extension);
	for (uint32 first = 0; first < nslices; first += SLICE_BATCH)
	{
		uint32		n = Min((uint32) SLICE_BATCH, nslices - first);
		uint64	   *ptrs[SLICE_BATCH];

		memset(s->slices, 0, (Size) n * sizeof(s->slices[0]));
		for (uint32 j = 0; j < n; j++)
			ptrs[j] = s->slices[j];
		/* A batch starts at a byte: bits first.. of each signature. */
		bloomidx::transpose_signatures(rows->signatures + first / 8, sig_bytes, nrows,
									   sig_bytes - first / 8, n, ptrs);
		for (uint32 j = 0; j < n; j++)
		{
			Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, h->first_slice + first + j,
													RBM_NORMAL, NULL);

			LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
			if (BlockNumberIsValid(run))
				check_run_page(index, buffer);
			PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
			bloomidx::slice_page_fill((uint8 *) s->page.data, s->slices[j], (uint16) nrows,
									  (uint16) (first + j), segment_id);
			write_page(index, buffer, s->page.data);
		}
		CHECK_FOR_INTERRUPTS();
	}

	Buffer		header_buffer = new_page_buffer(index, shared_extension);

	memset(entry, 0, sizeof(*entry));
	entry->header_block = BufferGetBlockNumber(header_buffer);
	PageInit((Page) s->page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::segment_header_fill((uint8 *) s->page.data, *h);
	write_page(index, header_buffer, s->page.data);

	entry->segment_id = segment_id;
	entry->first_slice = h->first_slice;
	entry->rows = (uint16) nrows;
	entry->live_rows = (uint16) nrows;
	entry->check = bloomidx::segment_entry_check(*entry);
}

/*
 * Writes rows as the directory's next segment (dir: the seal lock
 * holder's copy), its slices in the last free run listed if there is one,
 * and makes it the segment change adds.
 */
void
bloomidx_write_next_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
							const DirectoryCopy *dir, BlockNumber nblocks,
							bloomidx::SegmentEntry *entry, DirectoryChange *change)
{
	BlockNumber run = bloomidx_free_run(index, dir, nblocks);

	bloomidx_write_segment(index, state, rows, dir->header.next_segment_id,
						   !RELATION_IS_LOCAL(index), run, entry);
	change->added = entry;
	change->added_in_run = BlockNumberIsValid(run);
}
