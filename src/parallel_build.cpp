/*
 * parallel_build.cpp: CREATE INDEX over parallel workers.
 *
 * A Bloom index has no order to keep, so a parallel build needs no sort
 * and no merge: the leader and each worker take blocks of one parallel
 * heap scan and write segments of their own, extending the index under
 * the relation extension lock (which PostgreSQL does not share within a
 * parallel group).  Segment ids and directory slots come from one counter
 * in shared memory.  Each participant writes its last rows, less than a
 * segment, as a segment where they would fill as many pending pages as a
 * segment has slices, else as pending pages of its own (build.cpp); each
 * worker leaves the list of them in shared memory, every participant its
 * segments' directory entries in one shared array (segment id i at i - 1),
 * and the leader joins the lists, publishes everything, and seals the
 * joined list by the rule of a build's tail (bloomidx_build).  Whoever
 * writes a page WAL-logs it (build.cpp), so the WAL work is shared too.
 *
 * The number of workers is PostgreSQL's own choice for an index build
 * (plan_create_index_workers: max_parallel_maintenance_workers, the
 * table's size or its parallel_workers option), as for btree.  As btree,
 * the leader takes part in the scan only under parallel_leader_participation
 * (or when no worker could be launched).
 */
#include "bloomidx.h"

extern "C" {
#include "storage/sharedfileset.h"
}

/* Keys of the shared memory table of contents. */
#define KEY_SHARED			UINT64CONST(0xB1D5000000000001)
#define KEY_SCAN			UINT64CONST(0xB1D5000000000002)
#define KEY_RESULTS			UINT64CONST(0xB1D5000000000003)
#define KEY_QUERY_TEXT		UINT64CONST(0xB1D5000000000004)
#define KEY_WAL_USAGE		UINT64CONST(0xB1D5000000000005)
#define KEY_BUFFER_USAGE	UINT64CONST(0xB1D5000000000006)
#define KEY_ENTRIES			UINT64CONST(0xB1D5000000000007)

/* What the leader and the workers share, besides the scan and the pages. */
typedef struct ParallelBuildShared
{
	Oid			heap_relid;
	Oid			index_relid;
	bool		concurrent;		/* CREATE INDEX CONCURRENTLY, REINDEX CONCURRENTLY */

	/* Sums over the workers, under mutex. */
	slock_t		mutex;
	double		heap_tuples;
	double		index_tuples;
	bool		broken_hot_chain;
	BuildSegmentIds ids;		/* segment ids and directory slots, for all */
	SharedFileSet fileset;		/* the workers' filter spools (filter_write.cpp) */
} ParallelBuildShared;

/* What a worker leaves the leader: its pending pages and its segments. */
typedef struct WorkerResult
{
	BlockNumber pending_head;
	BlockNumber pending_tail;
	uint32		pending_pages;
	FilterSlotsLeft filters;	/* its last filter slots, in its spool */
} WorkerResult;

/*
 * The workers index_build decided on.  Before PostgreSQL 17 (which asks the
 * access method's amcanbuildparallel), index_build decides only for btree
 * and leaves ii_ParallelWorkers at 0 for every other access method, so the
 * same decision is made here, under index_build's own conditions.  Its
 * one caller outside bootstrap that forbids a parallel build rebuilds the
 * indexes of a table truncated in its creating transaction: an empty
 * table, for which the planner chooses no workers unless the table's
 * parallel_workers option asks for some, and then they find nothing to do.
 */
int
bloomidx_parallel_build_workers(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (BLOOMIDX_INDEX_BUILD_PLANS_WORKERS || indexInfo->ii_ParallelWorkers > 0)
		return indexInfo->ii_ParallelWorkers;
	if (!IsNormalProcessingMode() || IsInParallelMode())
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
}

/*
 * Runs the build over `nworkers` workers and the leader, whose part ends
 * holding the index's last partly filled page.  Returns false, having
 * done nothing, when no shared memory was to be had (the caller then
 * builds serially).
 */
