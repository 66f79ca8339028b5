/*
 * segment_scan.cpp: a query over one sealed segment (storage/README.md).
 *
 * The slices of the query's base positions are ANDed, a few slice pages
 * at a time (each locked and its sum checked while the core reads it),
 * then with each IN list's OR over its elements (in one pass of the core
 * when the lists' slices can all be locked at once, else element by
 * element); the core drops every 512-row line already zero, so once few
 * rows are left the remaining slices are barely read.  Only then, if rows
 * are left, the header and the live bits are read.  Only the candidates'
 * TID groups are decoded.
 *
 * Every page is checked against the directory entry it was reached from.
 * A page that belongs elsewhere means either damage or that the segment
 * was replaced and its pages reused since the scan copied the directory;
 * the directory's generation tells which, and in the second case the scan
 * starts again (the caller does).
 */
#include "storage/storage.h"

/*
 * Slice pages locked at once: of the base positions; of the IN lists, in
 * one pass.  The base positions' first pass takes FIRST_SLICES at once
 * (fewer almost never leave no row, so one by one would only cost passes); then
 * one slice at a time, so that a segment whose candidates run out stops
 * reading: a segment that holds each of a 2-column query's values, in
 * different rows (common in a big table: data set A's values recur every
 * million rows), is ruled out after about 9 of the query's 14 slices.
 */
#define FIRST_SLICES 4
#define LIST_SLICES_AT_ONCE 64

struct SegmentScanWork
{
	bloomidx::SegmentHeader header;
	uint64		cur[bloomidx::kSliceWords];	/* rows still candidates */
	uint64		result[bloomidx::kSliceWords];	/* and_slices' answer */
	uint64		next[bloomidx::kSliceWords];	/* and_slices' scratch */
	uint64		any[bloomidx::kSliceWords]; /* an IN list's OR so far */
	/* The IN lists in one pass: the slice pages locked, and each element's slices. */
	Buffer		list_buffers[LIST_SLICES_AT_ONCE];
	const uint64 *element_words[LIST_SLICES_AT_ONCE];
	bloomidx::SliceAnd elements[LIST_SLICES_AT_ONCE];
	bloomidx::SliceOr ors[INDEX_MAX_KEYS];
	Buffer		tid_buffer;		/* the TID page last read, pinned; InvalidBuffer: none */
	int			tid_page_index; /* its index in header.tid_blocks; -1: none */
	int			group;			/* the group decoded into group_tids; -1: none */
	bloomidx::HeapTid group_tids[bloomidx::kTidGroupRows];
};

/* The backend's, from its scan scratch (support.h): the caller's until its amgetbitmap returns. */
SegmentScanWork *
bloomidx_segment_scan_work(void)
{
	return (SegmentScanWork *) bloomidx_scan_scratch(SCRATCH_SEGMENT_WORK, sizeof(SegmentScanWork));
}

/*
 * Slice pages and_slices keeps pinned, unlocked, from one pass to the
 * next.  Packed slices share pages (a segment of 1,024 rows holds its
 * slices in two), and the one-slice passes after the first would pin
 * such a page again for each of its slices: a 2-column query over a
 * small segment its filters let through pinned 3 pages 10 times.  A page
 * taken again is locked and checked again (another backend may have
 * recycled it meanwhile: a pin keeps it in its buffer, not unchanged);
 * only its pin is saved.
 */
#define KEPT_SLICE_PAGES 8

typedef struct SlicePins
{
	uint32		n;
	Buffer		buffers[KEPT_SLICE_PAGES];
} SlicePins;

/* Keeps buffer's pin (its lock let go) in *pins, one of the others let go when full. */
static void
keep_slice_pin(SlicePins *pins, Buffer buffer)
{
	if (pins->n == KEPT_SLICE_PAGES)
	{
		ReleaseBuffer(pins->buffers[0]);
		memmove(&pins->buffers[0], &pins->buffers[1], (KEPT_SLICE_PAGES - 1) * sizeof(Buffer));
		pins->n--;
	}
	pins->buffers[pins->n++] = buffer;
}

