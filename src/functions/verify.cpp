/*
 * verify.cpp: bloomidx_verify(index regclass), in the spirit of amcheck's
 * bt_index_check(index, heapallindexed => true).
 *
 * It checks, with only the locks a reader takes (AccessShareLock on the
 * table and the index, a share lock on one buffer at a time):
 *   - the metapage (core/page_layout.hpp's check_meta_page, the number of
 *     columns, the insert hint inside the file);
 *   - every data page (check_row_page: special space, kind, format, count,
 *     pd_lower / pd_upper / pd_special, the sums of its signatures and of
 *     its TIDs) and every entry on it: its heap TID
 *     is a valid item pointer inside the table, its signature has no bit
 *     past the index's length and at least the bits one column sets;
 *     pages PageIsNew (an extension a crash interrupted) are skipped;
 *   - the pending groups (format 17; storage/pending_filters.cpp): their
 *     chain from the metapage (each header as a scan checks it, ids
 *     growing along it, no cycle, none of their pages on the free list),
 *     their region pages, that their slots' pages are a run of the pending
 *     list (the first slot's page on it, each next slot's page its
 *     predecessor's successor, a group starting at the page the one before
 *     it names as `after`, each `after` its last slot's page's successor),
 *     each such page full, and that each row's filter key of every column
 *     is in its slot's filter of the column (probed as a scan probes it: a
 *     key missing is a row a scan would skip);
 *   - that every row the table shows (an MVCC snapshot registered before
 *     the first index page is read, so every row it sees had its entry
 *     inserted before) has an entry with its TID whose signature holds
 *     every bit the row's values set.  Entries of rows the snapshot does
 *     not see (dead, not yet vacuumed) are fine.
 * The entries it keeps to compare with the table (16 bytes and a
 * signature each, 8 more where pending rows keep filter keys: 38 for six
 * int4 columns) stay within maintenance_work_mem, and at least
 * ENTRIES_AT_LEAST of them (150 kB for six int4 columns, 2.2 MB for
 * 4,096-bit signatures); past that it checks the table in batches of heap
 * blocks, each a pass over the index's pages and over those blocks
 * (check_batch).  A segment's rows are checked one segment at a time
 * (their TIDs, slots and bit counts: 12 bytes a row, 0.8 MB at most),
 * only those of the batch's blocks put back together, in the entries.
 * A pass keeps copies of the filter groups of the segments that hold rows
 * of its batch's blocks only (each group up to 1,016 segments' filters: a
 * third of data set A's index when one group holds them all), and every
 * pending group's; a table of another access method than heap is read
 * whole for each batch.
 * The first problem found is raised as an ERROR (ERRCODE_INDEX_CORRUPTED
 * for the index's contents) that names the index and the page or the row;
 * a page whose entry sums disagree is reported last, as the checks of its
 * entries and rows may name the damaged entry first.
 *
 * The caller needs SELECT on the table, checked before any lock is
 * taken.  Index expressions, predicates and hash functions run as the
 * table's owner, security-restricted, with search_path = pg_catalog,
 * pg_temp, as in amcheck.
 *
 * A partitioned index has no pages of its own: it is refused with a hint
 * that verifies its partitions' indexes.  An index not ready for inserts
 * is refused; one that is ready but not valid (a CREATE INDEX
 * CONCURRENTLY that failed late) gets its pages checked only, with a
 * NOTICE.  An UNLOGGED index has no data during recovery: a NOTICE says so.
 * Where the directory's counts make MANY_BATCHES batches or more, a NOTICE
 * says about how many passes over the index that will take (rows spread
 * unevenly, or a partial index, may take more).
 *
 * Glue frames hold plain data only (support/pg.h); all memory is palloc'd in one
 * context, deleted at the end (or by the error's cleanup).
 *
 * The pass over the index is verify_pages.cpp's, the filters'
 * verify_filters.cpp's (verify_state.h).
 */
