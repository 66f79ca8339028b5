/*
 * heap_keys.cpp: the filter keys of a merge's rows, read from the table
 * for the sources that kept none (storage/README.md, *Segment filters*).
 *
 * A merge makes exact filters, one slot, from its rows' filter keys.
 * Small segments keep theirs on key pages; a build's segments and full
 * ones keep none (4 bytes a column a row, more than a row's signature).
 * Without them a merge could only OR its sources' filter slots, and past
 * MERGED_SLOTS_MAX of them it kept no filters at all.  So VACUUM reads
 * each such row's tuples by its TID (as amcheck's heapallindexed check
 * reads the table) and hashes their indexed values as an insert does.
 *
 * Only where that is sure to work and to be right (bloomidx_heap_keys_usable):
 * a heap table (the reasoning below is the heap's) and an index of plain
 * columns, as VACUUM must not run user code (an index expression may fail
 * under autovacuum's empty search_path, or be unsafe in a parallel
 * VACUUM's worker; and a failure would fail every VACUUM of the table).
 * Else merges OR their sources' filters, as they did.
 *
 * The tuples of the row's HOT chain that some snapshot may still see
 * (a non-vacuumable snapshot: no tuple dead to all, whose TOAST may be
 * gone) must all give the same keys: a chain broken for this index (an
 * update before the index was built, seen by an older snapshot) may not,
 * and then the entry's are the newest's, which cannot be told apart here.
 * Their signature must be the one the row's slices held.  A value stored
 * out of line is not fetched.  A row failing any of these makes the merge
 * OR its sources' filters instead, so no row is ever filed under keys
 * that are not its own.  A row whose tuples are gone, pruned since
 * VACUUM's pass over the table, keeps zero keys: no query can return it
 * (a standby's that could met the pruning as a recovery conflict), and
 * the next VACUUM clears it.  (A line pointer this index names is made
 * unused only by a VACUUM that removed the row here first.)  One whose
 * tuples are dead to all here but not pruned may still be seen on a
 * standby: the sources' filters then.
 */
#include "storage/storage.h"

struct HeapKeys
{
	Relation	heap;
	IndexInfo  *info;
	EState	   *estate;			/* per-row memory */
	TupleTableSlot *slot;
	IndexFetchTableData *fetch;
	SnapshotData snapshot;		/* non-vacuumable */
	BlockNumber heap_blocks;	/* the table's length when opened */
	uint8	   *signature;		/* a row's, made again from its values */
	uint32		keys[INDEX_MAX_KEYS];	/* a later tuple's of its chain */
};

/* Rows between checks for a cost-based VACUUM delay or a cancel. */
#define DELAY_EVERY_ROWS 256

/* Whether a merge may read its rows' keys from the table (above). */
bool
bloomidx_heap_keys_usable(Relation index)
{
	/* VACUUM holds a lock on the table. */
	Relation	heap = relation_open(index->rd_index->indrelid, NoLock);
	bool		usable = heap->rd_rel->relam == HEAP_TABLE_AM_OID &&
		RelationGetIndexExpressions(index) == NIL;

	relation_close(heap, NoLock);
	return usable;
}

HeapKeys *
bloomidx_heap_keys_begin(Relation index, uint32 signature_bytes)
{
	HeapKeys   *hk = (HeapKeys *) palloc0(sizeof(HeapKeys));

	Assert(bloomidx_heap_keys_usable(index));
	hk->heap = table_open(index->rd_index->indrelid, AccessShareLock);
	hk->info = BuildIndexInfo(index);
	hk->estate = CreateExecutorState();
	hk->slot = table_slot_create(hk->heap, NULL);
	GetPerTupleExprContext(hk->estate)->ecxt_scantuple = hk->slot;
	hk->fetch = bloomidx_index_fetch_begin(hk->heap);
	InitNonVacuumableSnapshot(hk->snapshot, GlobalVisTestFor(hk->heap));
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
 * The keys and signature of the tuple in hk->slot, to keys and
 * hk->signature; false if a value is stored out of line (not fetched).
 */
static bool
tuple_keys(HeapKeys *hk, const BloomidxState *state, uint32 nbytes, uint32 *keys)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	TupleDesc	desc = RelationGetDescr(hk->heap);

	FormIndexDatum(hk->info, hk->slot, hk->estate, values, isnull);
	for (int i = 0; i < state->ncolumns; i++)
	{
		AttrNumber	attno = hk->info->ii_IndexAttrNumbers[i];

		if (!isnull[i] && TupleDescAttr(desc, attno - 1)->attlen == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			return false;
	}
	memset(hk->signature, 0, nbytes);
	bloomidx_form_signature(state, values, isnull, hk->signature, keys);
	return true;
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
		/* A copy: each fetch sets it to the tuple of the chain it found. */
		ItemPointerData tid = rows->tids[r];
		uint32	   *keys = rows->keys + (Size) r * ncolumns;
		bool		call_again = false;
		bool		all_dead = false;
		bool		found = false;

		if ((r - first) % DELAY_EVERY_ROWS == 0)
			bloomidx_vacuum_delay_point();
		/* A TID the table cannot hold: damage, left to the sources' filters. */
		if (!ItemPointerIsValid(&tid) || ItemPointerGetBlockNumber(&tid) >= hk->heap_blocks)
			return false;

		/* Every tuple of its chain a snapshot may see: one set of keys. */
		while (ok && table_index_fetch_tuple(hk->fetch, &tid, &hk->snapshot, hk->slot,
											 &call_again, &all_dead))
		{
			MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);

			ok = tuple_keys(hk, state, nbytes, found ? hk->keys : keys) &&
				(!found || memcmp(hk->keys, keys, ncolumns * sizeof(uint32)) == 0) &&
				memcmp(hk->signature, rows->signatures + (Size) r * nbytes, nbytes) == 0;
			MemoryContextSwitchTo(old);
			ExecClearTuple(hk->slot);
			ResetExprContext(econtext);
			found = true;
			if (!call_again)
				break;
		}
		/*
		 * None a snapshot here may see: zero keys only if the tuples are
		 * gone, pruned, which a standby's queries that could still see
		 * them met as a recovery conflict before this merge's record
		 * (dead to all here is not dead to a standby without
		 * hot_standby_feedback); else the sources' filters.
		 */
		if (ok && !found)
		{
			tid = rows->tids[r];
			call_again = false;
			if (table_index_fetch_tuple(hk->fetch, &tid, SnapshotAny, hk->slot, &call_again,
										&all_dead))
			{
				ExecClearTuple(hk->slot);
				ok = false;
			}
			else
				memset(keys, 0, ncolumns * sizeof(uint32));
		}
		table_index_fetch_reset(hk->fetch);
	}
	return ok;
}