/* Takes the pin on block blkno out of *pins: InvalidBuffer when none is kept. */
static Buffer
take_slice_pin(SlicePins *pins, BlockNumber blkno)
{
	for (uint32 i = 0; pins != NULL && i < pins->n; i++)
		if (BufferGetBlockNumber(pins->buffers[i]) == blkno)
		{
			Buffer		buffer = pins->buffers[i];

			pins->buffers[i] = pins->buffers[--pins->n];
			return buffer;
		}
	return InvalidBuffer;
}

static void
release_slice_pins(SlicePins *pins)
{
	for (uint32 i = 0; i < pins->n; i++)
		ReleaseBuffer(pins->buffers[i]);
	pins->n = 0;
}

/*
 * The bits of slice j of the segment in *words: its page pinned,
 * share-locked and checked (its sum once per page image, where the hints
 * allow), unless one of buffers[0..*nlocked) holds it already (packed
 * slices share pages); else locked into buffers[*nlocked], *nlocked one
 * more, and locked whatever the answer: the caller releases them.  The
 * pin is taken from *pins when it keeps the page's (pins may be NULL).
 * *blkno: the page's block.
 */
static bloomidx::PageProblem
lock_slice(Relation index, const bloomidx::SegmentEntry *e, uint16 j, BufferHints *hints,
		   SlicePins *pins, Buffer *buffers, uint32 *nlocked, const uint64 **words,
		   BlockNumber *blkno)
{
	bloomidx::SliceSpot spot = bloomidx::slice_spot(j, e->rows, e->slices_per_page);

	*blkno = e->first_slice + spot.page;
	for (uint32 i = 0; i < *nlocked; i++)
		if (BufferGetBlockNumber(buffers[i]) == *blkno)
		{
			*words = bloomidx::slice_page_words((const uint8 *) BufferGetPage(buffers[i])) + spot.word;
			return bloomidx::PageProblem::None;
		}

	Buffer		buffer = take_slice_pin(pins, *blkno);

	if (!BufferIsValid(buffer))
		buffer = bloomidx_read_page(index, *blkno, NULL, hints);
	buffers[(*nlocked)++] = buffer;
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	Page		page = BufferGetPage(buffer);
	bloomidx::PageProblem problem =
		bloomidx_check_page(hints, *blkno, page, [&](bloomidx::Sums sums) {
			return bloomidx::check_slice_page((const uint8 *) page, e->rows, (uint16) spot.first,
											  e->segment_id, sums);
		});

	*words = bloomidx::slice_page_words((const uint8 *) page) + spot.word;
	return problem;
}

/*
 * Asks for the slice pages of `positions` (bloomidx_prefetch_page), each
 * page once where consecutive positions share it (packed slices).
 */
static void
prefetch_slices(Relation index, const bloomidx::SegmentEntry *e, const uint16 *positions,
				uint32 n, BlockNumber nblocks, const BufferHints *hints)
{
	BlockNumber last = InvalidBlockNumber;

	for (uint32 i = 0; i < n; i++)
	{
		BlockNumber blkno = e->first_slice +
			bloomidx::slice_spot(positions[i], e->rows, e->slices_per_page).page;

		if (blkno != last)
			(void) bloomidx_prefetch_page(index, blkno, nblocks, hints);
		last = blkno;
	}
}

/*
 * result = work->cur AND the slices of `positions`; *candidates: how many
 * rows are left (nonzero, not counted, when there are no positions).
 * prefetch: once the first slices leave rows, ask for the rest's pages.
 * False when a slice page failed its check and was recycled.
 */