#include "functions/verify_state.h"

#include <cmath>

extern "C" {
PG_FUNCTION_INFO_V1(bloomidx_verify);
}

/* The batches from which verify says beforehand that it will take a while (a NOTICE). */
#define MANY_BATCHES 8

/*
 * How many heap blocks would fill nine tenths of the entry budget where
 * `blocks` blocks hold `entries` entries (nine tenths: some blocks hold
 * more rows than others).
 */
static double
blocks_that_fit(const VerifyState *vs, double blocks, double entries)
{
	return blocks * 0.9 * (double) vs->entry_budget / Max(entries, 1.0);
}

/* The same at the density of the last pass's batch. */
static double
batch_blocks_that_fit(const VerifyState *vs)
{
	return blocks_that_fit(vs, (double) (vs->rows_hi - vs->rows_lo),
						   (double) vs->entries_in_range);
}

/*
 * Checks every page, keeping the entries of heap blocks [rows_lo,
 * rows_hi): passes until one saw the directory unchanged throughout and
 * its entries fit the budget.  A pass whose batch held more entries than
 * the budget is made again over fewer blocks, as many as its count says
 * would fit (batch_blocks_that_fit), half of them at most.
 */
static void
check_batch(VerifyState *vs)
{
	BufferAccessStrategy bas = GetAccessStrategy(BAS_BULKREAD);

	for (;;)
	{
		verify_reset_pass(vs);
		vs->passes++;
		vs->heap_blocks = RelationGetNumberOfBlocks(vs->heap);
		if (!verify_check_pages_pass(vs, bas))
			continue;
		if (!vs->overflow)
			break;

		BlockNumber blocks = vs->rows_hi - vs->rows_lo;

		/* A heap page has fewer line pointers than the budget has entries (ENTRIES_AT_LEAST). */
		if (blocks <= 1)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has more than %zu entries for heap block %u of table \"%s\"",
							RelationGetRelationName(vs->index), vs->entry_budget, vs->rows_lo,
							RelationGetRelationName(vs->heap)),
					 errhint("Please REINDEX it.")));
		vs->rows_hi = vs->rows_lo +
			(BlockNumber) Max(1.0, Min(batch_blocks_that_fit(vs), (double) blocks / 2));
	}
	FreeAccessStrategy(bas);
}

