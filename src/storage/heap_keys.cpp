/*
 * heap_keys.cpp: the filter keys of a merge's rows, read from the table
 * for the sources that kept none (storage/README.md, *Segment filters*).
 *
 * A merge makes exact filters, one slot, from its rows' filter keys.
 * Small segments keep theirs on key pages; a build's segments and full
 * ones keep none (4 bytes a column a row, more than a row's signature).
 * Without them a merge could only OR its sources' filter slots, and past
 * MERGED_SLOTS_MAX of them it kept no filters at all.  So VACUUM reads
 * each such row's tuple by its TID (as amcheck's heapallindexed check
 * and BRIN's VACUUM-time summarizing read the table), forms the index's
 * values, expressions included, and hashes them as an insert does.  Any
 * tuple of a HOT chain carries the indexed values of its root, so the
 * first one SnapshotAny finds does.
 *
 * A row's keys are trusted only if the signature its values give is the
 * one its slices held; else (damage) the merge makes its filters from its
 * sources' as before, so no row is ever filed under keys that are not its
 * own.  A row whose TID finds no tuple lost it to pruning since VACUUM's
 * pass over the table (a line pointer this index still names is made
 * unused only by a VACUUM that removed it here first), which happens only
 * to tuples no snapshot can see: it keeps its place, its signature and
 * zero keys (no query can ever need it), until the next VACUUM clears it.
 */
#include "storage/storage.h"

struct HeapKeys
{
	Relation	heap;
	IndexInfo  *info;
	EState	   *estate;			/* for expressions; per-row memory */
	TupleTableSlot *slot;
	IndexFetchTableData *fetch;
	BlockNumber heap_blocks;	/* the table's length when opened */
	uint8	   *signature;		/* a row's, made again from its values */
};

/* Rows between checks for a cost-based VACUUM delay or a cancel. */
#define DELAY_EVERY_ROWS 256

HeapKeys *
bloomidx_heap_keys_begin(Relation index, uint32 signature_bytes)
{
	HeapKeys   *hk = (HeapKeys *) palloc0(sizeof(HeapKeys));

	/* VACUUM holds a lock on the table already (brinvacuumcleanup opens it so too). */
	hk->heap = table_open(IndexGetRelation(RelationGetRelid(index), false), AccessShareLock);
	hk->info = BuildIndexInfo(index);
	hk->estate = CreateExecutorState();
	hk->slot = table_slot_create(hk->heap, NULL);
	GetPerTupleExprContext(hk->estate)->ecxt_scantuple = hk->slot;
	hk->fetch = bloomidx_index_fetch_begin(hk->heap);
	hk->heap_blocks = RelationGetNumberOfBlocks(hk->heap);
	hk->signature = (uint8 *) palloc(signature_bytes);
	return hk;
}

void
bloomidx_heap_keys_end(HeapKeys *hk)
{
	table_index_fetch_end(hk->fetch);
	ExecDropSingleTupleTableSlot(hk->slot);
	FreeExecutorState(hk->estate);
	table_close(hk->heap, AccessShareLock);
	pfree(hk->signature);
	pfree(hk);
}

/*
 * Sets the filter keys of rows first .. first + n - 1 of rows from their
 * tuples; false if a row's cannot be trusted (above), the keys then
 * partly set.
 */
bool
bloomidx_heap_keys_read(HeapKeys *hk, const BloomidxState *state, SegmentRows *rows,
						uint32 first, uint32 n)
{
	const uint32 nbytes = rows->signature_bytes;
	const uint32 ncolumns = (uint32) state->ncolumns;
	ExprContext *econtext = GetPerTupleExprContext(hk->estate);
	bool		ok = true;

	Assert(rows->keys != NULL && first + n <= rows->nrows);
	for (uint32 r = first; ok && r < first + n; r++)
	{
		/* A copy: the fetch sets it to the HOT chain's tuple it finds. */
		ItemPointerData tid = rows->tids[r];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		bool		call_again = false;
		bool		all_dead = false;

		if ((r - first) % DELAY_EVERY_ROWS == 0)
			bloomidx_vacuum_delay_point();
		/* A TID the table cannot hold: damage, left to the sources' filters. */
		if (!ItemPointerIsValid(&tid) || ItemPointerGetBlockNumber(&tid) >= hk->heap_blocks)
		{
			ok = false;
			break;
		}
		if (!table_index_fetch_tuple(hk->fetch, &tid, SnapshotAny, hk->slot, &call_again,
									 &all_dead))
		{
			/* Pruned: dead to every snapshot (above). */
			memset(rows->keys + (Size) r * ncolumns, 0, ncolumns * sizeof(uint32));
			continue;
		}

		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

		FormIndexDatum(hk->info, hk->slot, hk->estate, values, isnull);
		memset(hk->signature, 0, nbytes);
		bloomidx_form_signature(state, values, isnull, hk->signature,
								rows->keys + (Size) r * ncolumns);
		MemoryContextSwitchTo(old);
		ok = memcmp(hk->signature, rows->signatures + (Size) r * nbytes, nbytes) == 0;
		ExecClearTuple(hk->slot);
		ResetExprContext(econtext);
	}
	table_index_fetch_reset(hk->fetch);
	return ok;
}