static bool
and_slices(Relation index, SegmentScanWork *work, const bloomidx::SegmentEntry *e,
		   const uint16 *positions, uint32 npositions, uint64 *result, uint32 generation,
		   BufferHints *hints, bool prefetch, BlockNumber nblocks, uint32 *candidates,
		   bool *recycled)
{
	SlicePins	pins = {0, {}};

	memcpy(result, work->cur, sizeof(work->cur));
	*candidates = 1;
	for (uint32 first = 0, n; first < npositions && *candidates > 0; first += n)
	{
		n = Min(first == 0 ? (uint32) FIRST_SLICES : 1, npositions - first);
		Buffer		buffers[FIRST_SLICES];
		const uint64 *slices[FIRST_SLICES];
		uint32		locked = 0;
		bloomidx::PageProblem problem = bloomidx::PageProblem::None;
		BlockNumber bad = InvalidBlockNumber;

		for (uint32 i = 0; i < n; i++)
		{
			problem = lock_slice(index, e, positions[first + i], hints, &pins, buffers, &locked,
								 &slices[i], &bad);
			if (problem != bloomidx::PageProblem::None)
				break;
		}
		if (problem == bloomidx::PageProblem::None)
		{
			bloomidx::SliceAnd and_ = {slices, n};

			/* live = the running result, out = the next one */
			memcpy(work->next, result, sizeof(work->next));
			*candidates = bloomidx::match_slices(and_, NULL, 0, work->next, e->rows, result);
		}
		for (uint32 i = 0; i < locked; i++)
		{
			LockBuffer(buffers[i], BUFFER_LOCK_UNLOCK);
			keep_slice_pin(&pins, buffers[i]);
		}
		if (problem != bloomidx::PageProblem::None)
		{
			release_slice_pins(&pins);
			*recycled = bloomidx_page_was_recycled(index, bad, generation, problem);
			return false;
		}
		if (prefetch && first == 0 && *candidates > 0 && npositions > n)
			prefetch_slices(index, e, positions + n, npositions - n, nblocks, hints);
	}
	release_slice_pins(&pins);
	return true;
}

/*
 * Whether element i of list l is tested in this segment: all are, but
 * those of a list asked of the filters that the segment's filters ruled
 * out (filter_scan.cpp; `elements`, the segment's element mask): a row
 * holding such an element would have passed its filter.
 */
static inline bool
element_tested(const uint64 *elements, const bloomidx::SliceQuery *query, int l, uint32 i)
{
	return bloomidx::element_may_hold(elements, query->lists[l], i);
}

/*
 * work->cur = work->cur AND every IN list's OR of its elements' ANDs, in
 * one pass of the core over the segment's lines (no copy of the rows per
 * element), with every slice the lists test locked at once; *candidates:
 * the rows left.  Only for lists of at most LIST_SLICES_AT_ONCE slices in
 * all.  False when a slice page failed its check and was recycled.
 */
static bool
match_lists(Relation index, SegmentScanWork *work, const bloomidx::SliceQuery *query,
			const uint64 *elements, const bloomidx::SegmentEntry *e, uint32 generation,
			BufferHints *hints, uint32 *candidates, bool *recycled)
{
	uint32		nlocked = 0,
				nwords = 0,
				nelements = 0;
	bloomidx::PageProblem problem = bloomidx::PageProblem::None;
	BlockNumber bad = InvalidBlockNumber;

	for (int l = 0; l < query->nlists && problem == bloomidx::PageProblem::None; l++)
	{
		const bloomidx::SliceList *list = &query->lists[l];

		work->ors[l].elements = &work->elements[nelements];
		work->ors[l].count = 0;
		for (uint32 i = 0; i < list->count && problem == bloomidx::PageProblem::None; i++)
		{
			if (!element_tested(elements, query, l, i))
				continue;
			work->ors[l].count++;
			work->elements[nelements].slices = &work->element_words[nwords];
			work->elements[nelements].count = list->per_element;
			nelements++;
			for (uint32 k = 0; k < list->per_element; k++)
			{
				uint16		j = list->positions[(Size) i * list->per_element + k];

				/* Elements share slices, and slices pages: each page is locked once. */
				problem = lock_slice(index, e, j, hints, NULL, work->list_buffers, &nlocked,
									 &work->element_words[nwords++], &bad);
				if (problem != bloomidx::PageProblem::None)
					break;
			}
		}
	}
	if (problem == bloomidx::PageProblem::None)
	{
		const bloomidx::SliceAnd none = {NULL, 0};

		*candidates = bloomidx::match_slices(none, work->ors, (uint32) query->nlists, work->cur,
											 e->rows, work->result);
		memcpy(work->cur, work->result, sizeof(work->cur));
	}
	for (uint32 i = 0; i < nlocked; i++)
		UnlockReleaseBuffer(work->list_buffers[i]);
	if (problem != bloomidx::PageProblem::None)
	{
		*recycled = bloomidx_page_was_recycled(index, bad, generation, problem);
		return false;
	}
	return true;
}

