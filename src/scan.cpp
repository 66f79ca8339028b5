/*
 * scan.cpp: bitmap scans.  The query's keys become one base mask (every
 * equality and IS NULL) and one list of element masks per IN list (=
 * ANY), of which one must match; every data page is read once, in order
 * (through a bulk-read ring for an index too big to stay cached, else
 * through buffer hints), and the TIDs of matching signatures go to the
 * bitmap marked recheck (a Bloom filter only says "maybe").
 */
#include "bloomidx.h"

#include "core/hash.hpp"
#include "core/in_list.hpp"
#include "core/positions.hpp"
#include "core/sizing.hpp"


typedef struct ScanOpaque
{
	BloomidxState state;
	MemoryContext query_cxt;	/* the masks of the current keys */
	bloomidx::SignatureMask base;	/* plain data: built by build_query */
	bloomidx::ElementMasks *lists;	/* one per IN list whose bits are tested */
	int			nlists;
	double		elements;		/* in those lists */
	SliceQuery	slices;			/* the same query as bit positions, for segments */
	FilterQuery filter;			/* and as column hashes, for segment filters */
	uint16		matches[bloomidx::kMaxPageEntries];
	Page		copy;			/* long IN lists: a page tested unlocked */
	double		column_rate[INDEX_MAX_KEYS];	/* -1: not computed yet */
	DirectoryCopy dir;
	SegmentScanWork *work;
	TidSink		sink;
} ScanOpaque;

/*
 * With IN lists of this many elements in all, a page is copied and
 * unlocked before it is tested, and interrupts are checked after every
 * kTestsPerCheck element tests (about a tenth of a millisecond): a list of
 * millions of elements takes seconds per page.
 */
static const double kCopyPageElements = 256;
static const double kTestsPerCheck = 1 << 18;

IndexScanDesc
bloomidx_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	ScanOpaque *so = (ScanOpaque *) palloc(sizeof(ScanOpaque));

	bloomidx_init_state(&so->state, index);
	so->query_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx scan query",
										  ALLOCSET_SMALL_SIZES);
	so->lists = NULL;
	so->nlists = 0;
	so->elements = 0;
	for (int i = 0; i < INDEX_MAX_KEYS; i++)
		so->column_rate[i] = -1;
	so->work = bloomidx_segment_scan_work();
	bloomidx_directory_copy_init(&so->dir);
	scan->opaque = so;
	return scan;
}

