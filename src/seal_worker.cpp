/*
 * seal_worker.cpp: seals in a background worker, so that the INSERT that
 * finds a segment's worth of rows pending does not wait for the seal.
 *
 * A seal of a full segment takes about 50 ms on a quiet machine and 75
 * beside busy readers (storage/README.md, Steady state): too long for the
 * one INSERT that happens to link the tail past the threshold.  With
 * bloomidx.background_seal on (the default), that insert asks the
 * postmaster for a worker (`bloomidx seal` in pg_stat_activity) and goes
 * on; the worker connects to the database, takes the seal lock if nobody
 * holds it (a holder seals or runs VACUUM, which seals), and seals the
 * segments due, as an inserter would.  Until it has, the rows stay pending,
 * where every query finds them as before, so a late or failed worker only
 * costs queries pending pages.
 *
 * The insert seals itself, as before, when a worker cannot help: the
 * setting is off, no worker slot is free (max_worker_processes), the index
 * is temporary (this backend's alone), or it or its file is new in this
 * transaction (a worker would not see it until the commit), the session
 * stops or pauses seals to test them (bloomidx.debug_seal_stop,
 * debug_pause_at: its own seal is the one to watch), or a
 * segment's worth more has gathered behind the one due
 * (workers that do not keep up, or do not start): so pending rows stay
 * bounded whatever the workers do.  A backend asks for one worker an index
 * at a time: while the one it asked for has not finished, it asks again
 * for none.
 */
#include "bloomidx.h"

#include "support/compat.h"

extern "C" {
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
}

extern "C" {
PGDLLEXPORT void bloomidx_seal_worker_main(Datum main_arg);
}

bool		bloomidx_background_seal = true;

/* What the worker takes from the insert that asked for it (bgw_extra). */
struct SealRequest
{
	Oid			database;
	int32		segment_rows;	/* the inserter's bloomidx.segment_rows */
};
static_assert(sizeof(SealRequest) <= BGW_EXTRALEN, "a seal request fits bgw_extra");

/*
 * The workers this backend asked for, an index each (a backend inserting
 * into more bloomidx indexes than this forgets the oldest: at worst it asks
 * for a second worker, which finds nothing due and leaves).
 */
#define ASKED_INDEXES 8

struct AskedWorker
{
	Oid			index;
	BackgroundWorkerHandle *handle; /* in TopMemoryContext */
};

static AskedWorker asked[ASKED_INDEXES];
static int	asked_next;

/* Whether the worker this backend asked for index `indexoid` has yet to finish. */
static bool
worker_pending(Oid indexoid)
{
	for (int i = 0; i < ASKED_INDEXES; i++)
	{
		pid_t		pid;

		if (asked[i].index != indexoid || asked[i].handle == NULL)
			continue;
		BgwHandleStatus status = GetBackgroundWorkerPid(asked[i].handle, &pid);

		return status == BGWH_NOT_YET_STARTED || status == BGWH_STARTED;
	}
	return false;
}

/* Remembers the worker asked for `indexoid`, in its old slot or the oldest one. */
static void
remember_worker(Oid indexoid, BackgroundWorkerHandle *handle)
{
	int			slot = -1;

	for (int i = 0; i < ASKED_INDEXES && slot < 0; i++)
		if (asked[i].index == indexoid)
			slot = i;
	if (slot < 0)
	{
		slot = asked_next;
		asked_next = (asked_next + 1) % ASKED_INDEXES;
	}
	if (asked[slot].handle != NULL)
		pfree(asked[slot].handle);
	asked[slot].index = indexoid;
	asked[slot].handle = handle;
}

/*
 * Asks for a worker to seal `index`; false when none can be had (no free
 * slot), or when none should be asked (see the file's comment).
 */