/* Slices the IN lists of a query test here, each element's counted. */
static uint64
list_slices(const bloomidx::SliceQuery *query, const uint64 *elements)
{
	uint64		n = 0;

	for (int l = 0; l < query->nlists; l++)
	{
		const bloomidx::SliceList *list = &query->lists[l];

		n += (uint64) bloomidx::elements_held(elements, *list) * list->per_element;
	}
	return n;
}

/* Whether the IN lists are matched in one pass (match_lists), every slice locked at once. */
static bool
lists_in_one_pass(const bloomidx::SliceQuery *query, const uint64 *elements)
{
	return query->nlists > 0 && query->nlists <= INDEX_MAX_KEYS &&
		list_slices(query, elements) <= LIST_SLICES_AT_ONCE;
}

/* Asks for the slice pages of the IN lists' elements that are tested here. */
static void
prefetch_list_slices(Relation index, const bloomidx::SliceQuery *query, const uint64 *elements,
					 const bloomidx::SegmentEntry *e, BlockNumber nblocks, const BufferHints *hints)
{
	for (int l = 0; l < query->nlists; l++)
	{
		const bloomidx::SliceList *list = &query->lists[l];

		for (uint32 i = 0; i < list->count; i++)
			if (element_tested(elements, query, l, i))
				prefetch_slices(index, e, list->positions + (Size) i * list->per_element,
								list->per_element, nblocks, hints);
	}
}

/*
 * Asks for the pages the scan of segment e reads whatever its rows: the
 * slices of the first FIRST_SLICES base positions (read together), or of the IN
 * lists read in one pass where there are no base positions.  What is read
 * only while rows are left is asked for once they are (bloomidx_scan_segment):
 * a page asked for and then not read would be asked for by every scan.
 */
void
bloomidx_prefetch_segment(Relation index, const bloomidx::SliceQuery *query,
						  const uint64 *elements, const bloomidx::SegmentEntry *e,
						  BlockNumber nblocks, const BufferHints *hints)
{
	if (e->live_rows == 0)
		return;					/* not read (bloomidx_scan_segment) */
	prefetch_slices(index, e, query->base, Min(query->nbase, (uint32) FIRST_SLICES), nblocks,
					hints);
	if (query->nbase == 0 && lists_in_one_pass(query, elements))
		prefetch_list_slices(index, query, elements, e, nblocks, hints);
}

/*
 * Asks for the TID pages of the candidate rows (work->cur) ahead of their
 * decoding, row by row: a group is a word of work->cur.
 */
static void
prefetch_tid_pages(Relation index, const SegmentScanWork *work, BlockNumber nblocks,
				   const BufferHints *hints)
{
	const bloomidx::SegmentHeader *h = &work->header;
	uint32		last = UINT32_MAX;

	static_assert(bloomidx::kTidGroupRows == 64, "a TID group is a word of candidate bits");
	for (uint32 w = 0; w < bloomidx::kSliceWords && w < h->ngroups; w++)
	{
		uint32		p = h->groups[w].page;

		if (work->cur[w] == 0 || p == last || p >= h->ntid_pages || p >= bloomidx::kMaxTidPages)
			continue;
		(void) bloomidx_prefetch_page(index, h->tid_blocks[p], nblocks, hints);
		last = p;
	}
}

/*
 * Reads and checks page blkno of the segment (its header or its live page,
 * as kind says) into dst; false: recycled.  (TID pages are decoded where
 * they lie: decode_group.)
 */
