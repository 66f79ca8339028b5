/*
 * scan.cpp: bitmap scans.  The scan keys become (column, hashes) keys, one
 * hash for an equality or IS NULL, an IN list's (= ANY) distinct elements,
 * from which the core builds the whole query in one call (core/query.hpp:
 * the base mask, the IN lists' element masks, the same as bit positions
 * for the segments' slices, the keys asked of the segment filters).  Every
 * pending page is read in list order, each row tested; then the filters
 * rule segments out, and each segment left is read slice by slice
 * (storage/segment_scan.cpp).  The index is read through a bulk-read ring
 * when too big to stay cached, else through buffer hints.  The TIDs of
 * matching rows go to the bitmap marked recheck (a Bloom filter only says
 * "maybe").
 */
#include "bloomidx.h"

#include "core/hash.hpp"
#include "core/in_list.hpp"
#include "core/query.hpp"

typedef struct ScanOpaque
{
	BloomidxState state;
	MemoryContext query_cxt;	/* the current keys' hashes, and the query's memory */
	bloomidx::Query query;		/* plain data: built by build_query */
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

/* Passes a scan makes before it holds off seals and merges (bloomidx_getbitmap). */
#define SCAN_RESTARTS_UNLOCKED 1
static const double kTestsPerCheck = 1 << 18;

IndexScanDesc
bloomidx_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	ScanOpaque *so = (ScanOpaque *) palloc(sizeof(ScanOpaque));

	bloomidx_init_state(&so->state, index);
	so->query_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx scan query",
										  ALLOCSET_SMALL_SIZES);
	for (int i = 0; i < INDEX_MAX_KEYS; i++)
		so->column_rate[i] = -1;
	so->work = NULL;			/* the backend's, at each amgetbitmap call */
	bloomidx_directory_copy_init_scratch(&so->dir);
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

	/* so->work and so->dir's entries are the backend's scan scratch (support.h). */
	MemoryContextDelete(so->query_cxt);
	pfree(so);
}

/*
 * The distinct hashes of the non-NULL elements of an = ANY key's array, in
 * a table (*hashes) that, with what the query keeps of each (`stride`
 * bytes: its mask and slice positions), fits in work_mem; returns how
 * many, or -1 when they do not fit.  The array is read in place, and a
 * hash function's allocations (detoasting) are freed after every element,
 * so memory stays bounded whatever the list's length.
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

/*
 * Builds the query from the scan keys, in the current memory context;
 * false when no row can match (an equality with NULL, an IN list of NULLs
 * or of nothing).
 */
