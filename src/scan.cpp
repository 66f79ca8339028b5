/*
 * scan.cpp: bitmap scans.  The query's equalities become one query
 * signature; every data page is read once, in order, through a bulk-read
 * ring, and the TIDs of the signatures holding all query bits go to the
 * bitmap marked recheck (a Bloom filter only says "maybe").
 */
#include "bloomidx.h"

#include "core/positions.hpp"

/* More entries than any page can hold (2-byte signatures: 1020). */
#define MAX_PAGE_ENTRIES (bloomidx::kPayloadBytes / (2 + bloomidx::kTidSize))

typedef struct ScanOpaque
{
	BloomidxState state;
	uint16		matches[MAX_PAGE_ENTRIES];
	ItemPointerData tids[MAX_PAGE_ENTRIES];
	bloomidx::SignatureMask mask;
} ScanOpaque;

IndexScanDesc
bloomidx_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	ScanOpaque *so = (ScanOpaque *) palloc(sizeof(ScanOpaque));

	bloomidx_init_state(&so->state, index);
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
	pfree(scan->opaque);
}

/*
 * The hash of a scan key's value.  A cross-type key (int8col = 5) hashes
 * with its own type's function of the column's operator family, which
 * agrees with the column type's on equal values.
 */
static uint64
key_hash(IndexScanDesc scan, const BloomidxState *state, ScanKey key, int column)
{
	Relation	index = scan->indexRelation;
	Oid			key_type = key->sk_subtype;

	if (!OidIsValid(key_type) || key_type == index->rd_opcintype[column])
		return bloomidx_hash_value(&state->hasher[column], key->sk_argument);

	Oid			proc = get_opfamily_proc(index->rd_opfamily[column], key_type, key_type,
										 BLOOMIDX_HASH_PROC);
	ValueHasher hasher;

	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator family of column %d of index \"%s\" has no hash function for type %s",
						column + 1, RelationGetRelationName(index), format_type_be(key_type))));
	bloomidx_init_hasher(&hasher, proc, state->hasher[column].collation, column);
	return bloomidx_hash_value(&hasher, key->sk_argument);
}

/*
 * Builds the query signature from the scan keys; false when no row can
 * match (an equality with NULL).
 */
static bool
build_query(IndexScanDesc scan, ScanOpaque *so)
{
	const BloomidxState *state = &so->state;
	uint8		query[bloomidx::kMaxSignatureBytes];

	memset(query, 0, sizeof(query));
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			column = key->sk_attno - 1;

		if (key->sk_flags & SK_ISNULL)
			return false;		/* "col = NULL" is never true */
		if (key->sk_strategy != BLOOMIDX_EQUAL_STRATEGY || column < 0 ||
			column >= state->ncolumns)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("bloomidx supports only equality on indexed columns")));
		bloomidx::add_value(query, state->meta.signature_bits, state->meta.column_bits[column],
							key_hash(scan, state, key, column));
	}
	so->mask.build(query, state->meta.signature_bytes);
	return true;
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

	BufferAccessStrategy bas = GetAccessStrategy(BAS_BULKREAD);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	for (BlockNumber blkno = bloomidx::kMetaBlock + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);

		if (!PageIsNew(page))
		{
			bloomidx_check_data_page(index, blkno, page, g);
			const uint8 *raw = (const uint8 *) page;
			int			n = so->mask.match_array(bloomidx::row_signatures(raw),
												 bloomidx::page_opaque(raw)->count,
												 so->matches);

			for (int i = 0; i < n; i++)
				memcpy(&so->tids[i], bloomidx::row_tid(raw, *g, so->matches[i]),
					   sizeof(ItemPointerData));
			if (n > 0)
				tbm_add_tuples(tbm, so->tids, n, true);
			found += n;
		}
		UnlockReleaseBuffer(buffer);
		CHECK_FOR_INTERRUPTS();
	}
	FreeAccessStrategy(bas);
	return found;
}