bool
bloomidx_copy_segment_page(Relation index, BlockNumber blkno, BufferHints *hints,
						   uint32 generation, char *dst, const bloomidx::SegmentEntry *e,
						   uint32 nslices, BlockNumber nblocks, int kind)
{
	Buffer		buffer = bloomidx_read_page(index, blkno, NULL, hints);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	int			natts = RelationGetNumberOfAttributes(index);
	bloomidx::PageProblem problem =
		bloomidx_check_page(hints, blkno, (Page) page, [&](bloomidx::Sums sums) {
			if (kind == bloomidx::kPageSegment)
				return bloomidx::check_segment_page(page, e->segment_id, e->rows, e->first_slice,
													nslices, e->slices_per_page, natts, blkno,
													nblocks, sums);
			return bloomidx::check_live_page(page, e->rows, e->segment_id, sums);
		});

	if (problem == bloomidx::PageProblem::None)
	{
		if (kind == bloomidx::kPageSegment)
			memcpy(dst, bloomidx::segment_header(page), sizeof(bloomidx::SegmentHeader));
		else
			memcpy(dst, bloomidx::slice_page_words(page), bloomidx::kSliceWords * sizeof(uint64));
	}
	UnlockReleaseBuffer(buffer);
	if (problem != bloomidx::PageProblem::None)
		return !bloomidx_page_was_recycled(index, blkno, generation, problem);
	return true;
}

/* Lets go of the TID page row_tid keeps pinned, if any. */
static void
release_tid_page(SegmentScanWork *work)
{
	if (BufferIsValid(work->tid_buffer))
		ReleaseBuffer(work->tid_buffer);
	work->tid_buffer = InvalidBuffer;
	work->tid_page_index = -1;
}

/*
 * Decodes TID group g of the segment (header h) into work->group_tids,
 * from its TID page, read and checked when it is not the one kept pinned,
 * and share-locked while decoded: a segment's candidates decode one group
 * after another page by page, and copying the page for each (8 kB) took
 * as long as reading it.  False: the page was recycled.
 */
static bool
decode_group(Relation index, SegmentScanWork *work, const bloomidx::SegmentEntry *e, int g,
			 uint32 generation, BufferHints *hints)
{
	const bloomidx::SegmentHeader *h = &work->header;
	int			p = h->groups[g].page;
	BlockNumber blkno = h->tid_blocks[p];
	bool		first = p != work->tid_page_index;

	if (first)
	{
		release_tid_page(work);
		work->tid_buffer = bloomidx_read_page(index, blkno, NULL, hints);
	}
	LockBuffer(work->tid_buffer, BUFFER_LOCK_SHARE);

	const uint8 *page = (const uint8 *) BufferGetPage(work->tid_buffer);

	if (first)
	{
		bloomidx::PageProblem problem =
			bloomidx_check_page(hints, blkno, (Page) page, [&](bloomidx::Sums sums) {
				return bloomidx::check_tid_page(page, *h, (uint16) p, sums);
			});

		if (problem != bloomidx::PageProblem::None)
		{
			LockBuffer(work->tid_buffer, BUFFER_LOCK_UNLOCK);
			release_tid_page(work);
			return !bloomidx_page_was_recycled(index, blkno, generation, problem);
		}
		work->tid_page_index = p;
	}

	uint32		decoded = bloomidx::tid_page_group(*h, page, (uint32) g, work->group_tids);

	LockBuffer(work->tid_buffer, BUFFER_LOCK_UNLOCK);
	if (decoded == 0)
		bloomidx_report_corrupted_page(index, blkno,
									   psprintf("TID group %d of segment %u cannot be decoded.",
												g, e->segment_id));
	work->group = g;
	return true;
}

/* The heap TID of candidate row r, decoding its group if needed. */
static bool
row_tid(Relation index, SegmentScanWork *work, const bloomidx::SegmentEntry *e, uint32 r,
		uint32 generation, BufferHints *hints, ItemPointerData *tid)
{
	int			g = (int) (r / bloomidx::kTidGroupRows);

	if (g != work->group && !decode_group(index, work, e, g, generation, hints))
		return false;

	const bloomidx::HeapTid *t = &work->group_tids[r % bloomidx::kTidGroupRows];

	ItemPointerSet(tid, t->block, t->offset);
	return true;
}

/*
 * Adds the segment's rows that the query may match to the sink.  False
 * when the segment's pages were reused since the directory copy of
 * `generation` was taken: the scan must start again.  prefetch: the scan
 * reads ahead (the caller asked for the first pages); then what is read
 * only while rows are left is asked for once they are: the rest of the
 * slices, the IN lists', the candidates' TID pages.
 */