static bool
add_keys(IndexScanDesc scan, ScanOpaque *so)
{
	const BloomidxState *state = &so->state;
	Relation	index = scan->indexRelation;
	bloomidx::QueryKey *keys = (bloomidx::QueryKey *)
		palloc(Max(scan->numberOfKeys, 1) * sizeof(bloomidx::QueryKey));
	int			nkeys = 0;

	so->copy = NULL;
	for (int k = 0; k < scan->numberOfKeys; k++)
	{
		ScanKey		key = &scan->keyData[k];
		int			column = key->sk_attno - 1;
		ValueHasher cross;

		if (column < 0 || column >= state->ncolumns)
			elog(ERROR, "bloomidx: scan key on column %d of a %d-column index",
				 key->sk_attno, state->ncolumns);

		if (key->sk_flags & SK_ISNULL)
		{
			if (key->sk_flags & SK_SEARCHNULL)
			{
				uint64	   *hash = (uint64 *) palloc(sizeof(uint64));

				*hash = bloomidx::null_hash(column);
				keys[nkeys++] = bloomidx::QueryKey{column, hash, 1};
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
		 * column's family (support/value_hash.cpp); one that cannot hash as
		 * the column's values did tests no bits, and the recheck decides.
		 */
		const ValueHasher *hasher = bloomidx_key_hasher(index, state, column, key->sk_subtype,
														&cross);

		if (hasher == NULL)
			continue;
		if (!(key->sk_flags & SK_SEARCHARRAY))
		{
			uint64	   *hash = (uint64 *) palloc(sizeof(uint64));

			*hash = bloomidx_hash_value(hasher, key->sk_argument);
			keys[nkeys++] = bloomidx::QueryKey{column, hash, 1};
			continue;
		}

		uint64	   *hashes = NULL;
		int64		n = in_list_hashes(key, hasher,
									   bloomidx::list_element_bytes(state->meta, column),
									   &hashes);

		if (n == 0)
			return false;		/* IN () or IN (NULL): nothing matches */
		/* More than work_mem holds: no hashes, which the core does not test. */
		keys[nkeys++] = bloomidx::QueryKey{column, hashes, (uint32) Max(n, 0)};
	}

	bloomidx::KeyUse *uses = (bloomidx::KeyUse *) palloc(Max(nkeys, 1) * sizeof(bloomidx::KeyUse));
	size_t		bytes = bloomidx::plan_query(state->meta, keys, nkeys, uses, so->column_rate,
											 &so->query);

	for (int k = 0; k < nkeys; k++)
	{
		if (uses[k] != bloomidx::KeyUse::TooCommon)
			continue;
		/* Its hashes are not needed: memory stays near one list's work_mem. */
		if (keys[k].nhashes > 1)
			pfree((void *) keys[k].hashes);
		if (keys[k].nhashes == 0)
			ereport(DEBUG1,
					(errmsg_internal("bloomidx: the IN list on column %d of index \"%s\" has more distinct values than work_mem holds; its bits are not tested, and the recheck decides",
									 keys[k].column + 1, RelationGetRelationName(index))));
		else
			ereport(DEBUG1,
					(errmsg_internal("bloomidx: the IN list on column %d of index \"%s\" has %lld distinct values, so many that most rows would pass one of them; its bits are not tested, and the recheck decides",
									 keys[k].column + 1, RelationGetRelationName(index),
									 (long long) keys[k].nhashes)));
	}

	/* A list of millions of elements takes a while: interrupts are served between its parts. */
	void	   *memory = MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, 1));

	while (!bloomidx::build_query(state->meta, keys, nkeys, uses, memory, &so->query,
								  bloomidx_interrupt_pending, NULL))
		CHECK_FOR_INTERRUPTS();
	/* Lists not asked of the filters: their masks and positions are built. */
	for (int k = 0; k < nkeys; k++)
		if (uses[k] == bloomidx::KeyUse::List &&
			bloomidx::list_mask_word(keys, nkeys, uses, k) == bloomidx::kListNotAsked)
			pfree((void *) keys[k].hashes);
	if (so->query.elements >= kCopyPageElements)
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

	int			slice = (int) Max(1.0, kTestsPerCheck / so->query.elements);
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
 * Walks the pending list from block `blkno` to block `stop` (not read) or
 * its end, testing each page's rows, and counts the pages in *walked.  The
 * next page is pinned before this one is tested, and its signatures
 * prefetched, so that memory loads them meanwhile.  *met_stop: the walk
 * reached `stop`.  False when a page turned out recycled since the copy.
 */
static bool
walk_pending(Relation index, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
			 BufferAccessStrategy bas, BufferHints *hints, BlockNumber *nblocks,
			 BlockNumber blkno, BlockNumber stop, uint32 *walked, BlockNumber *visited,
			 bool *met_stop)
{
	uint32		generation = so->dir.header.generation;
	Buffer		buffer = blkno != bloomidx::kMetaBlock && blkno != stop
		? bloomidx_read_page(index, blkno, bas, hints) : InvalidBuffer;

	*met_stop = blkno == stop;
	while (BufferIsValid(buffer))
	{
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);

		if (bloomidx_pending_page_recycled(index, blkno, &buffer, generation, &so->state.geometry))
			return false;
		(*walked)++;

		BlockNumber next_blkno = bloomidx::pending_next((const uint8 *) page);
		Buffer		next = InvalidBuffer;

		if (next_blkno != bloomidx::kMetaBlock)
		{
			bloomidx_check_pending_link(index, blkno, next_blkno, nblocks, visited);
			if (next_blkno != stop)
				next = bloomidx_read_page(index, next_blkno, bas, hints);
			else
				*met_stop = true;
		}

		scan_pending_page(index, so, matcher, blkno, &buffer, page, next);
		if (BufferIsValid(buffer))
			UnlockReleaseBuffer(buffer);
		buffer = next;
		blkno = next_blkno;
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/* Tests pending page blkno, one a group's slot names (read whatever it is). */
static bool
scan_slot_page(Relation index, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
			   BufferAccessStrategy bas, BufferHints *hints, BlockNumber blkno)
{
	Buffer		buffer = bloomidx_read_page(index, blkno, bas, hints);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	if (bloomidx_pending_page_recycled(index, blkno, &buffer, so->dir.header.generation,
									   &so->state.geometry))
		return false;
	scan_pending_page(index, so, matcher, blkno, &buffer, BufferGetPage(buffer), InvalidBuffer);
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
	return true;
}

/*
 * A pending group's header copied into hcopy and checked: false when it
 * was recycled since the copy (else damage is an ERROR).
 */
static bool
read_pending_group(Relation index, ScanOpaque *so, BlockNumber blkno, uint32 id,
				   BlockNumber *nblocks, BufferAccessStrategy bas, char *hcopy)
{
	/* As this backend read it at the same pending tail (header_cache.cpp). */
	if (bloomidx_cached_pending_group_header(index, &so->dir.header, blkno, id, hcopy))
		return true;

	bloomidx::PageProblem problem = bloomidx_pending_group_copy(index, blkno, id, nblocks, bas,
																hcopy);

	if (problem == bloomidx::PageProblem::None)
	{
		bloomidx_keep_pending_group_header(index, &so->dir.header, blkno, id, hcopy);
		return true;
	}
	(void) bloomidx_page_was_recycled(index, blkno, so->dir.header.generation, problem);
	return false;
}

/*
 * The pending pages of the directory copy, in list order: each row tested.
 * Where pending groups cover a run of the list (storage/pending_filters.cpp),
 * the pages before the run are walked, then each group's slots the query's
 * keys pass are read, then the pages after the run are walked.  False when
 * a page turned out recycled since the copy.
 */
static bool
scan_pending(Relation index, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
			 BufferAccessStrategy bas, BufferHints *hints, BlockNumber nblocks)
{
	const bloomidx::PendingFilters *pf = &so->dir.pending_filters;
	BlockNumber visited = 0;
	uint32		walked = 0;
	bool		met;
	char	   *hcopy = NULL;
	BlockNumber run = bloomidx::kMetaBlock;	/* the run's first page: none */

	if (pf->first_group != bloomidx::kMetaBlock && so->query.filter.nkeys > 0)
	{
		hcopy = (char *) bloomidx_scan_scratch(SCRATCH_PAGES, SCRATCH_PAGES_BYTES);
		if (!read_pending_group(index, so, pf->first_group, pf->first_group_id, &nblocks, bas,
								hcopy))
			return false;
		if (bloomidx::filter_group_header((const uint8 *) hcopy)->slots_taken > 0)
			run = bloomidx::filter_group_header((const uint8 *) hcopy)->slot_segment[0];
	}
	if (!walk_pending(index, so, matcher, bas, hints, &nblocks, so->dir.header.pending_head, run,
					  &walked, &visited, &met))
		return false;
	if (run == bloomidx::kMetaBlock)
	{
		/*
		 * A first group without slots: linked before its pass named any, or
		 * kept from then (a pass can name them within the same tail: after
		 * a seal, or one paused between its blocks and its header).  Read
		 * again by the next scan rather than walk the list again.
		 */
		if (hcopy != NULL && walked > PENDING_FILTERS_EVERY)
			bloomidx_forget_pending_group_header(index, &so->dir.header, pf->first_group);
		return bloomidx_check_pending_count(index, &so->dir, walked);
	}

	/* The list must lead to the run: else it was sealed since the copy, or is damaged. */
	if (!met)
	{
		if (bloomidx_directory_generation(index) != so->dir.header.generation)
			return false;
		bloomidx_report_corrupted_page(index, pf->first_group,
									   "The pending list does not lead to the first page of its first pending group.");
	}

	BlockNumber group = pf->first_group;
	BlockNumber after = run;

	for (BlockNumber groups = 0;; groups++)
	{
		const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header((const uint8 *) hcopy);
		bloomidx::PendingGroupLinks links = bloomidx::pending_group_links((const uint8 *) hcopy);
		bloomidx::SlotMask passed;

		if (h->slots_taken == 0)
			break;				/* a group linked, no slot written yet */
		if (h->slot_segment[0] != after || groups >= nblocks)
		{
			if (bloomidx_directory_generation(index) != so->dir.header.generation)
				return false;
			bloomidx_report_corrupted_page(index, group,
										   "A pending group does not start where the one before it ended.");
		}
		if (!bloomidx_pending_group_probe(index, &so->query.filter, hcopy, group,
										  so->dir.header.generation, bas, hints, &passed))
			return false;
		for (uint32 s = 0; s < h->slots_taken; s++)
		{
			walked++;
			if (passed.has(s) &&
				!scan_slot_page(index, so, matcher, bas, hints, h->slot_segment[s]))
				return false;
			CHECK_FOR_INTERRUPTS();
		}
		after = links.after;
		if (links.next_group == bloomidx::kMetaBlock)
			break;
		group = links.next_group;
		if (!read_pending_group(index, so, group, links.next_group_id, &nblocks, bas, hcopy))
			return false;
	}

	/* The pages after the run. */
	uint32		in_run = walked;

	if (!walk_pending(index, so, matcher, bas, hints, &nblocks, after, bloomidx::kMetaBlock,
					  &walked, &visited, &met))
		return false;

	/*
	 * More pages past the run than the passes leave: the last header read
	 * (kept, or just read) is behind, or a pass was skipped; the next scan
	 * reads it again rather than walk them too.
	 */
	if (walked - in_run > PENDING_FILTERS_EVERY)
		bloomidx_forget_pending_group_header(index, &so->dir.header, group);
	return bloomidx_check_pending_count(index, &so->dir, walked);
}

/*
 * One pass over the index: the pending pages and the segments of one copy
 * of the directory.  False when a page turned out reused since the copy:
 * the caller starts again (TIDs already added stay: the bitmap keeps each
 * once).  The pending pages come first: a seal recycles them (every
 * segment's worth of inserts), a merge recycles segments (a VACUUM now
 * and then), so a pass that reads them first is the least likely to meet
 * a recycled page.
 */
static bool
scan_pass(IndexScanDesc scan, ScanOpaque *so, const bloomidx::QueryMatcher *matcher,
		  BufferAccessStrategy bas, BufferHints *hints)
{
	Relation	index = scan->indexRelation;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	bloomidx_read_directory_for_scan(index, &nblocks, &so->dir);
	bloomidx_debug_pause(PAUSE_SCAN_DIRECTORY);

	/*
	 * Reading ahead (support.h's ReadAhead), once the scan meets a page
	 * outside shared buffers: the first pending page, asked for, tells
	 * whether the scan starts on disk, and then the filter groups' headers
	 * are asked for while the pending pages are read; later, the pages of
	 * the next segments to scan, and the filters' (filter_scan.cpp).
	 */
	ReadAhead	ra;

	bloomidx_read_ahead_init(&ra, index);
	if (ra.distance > 0 && so->dir.header.pending_pages > 0 &&
		bloomidx_prefetch_page(index, so->dir.header.pending_head, nblocks, hints))
		ra.on = true;
	if (ra.on && so->query.filter.nkeys > 0)
		bloomidx_prefetch_filter_groups(index, &so->dir, nblocks, hints, ra.distance);
	if (!scan_pending(index, so, matcher, bas, hints, nblocks))
		return false;

	uint32		generation = so->dir.header.generation;
	uint32		nsegments = so->dir.header.nsegments;
	bool	   *skip = (bool *) bloomidx_scan_scratch(SCRATCH_SKIP, Max(nsegments, 1) * sizeof(bool));
	bool		lists_asked = false;

	/*
	 * Per segment, the elements of each IN list asked of the filters that
	 * its filters may hold (its element mask, element_words words), where
	 * the masks fit in work_mem (else every element is tested, as before
	 * there were masks).
	 */
	for (int k = 0; k < so->query.filter.nkeys; k++)
		lists_asked |= so->query.filter.keys[k].list >= 0;

	uint32		nwords = so->query.filter.element_words;
	Size		mask_bytes = (Size) nsegments * nwords * sizeof(uint64);
	uint64	   *elements = NULL;
	bool		elements_kept = mask_bytes <= SCRATCH_MAX_BYTES;

	if (lists_asked && nsegments > 0 && mask_bytes <= (Size) work_mem * 1024)
		elements = (uint64 *) (elements_kept ? bloomidx_scan_scratch(SCRATCH_ELEMENTS, mask_bytes)
							   : palloc(mask_bytes));
	bool		ok = bloomidx_filter_segments(index, &so->query.filter, &so->dir,
											  (uint32) so->state.ncolumns, nblocks, hints, &ra,
											  skip, elements);

	uint32		ahead = 0;		/* the next segment to ask for */
	uint32		asked = 0;		/* segments asked for, not yet scanned */

	for (uint32 i = 0; ok && i < nsegments; i++)
	{
		if (skip[i])
			continue;

		bool		reading_ahead = bloomidx_read_ahead_on(&ra);

		/* Nothing behind the scan is asked for (reading ahead may begin anywhere). */
		ahead = Max(ahead, i);
		for (; reading_ahead && ahead < nsegments && asked < (uint32) ra.distance; ahead++)
		{
			if (skip[ahead])
				continue;
			bloomidx_prefetch_segment(index, &so->query.slices,
									  elements ? &elements[(Size) ahead * nwords] : NULL,
									  &so->dir.entries[ahead], nblocks, hints);
			asked++;
		}
		/* Asked for at the first segment scanned: a scan the filters end touches none of it. */
		if (so->work == NULL)
			so->work = bloomidx_segment_scan_work();
		ok = bloomidx_scan_segment(index, &so->query.slices,
								   elements ? &elements[(Size) i * nwords] : NULL, so->work,
								   &so->dir.entries[i], so->state.meta.signature_bits,
								   generation, nblocks, hints, reading_ahead, &so->sink);
		/* Segment i was asked for when the asking had gone past it. */
		asked -= ahead > i && asked > 0;
		CHECK_FOR_INTERRUPTS();
	}
	if (elements && !elements_kept)
		pfree(elements);
	return ok;
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
	/* From here to the end no code but ours runs (the keys are hashed): scratch is safe to share. */
	bloomidx_scan_scratch_begin();
	so->work = NULL;

	bloomidx::QueryMatcher matcher(so->query.base, so->query.lists, so->query.nlists);
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
		? bloomidx_buffer_hints(index) : NULL;

	/*
	 * A pass that met a recycled page starts again, and the next takes the
	 * seal lock in share mode if it is free: no seal or merge can recycle a
	 * page under that pass, so it is the last, however busy the writers (an
	 * insert that would seal meanwhile leaves it to the next, as when
	 * another seal runs).  Never waiting for the lock: a scan queued behind
	 * VACUUM, which holds it throughout, would stall for the whole VACUUM,
	 * and the deadlock detector cancels an autovacuum that blocks a waiter.
	 * While a seal or VACUUM holds it, the pass runs unlocked, and each
	 * pass that starts again tries again.  Not on a standby, where replay
	 * recycles pages and takes no lock.
	 */
	bool		locked = false;

	for (int restarts = 0; !scan_pass(scan, so, &matcher, bas, hints); restarts++)
	{
		elog(DEBUG1, "bloomidx: scan of index \"%s\" starts again: a seal or merge recycled a page it was to read",
			 RelationGetRelationName(index));
		CHECK_FOR_INTERRUPTS();
		if (restarts + 1 >= SCAN_RESTARTS_UNLOCKED && !locked && !RecoveryInProgress())
			locked = ConditionalLockPage(index, bloomidx::kMetaBlock, ShareLock);
	}
	if (locked)
		UnlockPage(index, bloomidx::kMetaBlock, ShareLock);
	bloomidx_sink_flush(&so->sink);

	relation_close(so->sink.heap, NoLock);
	if (bas)
		FreeAccessStrategy(bas);
	/* Nothing of the scratch is kept past the call. */
	so->work = NULL;
	so->dir.entries = NULL;
	so->dir.capacity = 0;
	bloomidx_scan_scratch_end();
	return so->sink.found;
}