static int
compare_keys(const void *a, const void *b)
{
	uint64		ka = ((const EntryKey *) a)->key;
	uint64		kb = ((const EntryKey *) b)->key;

	return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/* The first entry whose TID is not below tid's, or nentries. */
static Size
lower_bound(const VerifyState *vs, uint64 tid)
{
	Size		lo = 0;
	Size		hi = vs->nentries;

	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (vs->keys[mid].key < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * table_index_build_scan's callback: tid is a row the snapshot sees (the
 * root of its HOT chain), values are what the index is built from.
 */
static void
check_row(Relation index, ItemPointer tid, Datum *values, bool *isnull,
		  bool tupleIsAlive, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;
	uint32		nbytes = vs->geometry.signature_bytes;
	BlockNumber tid_block = ItemPointerGetBlockNumber(tid);

	/* Another batch's row. */
	if (tid_block < vs->rows_lo || tid_block >= vs->rows_hi)
		return;

	MemoryContext old = MemoryContextSwitchTo(vs->tuple_cxt);

	memset(vs->expected, 0, nbytes);
	bloomidx_form_signature(&vs->state, values, isnull, vs->expected, vs->row_keys);
	MemoryContextSwitchTo(old);
	MemoryContextReset(vs->tuple_cxt);
	vs->heap_rows++;

	BlockNumber heap_block = ItemPointerGetBlockNumber(tid);
	OffsetNumber offset = ItemPointerGetOffsetNumber(tid);
	uint64		key = tid_key(heap_block, offset);
	Size		first = lower_bound(vs, key);
	Size		i;

	/* Normally one entry per TID; any one that holds the bits will do. */
	for (i = first; i < vs->nentries && (vs->keys[i].key & ~(uint64) 0xFFFF) == key; i++)
	{
		const uint8 *sig = vs->signatures + (Size) vs->keys[i].entry * nbytes;
		uint32		b;

		for (b = 0; b < nbytes; b++)
			if ((sig[b] & vs->expected[b]) != vs->expected[b])
				break;
		if (b == nbytes)
		{
			verify_check_row_keys(vs, &vs->keys[i], heap_block, offset);
			verify_check_row_filter(vs, &vs->keys[i], heap_block, offset);
			return;
		}
	}

	if (i == first)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) of table \"%s\" has no entry in index \"%s\"",
						heap_block, offset, RelationGetRelationName(vs->heap),
						RelationGetRelationName(index)),
				 errhint("Please REINDEX it.")));

	const EntryKey *k = &vs->keys[first];
	const uint8 *sig = vs->signatures + (Size) k->entry * nbytes;
	uint32		missing = 0;
	uint32		wanted = 0;

	for (uint32 b = 0; b < nbytes; b++)
	{
		wanted += __builtin_popcount(vs->expected[b]);
		missing += __builtin_popcount(vs->expected[b] & ~sig[b]);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("the entry of heap tuple (%u,%u) of table \"%s\" in index \"%s\" does not match the tuple",
					heap_block, offset, RelationGetRelationName(vs->heap),
					RelationGetRelationName(index)),
			 errdetail("Entry %u of block %u lacks %u of the %u bits the tuple's values set.",
					   (uint32) (k->key & 0xFFFF), k->index_block, missing, wanted),
			 errhint("Please REINDEX it.")));
}

/*
 * Every row the snapshot sees in the batch's heap blocks must have its
 * entry: a scan of the table as CREATE INDEX CONCURRENTLY's first one does
 * it (an MVCC snapshot, index expressions and the partial index's
 * predicate evaluated for us).
 */
static void
check_batch_rows(VerifyState *vs, Snapshot snapshot)
{
	pg_qsort(vs->keys, vs->nentries, sizeof(EntryKey), compare_keys);
	if (vs->nfilter_refs > 0)
		pg_qsort(vs->filter_refs, vs->nfilter_refs, sizeof(SegmentFilterRef), verify_compare_filter_refs);

	IndexInfo  *indexInfo = vs->indexInfo;

	indexInfo->ii_Concurrent = true;	/* the MVCC snapshot's rows only */
	indexInfo->ii_Unique = false;
	indexInfo->ii_ExclusionOps = NULL;
	indexInfo->ii_ExclusionProcs = NULL;
	indexInfo->ii_ExclusionStrats = NULL;

	/* No synchronized scan: the first row reported is the first of the batch's blocks. */
	TableScanDesc scan = table_beginscan_strat(vs->heap, snapshot, 0, NULL, true, false);

	/*
	 * Only the batch's blocks (check_row skips the others whatever the
	 * table's access method): a heap scan is told where to start and stop
	 * (the build scan takes a range only with a snapshot of its own, and a
	 * later one than ours would see rows whose entries came after the
	 * index was read).
	 */
	if (vs->heap->rd_tableam == GetHeapamTableAmRoutine())
		heap_setscanlimits(scan, vs->rows_lo, vs->rows_hi - vs->rows_lo);

	/* It ends the scan. */
	table_index_build_scan(vs->heap, vs->index, indexInfo, true, false,
						   check_row, vs, scan);
}

