/*
 * scan.cpp: bitmap scans.  The query's keys become one base mask (every
 * equality and IS NULL) and one group of masks per IN list (= ANY), each
 * element tested on its own; every data page is read once, in order
 * (through a bulk-read ring for an index too big to stay cached, else
 * through buffer hints), and the TIDs of matching signatures go to the
 * bitmap marked recheck (a Bloom filter only says "maybe").
 */
#include "bloomidx.h"

#include <new>

#include "core/hash.hpp"
#include "core/positions.hpp"


typedef struct ScanOpaque
{
	BloomidxState state;
	MemoryContext query_cxt;	/* the masks of the current keys */
	bloomidx::SignatureMask base;
	bloomidx::MaskGroup *groups;	/* one per IN list */
	int			ngroups;
	uint16		matches[bloomidx::kMaxPageEntries];
	ItemPointerData tids[bloomidx::kMaxPageEntries];
} ScanOpaque;

IndexScanDesc
bloomidx_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	ScanOpaque *so = (ScanOpaque *) palloc(sizeof(ScanOpaque));

	bloomidx_init_state(&so->state, index);
	so->query_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx scan query",
										  ALLOCSET_SMALL_SIZES);
	so->groups = NULL;
	so->ngroups = 0;
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
	pfree(so);
}

/*
 * Adds to query the bits of a value compared with an index column.  A
 * cross-type key (int8col = 5) hashes with its own type's function from
 * the column's operator family (state.cpp), or tests no bits when it
 * cannot hash as the column's values did: the recheck then decides.
 */
static void
add_key_value(Relation index, const BloomidxState *state, Oid key_type, int column,
			  Datum value, uint8 *query)
{
	ValueHasher scratch;
	const ValueHasher *hasher = bloomidx_key_hasher(index, state, column, key_type, &scratch);

	if (hasher != NULL)
		bloomidx::add_value(query, state->meta.signature_bits, state->meta.column_bits[column],
							bloomidx_hash_value(hasher, value));
}

/* The non-NULL elements of an = ANY key's array; returns how many. */
static int
array_elements(ScanKey key, Datum **elements)
{
	ArrayType  *array = DatumGetArrayTypeP(key->sk_argument);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	bool	   *nulls;
	int			n;
	int			kept = 0;

	get_typlenbyvalalign(ARR_ELEMTYPE(array), &typlen, &typbyval, &typalign);
	deconstruct_array(array, ARR_ELEMTYPE(array), typlen, typbyval, typalign,
					  elements, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			(*elements)[kept++] = (*elements)[i];
	return kept;
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
	uint8		element[bloomidx::kMaxSignatureBytes];

	so->groups = (bloomidx::MaskGroup *)
		palloc(Max(scan->numberOfKeys, 1) * sizeof(bloomidx::MaskGroup));
	so->ngroups = 0;
	memset(query, 0, sizeof(query));

	for (int k = 0; k < scan->numberOfKeys; k++)
	{
		ScanKey		key = &scan->keyData[k];
		int			column = key->sk_attno - 1;
		uint32		bits;

		if (column < 0 || column >= state->ncolumns)
			elog(ERROR, "bloomidx: scan key on column %d of a %d-column index",
				 key->sk_attno, state->ncolumns);
		bits = state->meta.column_bits[column];

		if (key->sk_flags & SK_ISNULL)
		{
			if (key->sk_flags & SK_SEARCHNULL)
				bloomidx::add_value(query, m, bits, bloomidx::null_hash(column));
			else if (!(key->sk_flags & SK_SEARCHNOTNULL))
				return false;	/* "col = NULL" is never true */
			/* IS NOT NULL: no bits to test; the recheck decides */
			continue;
		}
		if (key->sk_strategy != BLOOMIDX_EQUAL_STRATEGY)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("bloomidx supports only equality, IN lists and IS NULL")));

		if (!(key->sk_flags & SK_SEARCHARRAY))
		{
			add_key_value(index, state, key->sk_subtype, column, key->sk_argument, query);
			continue;
		}

		Datum	   *elements;
		int			n = array_elements(key, &elements);

		if (n == 0)
			return false;		/* IN () or IN (NULL): nothing matches */
		if (n == 1)
		{
			add_key_value(index, state, key->sk_subtype, column, elements[0], query);
			continue;
		}
		bloomidx::SignatureMask *masks = (bloomidx::SignatureMask *)
			palloc(n * sizeof(bloomidx::SignatureMask));

		for (int i = 0; i < n; i++)
		{
			memset(element, 0, nbytes);
			add_key_value(index, state, key->sk_subtype, column, elements[i], element);
			new (&masks[i]) bloomidx::SignatureMask();
			masks[i].build(element, nbytes);
		}
		so->groups[so->ngroups].masks = masks;
		so->groups[so->ngroups].count = n;
		so->ngroups++;
	}
	so->base.build(query, nbytes);
	return true;
}