void
bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
				ScanKey orderbys, int norderbys)
{
	if (scankey && scan->numberOfKeys > 0)
		memmove(scan->keyData, scankey, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
bloomidx_endscan(IndexScanDesc scan)
{
	ScanOpaque *so = (ScanOpaque *) scan->opaque;

	MemoryContextDelete(so->query_cxt);
	pfree(so->work);
	if (so->dir.entries != NULL)
		pfree(so->dir.entries);
	pfree(so);
}

/*
 * The distinct hashes of the non-NULL elements of an = ANY key's array, in
 * a table (*hashes) that, with their masks of `stride` bytes, fits in
 * work_mem; returns how many, or -1 when they do not fit.  The array is
 * read in place, and a hash function's allocations (detoasting) are freed
 * after every element, so memory stays bounded whatever the list's length.
 */
static int64
in_list_hashes(ScanKey key, const ValueHasher *hasher, size_t stride, uint64 **hashes)
{
	ArrayType  *array = DatumGetArrayTypeP(key->sk_argument);
	int			items = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	size_t		slots = bloomidx::hash_set_slots(items, stride, (size_t) work_mem * 1024);
	uint64	   *table = slots > 0 ? (uint64 *)
		MemoryContextAllocHuge(CurrentMemoryContext, slots * sizeof(uint64)) : NULL;
	MemoryContext element_cxt = AllocSetContextCreate(CurrentMemoryContext,
													  "bloomidx IN list element",
													  ALLOCSET_SMALL_SIZES);
	ArrayIterator iterator = array_create_iterator(array, 0, NULL);
	bloomidx::HashSet set;
	Datum		value;
	bool		isnull;
	bool		fits = true;

	set.init(table, slots);
	while (fits && array_iterate(iterator, &value, &isnull))
	{
		if (isnull)
			continue;

		MemoryContext old = MemoryContextSwitchTo(element_cxt);
		uint64		hash = bloomidx_hash_value(hasher, value);

		MemoryContextSwitchTo(old);
		MemoryContextReset(element_cxt);
		fits = set.insert(hash);
		CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(iterator);
	MemoryContextDelete(element_cxt);
	if (!fits)
	{
		if (table)
			pfree(table);
		return -1;
	}
	*hashes = table;
	return (int64) set.compact();
}

/* Writes the positions of the bits set in sig (length bits); returns how many. */
static uint32
signature_positions(const uint8 *sig, uint32 length, uint16 *positions)
{
	uint32		n = 0;

	for (uint32 j = 0; j < length; j++)
		if (bloomidx::signature_test_bit(sig, j))
			positions[n++] = (uint16) j;
	return n;
}

/*
 * Adds an IN list of more than one distinct element to the scan's lists:
 * its masks, built from the hashes in slices, checking for
 * interrupts.
 */
static void
add_in_list(ScanOpaque *so, uint64 *hashes, int64 n, uint32 words, int column)
{
	const bloomidx::MetaPageData *meta = &so->state.meta;
	size_t		stride = bloomidx::element_mask_stride(words);
	uint8	   *masks = (uint8 *) MemoryContextAllocHuge(CurrentMemoryContext, n * stride);
	const int64 slice = 4096;

	uint32		bits = meta->column_bits[column];
	uint16	   *positions = (uint16 *) MemoryContextAllocHuge(CurrentMemoryContext,
															  n * bits * sizeof(uint16));

	for (int64 done = 0; done < n; done += slice)
	{
		bloomidx::build_element_masks(masks + done * stride, words, hashes + done,
									  Min(slice, n - done), meta->signature_bits,
									  bits, meta->signature_bytes);
		CHECK_FOR_INTERRUPTS();
	}
	/* The same elements as bit positions, for the segments' slices. */
	for (int64 i = 0; i < n; i++)
	{
		uint8		sig[bloomidx::kMaxSignatureBytes];

		memset(sig, 0, meta->signature_bytes);
		bloomidx::add_value(sig, meta->signature_bits, bits, hashes[i]);
		signature_positions(sig, meta->signature_bits, positions + i * bits);
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	so->slices.lists[so->nlists].positions = positions;
	so->slices.lists[so->nlists].count = (uint32) n;
	so->slices.lists[so->nlists].per_element = bits;
	so->slices.nlists = so->nlists + 1;
	/* The hashes stay for the segment filters (freed with the query), if they ask them. */
	if (n <= MAX_FILTER_HASHES)
		bloomidx_filter_query_add(&so->filter, column, hashes, (uint32) n);
	else
		pfree(hashes);
	so->lists[so->nlists].masks = masks;
	so->lists[so->nlists].count = (uint32) n;
	so->lists[so->nlists].words = words;
	so->nlists++;
	so->elements += n;
}

/*
 * The predicted false-positive rate of an equality on column `column`
 * alone, computed once per scan (core/sizing.cpp's exact model).
 */
static double
column_false_positive_rate(ScanOpaque *so, int column)
{
	if (so->column_rate[column] < 0)
		so->column_rate[column] = bloomidx::false_positive_rate(so->state.meta, 1u << column);
	return so->column_rate[column];
}

/* An equality's (or IS NULL's) hash, for the segment filters. */
static void
add_filter_hash(ScanOpaque *so, int column, uint64 hash)
{
	uint64	   *kept = (uint64 *) palloc(sizeof(uint64));

	*kept = hash;
	bloomidx_filter_query_add(&so->filter, column, kept, 1);
}

/*
 * Builds the masks from the scan keys, in the current memory context;
 * false when no row can match (an equality with NULL, an IN list of NULLs
 * or of nothing).
 */
static bool
add_keys(IndexScanDesc scan, ScanOpaque *so)
{
	const BloomidxState *state = &so->state;
	Relation	index = scan->indexRelation;
	uint32		m = state->meta.signature_bits;
	int			nbytes = state->meta.signature_bytes;
	uint8		query[bloomidx::kMaxSignatureBytes];

	so->lists = (bloomidx::ElementMasks *)
		palloc(Max(scan->numberOfKeys, 1) * sizeof(bloomidx::ElementMasks));
	so->nlists = 0;
	so->slices.lists = (SliceList *) palloc(Max(scan->numberOfKeys, 1) * sizeof(SliceList));
	so->slices.nlists = 0;
	so->slices.nbase = 0;
	so->filter.keys = (FilterKey *) palloc(Max(scan->numberOfKeys, 1) * sizeof(FilterKey));
	so->filter.nkeys = 0;
	so->elements = 0;
	so->copy = NULL;
	memset(query, 0, sizeof(query));

	for (int k = 0; k < scan->numberOfKeys; k++)
	{
		ScanKey		key = &scan->keyData[k];
		int			column = key->sk_attno - 1;
		uint32		bits;
		ValueHasher cross;

		if (column < 0 || column >= state->ncolumns)
			elog(ERROR, "bloomidx: scan key on column %d of a %d-column index",
				 key->sk_attno, state->ncolumns);
		bits = state->meta.column_bits[column];

		if (key->sk_flags & SK_ISNULL)
		{
			if (key->sk_flags & SK_SEARCHNULL)
			{
				bloomidx::add_value(query, m, bits, bloomidx::null_hash(column));
				add_filter_hash(so, column, bloomidx::null_hash(column));
			}
			else if (!(key->sk_flags & SK_SEARCHNOTNULL))
				return false;	/* "col = NULL" is never true */
			/* IS NOT NULL: no bits to test; the recheck decides */
			continue;
		}
		if (key->sk_strategy != BLOOMIDX_EQUAL_STRATEGY)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("bloomidx supports only equality, IN lists and IS NULL")));

		/*
		 * A cross-type key hashes with its own type's function from the
		 * column's family (support/value_hash.cpp); one that cannot hash as the column's
		 * values did tests no bits, and the recheck decides.
		 */
		const ValueHasher *hasher = bloomidx_key_hasher(index, state, column, key->sk_subtype,
														&cross);

		if (hasher == NULL)
			continue;
		if (!(key->sk_flags & SK_SEARCHARRAY))
		{
			uint64		hash = bloomidx_hash_value(hasher, key->sk_argument);

			bloomidx::add_value(query, m, bits, hash);
			add_filter_hash(so, column, hash);
			continue;
		}

		uint32		words = bloomidx::element_mask_words(nbytes, bits);
		uint64	   *hashes;
		int64		n = in_list_hashes(key, hasher, bloomidx::element_mask_stride(words), &hashes);

		if (n == 0)
			return false;		/* IN () or IN (NULL): nothing matches */
		if (n < 0)
			ereport(DEBUG1,
					(errmsg_internal("bloomidx: the IN list on column %d of index \"%s\" has more distinct values than work_mem holds; its bits are not tested, and the recheck decides",
									 column + 1, RelationGetRelationName(index))));
		else if (n > 1 &&
				 !bloomidx::in_list_worth_testing(n, column_false_positive_rate(so, column)))
		{
			/* Nearly every row would pass some element: testing them all is wasted. */
			pfree(hashes);
			ereport(DEBUG1,
					(errmsg_internal("bloomidx: the IN list on column %d of index \"%s\" has %lld distinct values, so many that most rows would pass one of them; its bits are not tested, and the recheck decides",
									 column + 1, RelationGetRelationName(index), (long long) n)));
		}
		else if (n == 1)
		{
			bloomidx::add_value(query, m, bits, hashes[0]);
			bloomidx_filter_query_add(&so->filter, column, hashes, 1);
		}
		else
			add_in_list(so, hashes, n, words, column);
	}
	so->base.build(query, nbytes);
	so->slices.nbase = signature_positions(query, m, so->slices.base);
	if (so->elements >= kCopyPageElements)
		so->copy = (Page) palloc(BLCKSZ);
	return true;
}

static bool
build_query(IndexScanDesc scan, ScanOpaque *so)
{
	MemoryContextReset(so->query_cxt);
	MemoryContext old = MemoryContextSwitchTo(so->query_cxt);
	bool		possible = add_keys(scan, so);

	MemoryContextSwitchTo(old);
	return possible;
}

/*
 * The entries of a data page that the query matches, in so->matches.  With
 * long IN lists the page is a copy, tested in slices with interrupt checks
 * between them.
 */
static int
match_page(ScanOpaque *so, const bloomidx::QueryMatcher *matcher, const uint8 *raw)
{
	const bloomidx::RowPageGeometry *g = &so->state.geometry;
	int			count = bloomidx::page_opaque(raw)->count;

	if (so->copy == NULL)
		return matcher->match_array(bloomidx::row_signatures(raw), count, so->matches);

	int			slice = (int) Max(1.0, kTestsPerCheck / so->elements);
	int			n = 0;

	for (int first = 0; first < count; first += slice)
	{
		int			k = matcher->match_array(bloomidx::row_signature(raw, *g, first),
											 Min(slice, count - first), so->matches + n);

		for (int i = n; i < n + k; i++)
			so->matches[i] += first;
		n += k;
		CHECK_FOR_INTERRUPTS();
	}
	return n;
}

/* Tests one pending page (share-locked in *buffer) and adds its matches. */
static void
scan_pending_page(Relation index, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
				  BlockNumber blkno, Buffer *buffer, Page page, Buffer next)
{
	const bloomidx::RowPageGeometry *g = &so->state.geometry;

	bloomidx_check_data_page(index, blkno, page, g, bloomidx::EntryChecks::Signatures);
	/* Interrupts are held off while a buffer is locked: long lists test a copy. */
	if (so->copy)
	{
		memcpy(so->copy, page, BLCKSZ);
		UnlockReleaseBuffer(*buffer);
		*buffer = InvalidBuffer;
		page = so->copy;
	}
	if (BufferIsValid(next))
		bloomidx::prefetch_row_page((const uint8 *) BufferGetPage(next), *g);

	const uint8 *raw = (const uint8 *) page;
	int			n = match_page(so, matcher, raw);

	if (n > 0)
		bloomidx_check_data_page_tids(index, blkno, page);
	for (int i = 0; i < n; i++)
	{
		ItemPointerData tid;

		memcpy(&tid, bloomidx::row_tid(raw, *g, so->matches[i]), sizeof(ItemPointerData));
		bloomidx_sink_add(index, &so->sink, blkno, so->matches[i], &tid);
	}
}

/*
 * One pass over the index: the segments and the pending pages of one copy
 * of the directory.  False when a page turned out reused since the copy:
 * the caller starts again (TIDs already added stay: the bitmap keeps each
 * once).
 */
static bool
scan_pass(IndexScanDesc scan, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
		  BufferAccessStrategy bas, BufferHints *hints)
{
	Relation	index = scan->indexRelation;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	bloomidx_read_directory(index, &nblocks, &so->dir);
	bloomidx_debug_pause(PAUSE_SCAN_DIRECTORY);

	uint32		generation = so->dir.header.generation;
	bool	   *skip = (bool *) palloc(Max(so->dir.header.nsegments, 1) * sizeof(bool));

	if (!bloomidx_filter_segments(index, &so->filter, &so->dir, (uint32) so->state.ncolumns,
								  nblocks, hints, skip))
	{
		pfree(skip);
		return false;
	}
	for (uint32 i = 0; i < so->dir.header.nsegments; i++)
	{
		if (skip[i])
			continue;
		if (!bloomidx_scan_segment(index, &so->slices, so->work, &so->dir.entries[i],
								   so->state.meta.signature_bits, generation, nblocks, hints,
								   &so->sink))
		{
			pfree(skip);
			return false;
		}
		CHECK_FOR_INTERRUPTS();
	}
	pfree(skip);

	/*
	 * The pending pages, in list order.  The next page is pinned before
	 * this one is tested, and its signatures prefetched, so that memory
	 * loads them meanwhile.
	 */
	BlockNumber blkno = so->dir.header.pending_head;
	BlockNumber visited = 0;
	uint32		walked = 0;
	Buffer		buffer = blkno != bloomidx::kMetaBlock
		? bloomidx_read_page(index, blkno, bas, hints) : InvalidBuffer;

	while (BufferIsValid(buffer))
	{
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);

		if (bloomidx_pending_page_recycled(index, blkno, &buffer, generation, &so->state.geometry))
			return false;
		walked++;

		BlockNumber next_blkno = bloomidx::pending_next((const uint8 *) page);
		Buffer		next = InvalidBuffer;

		if (next_blkno != bloomidx::kMetaBlock)
		{
			bloomidx_check_pending_link(index, blkno, next_blkno, &nblocks, &visited);
			next = bloomidx_read_page(index, next_blkno, bas, hints);
		}

		scan_pending_page(index, so, matcher, blkno, &buffer, page, next);
		if (BufferIsValid(buffer))
			UnlockReleaseBuffer(buffer);
		buffer = next;
		blkno = next_blkno;
		CHECK_FOR_INTERRUPTS();
	}
	return bloomidx_check_pending_count(index, &so->dir, walked);
}

int64
bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	ScanOpaque *so = (ScanOpaque *) scan->opaque;
	Relation	index = scan->indexRelation;

	/* Counted as btree counts: a scan whose keys can match no row reads nothing. */
	if (!build_query(scan, so))
		return 0;
	bloomidx_count_index_search(scan);

	bloomidx::QueryMatcher matcher(so->base, so->lists, so->nlists);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	/* The table's length, to reject TIDs past it (the executor locks it). */
	so->sink.tbm = tbm;
	so->sink.heap = relation_open(index->rd_index->indrelid, NoLock);
	so->sink.heap_blocks = RelationGetNumberOfBlocks(so->sink.heap);
	so->sink.n = 0;
	so->sink.found = 0;

	/*
	 * Like a sequential scan of a table: a bulk-read ring only for an index
	 * larger than a quarter of shared_buffers, so that a smaller one stays
	 * cached from scan to scan instead of being read again every time.
	 */
	BufferAccessStrategy bas = nblocks > (BlockNumber) (NBuffers / 4)
		? GetAccessStrategy(BAS_BULKREAD) : NULL;

	/*
	 * Buffer hints only for an index that stays cached (no ring) in shared
	 * buffers (a temporary index's local buffers are private and few).
	 */
	BufferHints *hints = bas == NULL && !RelationUsesLocalBuffers(index)
		? bloomidx_buffer_hints(index, nblocks) : NULL;

	while (!scan_pass(scan, so, &matcher, bas, hints))
	{
		elog(DEBUG1, "bloomidx: scan of index \"%s\" starts again: a seal or merge recycled a page it was to read",
			 RelationGetRelationName(index));
		CHECK_FOR_INTERRUPTS();
	}
	bloomidx_sink_flush(&so->sink);

	relation_close(so->sink.heap, NoLock);
	if (bas)
		FreeAccessStrategy(bas);
	return so->sink.found;
}