/* Opens and locks the table, then the index, as a reader; checks rights. */
static void
open_relations(Oid indexoid, Relation *heap_out, Relation *index_out)
{
	bloomidx_check_is_index(indexoid);

	/* Rights first, with no lock taken: a user who may not read the table
	 * must not be able to queue locks on it either. */
	Oid			heapoid = IndexGetRelation(indexoid, true);

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not find the table of index \"%s\"", get_rel_name(indexoid))));
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to verify index \"%s\"", get_rel_name(indexoid)),
				 errdetail("Verifying an index reads its table \"%s\", which needs the SELECT privilege on it.",
						   get_rel_name(heapoid))));

	/* The table before the index, as every reader does (no deadlock). */
	Relation	heap = try_table_open(heapoid, AccessShareLock);
	Relation	index = heap ? try_relation_open(indexoid, AccessShareLock) : NULL;

	/* Dropped, or even replaced, while unlocked? */
	if (heap == NULL || index == NULL || IndexGetRelation(indexoid, true) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u was dropped while it was being opened", indexoid)));

	bloomidx_check_index_argument(index, indexoid, "data");

	bloomidx_check_index_ready(index);

	*heap_out = heap;
	*index_out = index;
}

Datum
bloomidx_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = bloomidx_index_argument(fcinfo, "bloomidx_verify");
	Relation	heap;
	Relation	index;

	open_relations(indexoid, &heap, &index);

	/* During recovery an UNLOGGED index has no data to read. */
	if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" is unlogged and the server is in recovery: it has nothing to verify",
						RelationGetRelationName(index))));
		index_close(index, AccessShareLock);
		table_close(heap, AccessShareLock);
		PG_RETURN_VOID();
	}

	bool		all_rows = index->rd_index->indisvalid;

	if (!all_rows)
		ereport(NOTICE,
				(errmsg("index \"%s\" is not valid: only its pages are verified, not that it has every row",
						RelationGetRelationName(index))));

	/*
	 * Index expressions and predicates, and the opclasses' hash functions,
	 * run as the table's owner, restricted, with a safe search_path, as
	 * they do in amcheck (a table owner's functions must not run with the
	 * caller's rights, and a hostile search_path must not change them).
	 */
	Oid			save_userid;
	int			save_sec_context;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	int			save_nestlevel = NewGUCNestLevel();

	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);

	/*
	 * The snapshot before the first index page is read: every row it sees
	 * was committed, so had its entry inserted, before then.
	 */
	Snapshot	snapshot = InvalidSnapshot;

	if (all_rows)
	{
		snapshot = RegisterSnapshot(GetTransactionSnapshot());

		/*
		 * An older transaction snapshot (REPEATABLE READ) may see rows
		 * that a broken HOT chain keeps out of the index (indcheckxmin).
		 */
		if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified with this transaction's snapshot",
							RelationGetRelationName(index)),
					 errhint("Verify it in a READ COMMITTED transaction.")));
	}

	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx verify",
											  ALLOCSET_DEFAULT_SIZES);
	VerifyState *vs = (VerifyState *) MemoryContextAllocZero(cxt, sizeof(VerifyState));

	vs->index = index;
	vs->heap = heap;
	vs->cxt = cxt;
	vs->tuple_cxt = AllocSetContextCreate(cxt, "bloomidx verify row", ALLOCSET_DEFAULT_SIZES);

	vs->pass_cxt = AllocSetContextCreate(cxt, "bloomidx verify pass", ALLOCSET_DEFAULT_SIZES);

	verify_check_metapage(vs);

	/*
	 * The entries kept (a TID key, a signature, a pending row's keys'
	 * digest: 16 bytes and the signature's, 8 more where pending rows keep
	 * filter keys) within maintenance_work_mem, as amcheck's heapallindexed
	 * sizes its filter, and room for ENTRIES_AT_LEAST entries whatever the
	 * setting.  A larger index is checked in batches of heap blocks, every
	 * page again in each (check_batch).
	 */
	Size		entry_bytes = sizeof(EntryKey) + vs->geometry.signature_bytes +
		(vs->geometry.keys > 0 ? sizeof(uint64) : 0);
	Size		entries = (Size) maintenance_work_mem * 1024 / entry_bytes;

	vs->entry_budget = Max(entries, ENTRIES_AT_LEAST);

	/*
	 * Every row the snapshot sees lies before the table's length now (a
	 * rewrite would need a stronger lock than ours): the batches end there,
	 * and entries past it, of rows inserted since, are checked but not kept.
	 * An index that is not valid keeps none.
	 */
	BlockNumber rows_end = all_rows ? RelationGetNumberOfBlocks(heap) : 0;

	vs->rows_lo = 0;
	vs->rows_hi = rows_end;

	/*
	 * The first batch as wide as the directory's counts say would fill nine
	 * tenths of the budget (its segments' live rows, and a pending page's
	 * capacity a pending page), as each next batch takes the last one's
	 * density: a first batch over the whole table took a pass over the
	 * index only to learn it was too wide.  Rows unevenly spread may still
	 * make a batch too wide, which its pass finds (check_batch).
	 */
	if (rows_end > 0)
	{
		DirectoryStats ds;

		bloomidx_directory_stats(index, &ds);

		double		entries_now = ds.live_rows + (double) ds.pending_pages * vs->geometry.capacity;
		double		width = blocks_that_fit(vs, (double) rows_end, entries_now);

		if (width < (double) rows_end)
			vs->rows_hi = (BlockNumber) Max(1.0, width);

		/*
		 * Each batch is a pass over the whole index: say so where there
		 * will be many (a large index checked within a small
		 * maintenance_work_mem), as the time it takes grows with them.
		 */
		double		batches = std::ceil((double) rows_end / Max(width, 1.0));

		if (batches >= MANY_BATCHES)
			ereport(NOTICE,
					(errmsg("index \"%s\" will be read about %.0f times",
							RelationGetRelationName(index), batches),
					 errdetail("Each batch of the table's rows whose entries fit in maintenance_work_mem takes a pass over the index."),
					 errhint("Increase maintenance_work_mem to verify the index in fewer passes.")));
	}
	vs->indexInfo = all_rows ? BuildIndexInfo(index) : NULL;
	/* Every pass checks every page: the first's page whose sums disagree, reported last. */
	PageProblem sums_problem = PageProblem::None;
	BlockNumber sums_problem_block = InvalidBlockNumber;

	for (;;)
	{
		check_batch(vs);
		vs->batches++;
		if (sums_problem == PageProblem::None)
		{
			sums_problem = vs->sums_problem;
			sums_problem_block = vs->sums_problem_block;
		}
		if (!all_rows || rows_end == 0)
			break;
		check_batch_rows(vs, snapshot);

		if (vs->rows_hi >= rows_end)
			break;

		/*
		 * The next blocks: as many as fit at this batch's density, so that a
		 * dense stretch of the table does not narrow every batch after it.
		 */
		double		width = batch_blocks_that_fit(vs);

		vs->rows_lo = vs->rows_hi;
		vs->rows_hi = (BlockNumber) Min((double) rows_end, (double) vs->rows_lo + Max(width, 1.0));
	}
	if (all_rows)
		UnregisterSnapshot(snapshot);
	if (sums_problem != PageProblem::None)
		bloomidx_report_page_problem(index, sums_problem_block, sums_problem);

	ereport(DEBUG1,
			(errmsg_internal("bloomidx_verify: index \"%s\": %u blocks, %u segments, %u pending pages (%u in %u pending groups), %zu entries in the last batch, room for %zu; table \"%s\": " INT64_FORMAT " rows checked in %u batches, %u passes over the index",
							 RelationGetRelationName(index), vs->index_blocks, vs->segments,
							 vs->pending_pages, vs->npending_slots, vs->npending_groups,
							 vs->nentries, vs->max_entries, RelationGetRelationName(heap), vs->heap_rows,
							 vs->batches, vs->passes)));

	MemoryContextDelete(cxt);
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/*
	 * Locks released now, as amcheck does, so that one query can verify
	 * many indexes: nothing here sent an invalidation.
	 */
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_VOID();
}