/*
 * Pins data page blkno: through the buffer this backend last found it in
 * when there is a hint (no buffer table lookup, which is a fifth of a
 * scan of a cached index), else through the ring or a normal read.
 */
static inline Buffer
read_page(Relation index, BlockNumber blkno, BufferAccessStrategy bas, Buffer *hints,
		  BlockNumber nhints)
{
	if (blkno >= nhints)
		return ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);

	Buffer		hint = hints[blkno];

	if (BufferIsValid(hint) && ReadRecentBuffer(index->rd_node, MAIN_FORKNUM, blkno, hint))
	{
		pgstat_count_buffer_hit(index);
		return hint;
	}
	hints[blkno] = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
	return hints[blkno];
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

int64
bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	ScanOpaque *so = (ScanOpaque *) scan->opaque;
	const bloomidx::RowPageGeometry *g = &so->state.geometry;
	Relation	index = scan->indexRelation;
	int64		found = 0;

	if (!build_query(scan, so))
		return 0;

	bloomidx::QueryMatcher matcher(so->base, so->groups, so->ngroups);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	/* The table's length, to reject TIDs past it (the executor locks it). */
	Relation	heap = relation_open(index->rd_index->indrelid, NoLock);
	BlockNumber heap_blocks = RelationGetNumberOfBlocks(heap);

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
	BlockNumber nhints = 0;
	Buffer	   *hints = bas == NULL && !RelationUsesLocalBuffers(index)
		? bloomidx_buffer_hints(index, nblocks, &nhints) : NULL;

	/*
	 * The next page is pinned before this one is tested, and its signatures
	 * prefetched, so that memory loads them meanwhile.
	 */
	Buffer		next = InvalidBuffer;

	if (bloomidx::kMetaBlock + 1 < nblocks)
		next = read_page(index, bloomidx::kMetaBlock + 1, bas, hints, nhints);
	for (BlockNumber blkno = bloomidx::kMetaBlock + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer = next;

		next = InvalidBuffer;
		if (blkno + 1 < nblocks)
			next = read_page(index, blkno + 1, bas, hints, nhints);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);

		if (!PageIsNew(page))
		{
			bloomidx_check_data_page(index, blkno, page, g, bloomidx::EntryChecks::Signatures);
			if (BufferIsValid(next))
				bloomidx::prefetch_row_page((const uint8 *) BufferGetPage(next), *g);
			const uint8 *raw = (const uint8 *) page;
			int			n = matcher.match_array(bloomidx::row_signatures(raw),
												bloomidx::page_opaque(raw)->count,
												so->matches);

			if (n > 0)
				bloomidx_check_data_page_tids(index, blkno, page);
			for (int i = 0; i < n; i++)
			{
				memcpy(&so->tids[i], bloomidx::row_tid(raw, *g, so->matches[i]),
					   sizeof(ItemPointerData));
				/*
				 * A damaged TID must not reach the bitmap (which rejects a bad
				 * offset without naming the index) or the heap (a block past
				 * its end).  The table may have grown since the scan began: a
				 * concurrent insert's row is past the length read then.
				 */
				OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(&so->tids[i]);
				BlockNumber target = ItemPointerGetBlockNumberNoCheck(&so->tids[i]);

				if (target >= heap_blocks)
					heap_blocks = RelationGetNumberOfBlocks(heap);
				if (offset == InvalidOffsetNumber || offset > MaxHeapTuplesPerPage ||
					target >= heap_blocks)
					bloomidx_report_corrupted_page(index, blkno,
												   psprintf("Entry %d holds an invalid heap TID.",
															so->matches[i]));
			}
			if (n > 0)
				tbm_add_tuples(tbm, so->tids, n, true);
			found += n;
		}
		UnlockReleaseBuffer(buffer);
		CHECK_FOR_INTERRUPTS();
	}
	relation_close(heap, NoLock);
	if (bas)
		FreeAccessStrategy(bas);
	return found;
}