bool
bloomidx_build_parallel(Relation heap, Relation index, IndexInfo *indexInfo, int nworkers,
						BloomidxBuildPart *leader)
{
	EnterParallelMode();
	ParallelContext *pcxt = CreateParallelContext("bloomidx", "bloomidx_parallel_build_main",
												  nworkers);

	/* As a serial build: every tuple, or those of an MVCC snapshot when concurrent. */
	Snapshot	snapshot = indexInfo->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot())
		: SnapshotAny;
	Size		scan_size = table_parallelscan_estimate(heap, snapshot);
	Size		query_len = debug_query_string != NULL ? strlen(debug_query_string) + 1 : 0;

	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(ParallelBuildShared));
	shm_toc_estimate_chunk(&pcxt->estimator, scan_size);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WorkerResult), nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator,
						   mul_size(sizeof(bloomidx::SegmentEntry), bloomidx::kMaxSegments));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), nworkers));
	if (query_len > 0)
		shm_toc_estimate_chunk(&pcxt->estimator, query_len);
	shm_toc_estimate_keys(&pcxt->estimator, query_len > 0 ? 7 : 6);

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	ParallelBuildShared *shared =
		(ParallelBuildShared *) shm_toc_allocate(pcxt->toc, sizeof(ParallelBuildShared));

	shared->heap_relid = RelationGetRelid(heap);
	shared->index_relid = RelationGetRelid(index);
	shared->concurrent = indexInfo->ii_Concurrent;
	SpinLockInit(&shared->mutex);
	shared->heap_tuples = 0;
	shared->index_tuples = 0;
	shared->broken_hot_chain = false;
	bloomidx_build_ids_init(&shared->ids);
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	shm_toc_insert(pcxt->toc, KEY_SHARED, shared);

	ParallelTableScanDesc pscan = (ParallelTableScanDesc) shm_toc_allocate(pcxt->toc, scan_size);

	table_parallelscan_initialize(heap, pscan, snapshot);
	shm_toc_insert(pcxt->toc, KEY_SCAN, pscan);

	/* One result per worker, empty until it ends (a worker never launched leaves it so). */
	WorkerResult *results = (WorkerResult *)
		shm_toc_allocate(pcxt->toc, mul_size(sizeof(WorkerResult), nworkers));

	memset(results, 0, mul_size(sizeof(WorkerResult), nworkers));
	shm_toc_insert(pcxt->toc, KEY_RESULTS, results);

	/* Every participant's directory entries, at their segment ids. */
	bloomidx::SegmentEntry *entries = (bloomidx::SegmentEntry *)
		shm_toc_allocate(pcxt->toc, mul_size(sizeof(bloomidx::SegmentEntry), bloomidx::kMaxSegments));

	shm_toc_insert(pcxt->toc, KEY_ENTRIES, entries);

	/* Workers' WAL and buffer use, for pg_stat_statements and EXPLAIN-like accounting. */
	WalUsage   *wal_usage = (WalUsage *) shm_toc_allocate(pcxt->toc,
														 mul_size(sizeof(WalUsage), nworkers));
	BufferUsage *buffer_usage =
		(BufferUsage *) shm_toc_allocate(pcxt->toc, mul_size(sizeof(BufferUsage), nworkers));

	shm_toc_insert(pcxt->toc, KEY_WAL_USAGE, wal_usage);
	shm_toc_insert(pcxt->toc, KEY_BUFFER_USAGE, buffer_usage);

	if (query_len > 0)
	{
		char	   *query = (char *) shm_toc_allocate(pcxt->toc, query_len);

		memcpy(query, debug_query_string, query_len);
		shm_toc_insert(pcxt->toc, KEY_QUERY_TEXT, query);
	}

	LaunchParallelWorkers(pcxt);

	/* The leader scans too unless told not to, and always if no worker started. */
	bool		leader_scans = parallel_leader_participation || pcxt->nworkers_launched == 0;

	ereport(DEBUG1,
			(errmsg_internal("bloomidx index \"%s\": parallel build, %d of %d workers launched, leader %s",
							 RelationGetRelationName(index), pcxt->nworkers_launched,
							 nworkers, leader_scans ? "participating" : "not participating")));
	/* The leader's ids come from the shared counter too, while workers run. */
	BuildSegmentIds *own_ids = leader->ids;
	bloomidx::SegmentEntry *own_entries = leader->entries;

	leader->ids = &shared->ids;
	leader->entries = entries;
	bloomidx_filter_group_share(&leader->filters, &shared->ids, NULL, -1);
	/*
	 * The scan's step of the progress ends with the leader's part of it; a
	 * leader that takes no part waits for the workers' scans in it.
	 */
	if (leader_scans)
	{
		bloomidx_build_part_scan(leader, heap, index, indexInfo,
								 bloomidx_beginscan_parallel(heap, pscan), true);
		bloomidx_build_progress(BUILD_PHASE_LAST_ROWS, 0, 0);
	}
	bloomidx_build_part_finish(leader, index, true);

	WaitForParallelWorkersToFinish(pcxt);
	for (int i = 0; i < pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&buffer_usage[i], &wal_usage[i]);

	for (int i = 0; i < nworkers; i++)
		bloomidx_build_join(leader, index, results[i].pending_head, results[i].pending_tail,
							results[i].pending_pages);
	/* The next id to hand out, which the metapage keeps, and every segment's entry. */
	own_ids->next_id = shared->ids.next_id;
	own_ids->next_group_id = shared->ids.next_group_id;
	own_ids->room = shared->ids.room;
	leader->ids = own_ids;
	bloomidx_filter_group_share(&leader->filters, NULL, NULL, -1);
	leader->nentries = shared->ids.next_id - 1;
	memcpy(own_entries, entries, leader->nentries * sizeof(bloomidx::SegmentEntry));
	leader->entries = own_entries;

	/*
	 * Every participant's last filter group, partly filled, written by the
	 * leader as few groups: the workers' spools are read before the file
	 * set goes with the parallel context.
	 */
	BufFile   **spools = (BufFile **) palloc(Max(nworkers, 1) * sizeof(BufFile *));
	int			nspools = 0;

	for (int i = 0; i < nworkers; i++)
		if (results[i].filters.nslots > 0)
			spools[nspools++] = bloomidx_filter_group_import(&leader->filters, &shared->fileset.fs, i,
															 &results[i].filters, index,
															 leader->entries, leader->ids,
															 &leader->writer);
	bloomidx_filter_group_flush_all(index, &leader->filters, leader->ids, leader->entries,
									&leader->writer);
	for (int i = 0; i < nspools; i++)
		BufFileClose(spools[i]);
	pfree(spools);
	leader->heap_tuples += shared->heap_tuples;
	leader->index_tuples += shared->index_tuples;
	if (shared->broken_hot_chain)
		indexInfo->ii_BrokenHotChain = true;

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}