static bool
ask_for_worker(Relation index)
{
	Oid			indexoid = RelationGetRelid(index);
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	SealRequest request;

	if (!bloomidx_background_seal || !IsUnderPostmaster || IsParallelWorker() ||
		bloomidx_debug_seal_stop != 0 || bloomidx_debug_pause_at != PAUSE_NONE ||
		RelationUsesLocalBuffers(index) ||
		index->rd_createSubid != InvalidSubTransactionId ||
		BLOOMIDX_NEW_FILE_SUBID(index) != InvalidSubTransactionId)
		return false;
	if (worker_pending(indexoid))
		return true;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "bloomidx", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "bloomidx_seal_worker_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "bloomidx seal of index %u", indexoid);
	strlcpy(worker.bgw_type, "bloomidx seal", BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(indexoid);
	request.database = MyDatabaseId;
	request.segment_rows = bloomidx_segment_rows;
	memcpy(worker.bgw_extra, &request, sizeof(request));
	worker.bgw_notify_pid = 0;

	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	bool		registered = RegisterDynamicBackgroundWorker(&worker, &handle);

	MemoryContextSwitchTo(old);
	if (!registered)
		return false;
	remember_worker(indexoid, handle);
	return true;
}

/*
 * After an insert linked a new tail with `pending_pages` pages pending, of
 * `capacity` rows each: seals what is due, in a worker if one can be had,
 * else here (storage/seal.cpp, bloomidx_seal_if_due).
 */
void
bloomidx_seal_when_due(Relation index, uint32 pending_pages, uint32 capacity)
{
	uint64		rows = bloomidx_pending_rows_sealable(pending_pages, capacity);
	uint32		threshold = bloomidx_seal_threshold(capacity);

	if (rows < threshold)
		return;
	if (rows < (uint64) threshold + bloomidx_segment_capacity(capacity) && ask_for_worker(index))
		return;
	bloomidx_seal_if_due(index, pending_pages, capacity);
}

/*
 * The worker's transaction: opens the index as an insert would (its table
 * first), unless it has gone or is no longer one that takes rows; seals,
 * as the table's owner (as VACUUM and autovacuum do), the segments due, up
 * to a few: an insert asks again for what is left.
 */
#define WORKER_MAX_SEALS 8

static void
seal_as_worker(Oid indexoid, int32 segment_rows)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Oid			save_userid;
	int			save_sec_context;

	if (!OidIsValid(heapoid))
		return;
	LockRelationOid(heapoid, RowExclusiveLock);
	Relation	index = try_relation_open(indexoid, RowExclusiveLock);

	if (index == NULL)
		return;
	if (index->rd_rel->relkind != RELKIND_INDEX || index->rd_indam == NULL ||
		index->rd_indam->aminsert != bloomidx_insert ||
		index->rd_index->indrelid != heapoid || !index->rd_index->indisready)
	{
		relation_close(index, NoLock);
		return;
	}
	Relation	heap = table_open(heapoid, NoLock);
	Oid			owner = heap->rd_rel->relowner;

	table_close(heap, NoLock);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	/* A process of its own: the inserter's segment size, for its whole life. */
	bloomidx_segment_rows = segment_rows;
	if (ConditionalLockPage(index, bloomidx::kMetaBlock, ExclusiveLock))
	{
		uint32		threshold = bloomidx_seal_threshold(bloomidx_cached_meta(index)->capacity);

		for (int i = 0; i < WORKER_MAX_SEALS && bloomidx_seal_once(index, threshold) > 0; i++)
			CHECK_FOR_INTERRUPTS();
		UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	}
	SetUserIdAndSecContext(save_userid, save_sec_context);
	relation_close(index, NoLock);
}

/*
 * The worker: connects as the bootstrap superuser (the table's owner may
 * not log in) to the inserter's database, seals in one transaction, and
 * exits.  An error ends it like any backend's: logged, the transaction
 * rolled back, the rows still pending.
 */
void
bloomidx_seal_worker_main(Datum main_arg)
{
	SealRequest request;

	memcpy(&request, MyBgworkerEntry->bgw_extra, sizeof(request));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(request.database, InvalidOid, 0);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "sealing pending rows");
	seal_as_worker(DatumGetObjectId(main_arg), request.segment_rows);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}