bool
bloomidx_scan_segment(Relation index, const bloomidx::SliceQuery *query, const uint64 *elements,
					  SegmentScanWork *work, const bloomidx::SegmentEntry *e, uint32 nslices,
					  uint32 generation, BlockNumber nblocks, BufferHints *hints, bool prefetch,
					  TidSink *sink)
{
	bool		recycled = false;
	uint32		candidates;

	/*
	 * Every row a candidate at first: the slices are checked against the
	 * directory entry, and bounded by its row count, without the header.
	 * The header (it names the live page and the TID pages) and the live
	 * page are read only once rows are left, so that a segment that passes
	 * the filters by chance and has no row left after its slices costs
	 * neither (after churn, most segments have dead rows).
	 */
	work->tid_buffer = InvalidBuffer;
	work->tid_page_index = -1;
	work->group = -1;
	if (e->live_rows == 0)
		return true;			/* all dead: left for VACUUM's merge */
	memset(work->cur, 0xFF, sizeof(work->cur));

	if (!and_slices(index, work, e, query->base, query->nbase, work->result, generation, hints,
					prefetch, nblocks, &candidates, &recycled))
		return false;
	memcpy(work->cur, work->result, sizeof(work->cur));

	/* Short IN lists in one pass; longer ones element by element. */
	bool		one_pass = lists_in_one_pass(query, elements);

	if (one_pass && candidates > 0 && prefetch && query->nbase > 0)
		prefetch_list_slices(index, query, elements, e, nblocks, hints);
	if (one_pass && candidates > 0 &&
		!match_lists(index, work, query, elements, e, generation, hints, &candidates, &recycled))
		return false;
	for (int l = 0; !one_pass && l < query->nlists && candidates > 0; l++)
	{
		const bloomidx::SliceList *list = &query->lists[l];

		memset(work->any, 0, sizeof(work->any));
		for (uint32 i = 0; i < list->count; i++)
		{
			uint32		found;

			if (!element_tested(elements, query, l, i))
				continue;
			if (!and_slices(index, work, e, list->positions + (Size) i * list->per_element,
							list->per_element, work->result, generation, hints, false, nblocks,
							&found, &recycled))
				return false;
			if (found > 0)
				for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
					work->any[w] |= work->result[w];
			CHECK_FOR_INTERRUPTS();
		}
		candidates = 0;
		for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
		{
			work->cur[w] = work->any[w];
			candidates += (uint32) pg_popcount64(work->any[w]);
		}
	}
	if (query->nbase == 0 && query->nlists == 0)
	{
		/* No bits tested (IS NOT NULL): every live row, bounded by the row count. */
		candidates = 0;
		for (uint32 r = e->rows; r < bloomidx::kSegmentRows; r++)
			work->cur[r / 64] &= ~(UINT64CONST(1) << (r % 64));
		for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
			candidates += (uint32) pg_popcount64(work->cur[w]);
	}
	if (candidates == 0)
		return true;
	if (!bloomidx_copy_segment_page(index, e->header_block, hints, generation,
									(char *) &work->header, e, nslices, nblocks,
									bloomidx::kPageSegment))
		return false;
	if (e->live_rows != e->rows)
	{
		/* The dead rows out (work->any is free once the IN lists are matched). */
		if (!bloomidx_copy_segment_page(index, work->header.live_block, hints, generation,
										(char *) work->any, e, nslices, nblocks,
										bloomidx::kPageLive))
			return false;
		candidates = 0;
		for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
		{
			work->cur[w] &= work->any[w];
			candidates += (uint32) pg_popcount64(work->cur[w]);
		}
		if (candidates == 0)
			return true;
	}
	if (prefetch)
		prefetch_tid_pages(index, work, nblocks, hints);

	for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
	{
		uint64		bits = work->cur[w];

		while (bits != 0)
		{
			uint32		r = w * 64 + (uint32) pg_rightmost_one_pos64(bits);
			ItemPointerData tid;

			bits &= bits - 1;
			if (!row_tid(index, work, e, r, generation, hints, &tid))
				return false;
			bloomidx_sink_add(index, sink, work->header.tid_blocks[work->tid_page_index], r,
							  &tid);
		}
	}
	release_tid_page(work);
	return true;
}