/* A worker: its share of the heap scan, then its last page and counts to the leader. */
void
bloomidx_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	debug_query_string = (const char *) shm_toc_lookup(toc, KEY_QUERY_TEXT, true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	ParallelBuildShared *shared = (ParallelBuildShared *) shm_toc_lookup(toc, KEY_SHARED, false);

	/* The locks the leader holds (index.c's choice), shared within the group. */
	LOCKMODE	heap_lockmode = shared->concurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	index_lockmode = shared->concurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap = table_open(shared->heap_relid, heap_lockmode);
	Relation	index = index_open(shared->index_relid, index_lockmode);
	IndexInfo  *indexInfo = BuildIndexInfo(index);

	indexInfo->ii_Concurrent = shared->concurrent;

	InstrStartParallelQuery();

	BloomidxBuildPart *part = (BloomidxBuildPart *) palloc0(sizeof(BloomidxBuildPart));
	ParallelTableScanDesc pscan = (ParallelTableScanDesc) shm_toc_lookup(toc, KEY_SCAN, false);

	WorkerResult *result = &((WorkerResult *) shm_toc_lookup(toc, KEY_RESULTS, false))[ParallelWorkerNumber];

	bloomidx_build_part_init(part, index, true, &shared->ids,
							 (bloomidx::SegmentEntry *) shm_toc_lookup(toc, KEY_ENTRIES, false));
	SharedFileSetAttach(&shared->fileset, seg);
	bloomidx_filter_group_share(&part->filters, &shared->ids, &shared->fileset.fs,
								ParallelWorkerNumber);
	bloomidx_build_part_scan(part, heap, index, indexInfo, bloomidx_beginscan_parallel(heap, pscan),
							 false);

	bloomidx_build_part_finish(part, index, true);
	bloomidx_filter_group_export(&part->filters, &result->filters);
	result->pending_head = part->pending_head;
	result->pending_tail = part->pending_tail;
	result->pending_pages = part->pending_pages;

	SpinLockAcquire(&shared->mutex);
	shared->heap_tuples += part->heap_tuples;
	shared->index_tuples += part->index_tuples;
	if (indexInfo->ii_BrokenHotChain)
		shared->broken_hot_chain = true;
	SpinLockRelease(&shared->mutex);

	WalUsage   *wal_usage = (WalUsage *) shm_toc_lookup(toc, KEY_WAL_USAGE, false);
	BufferUsage *buffer_usage = (BufferUsage *) shm_toc_lookup(toc, KEY_BUFFER_USAGE, false);

	InstrEndParallelQuery(&buffer_usage[ParallelWorkerNumber], &wal_usage[ParallelWorkerNumber]);

	bloomidx_build_part_end(part);
	index_close(index, index_lockmode);
	table_close(heap, heap_lockmode);
}
