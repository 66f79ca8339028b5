/*
 * seal_worker.cpp: seals in a background worker, so that the INSERT that
 * finds a segment's worth of rows pending does not wait for the seal.
 *
 * A seal of a full segment takes about 50 ms on a quiet machine and 75
 * beside busy readers (storage/README.md, Steady state): too long for the
 * one INSERT that happens to link the tail past the threshold.  With
 * bloomidx.background_seal on (the default), that insert asks the
 * postmaster for a worker (`bloomidx seal` in pg_stat_activity) and goes
 * on; the worker connects to the database, takes the seal lock, and seals
 * the segments due, as an inserter would.  Until it has, the rows stay pending,
 * where every query finds them as before, so a late or failed worker only
 * costs queries pending pages.
 *
 * The insert seals itself, as before, when a worker cannot help: the
 * setting is off, no worker slot is free (max_worker_processes), the index
 * is temporary (this backend's alone), or it or its file is new in this
 * transaction (a worker would not see it until the commit), the
 * transaction holds the table or the index against a worker's lock, the session
 * stops or pauses seals to test them (bloomidx.debug_seal_stop,
 * debug_pause_at: its own seal is the one to watch), the last worker it
 * asked for stopped with the directory unchanged (it failed, or found the
 * locks taken), or a segment's worth more has gathered behind the one due
 * (workers that do not keep up): so pending rows stay bounded whatever the
 * workers do.  A backend asks for one worker an index at a time, and none
 * while another holds the seal lock (a seal or VACUUM is under way).
 *
 * A worker never waits long: for the table's and the index's locks (an
 * insert's) and for the seal lock it tries for a second at most, then
 * leaves, so that a transaction holding the table cannot pin a slot that
 * parallel queries and logical replication share.
 */
#include "bloomidx.h"

#include "support/compat.h"

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
	uint32		generation;		/* the directory's when it was asked for */
};

static AskedWorker asked[ASKED_INDEXES];
static int	asked_next;

enum AskedState
{
	ASKED_NONE,					/* none asked for, or one that did its work */
	ASKED_RUNNING,				/* asked for, not yet stopped */
	ASKED_IN_VAIN				/* stopped, the directory as it was */
};

/* What became of the worker this backend last asked for index `index`. */
static AskedState
asked_state(Relation index)
{
	for (int i = 0; i < ASKED_INDEXES; i++)
	{
		pid_t		pid;

		if (asked[i].index != RelationGetRelid(index) || asked[i].handle == NULL)
			continue;
		BgwHandleStatus status = GetBackgroundWorkerPid(asked[i].handle, &pid);

		if (status == BGWH_NOT_YET_STARTED || status == BGWH_STARTED)
			return ASKED_RUNNING;
		if (bloomidx_directory_generation(index) == asked[i].generation)
		{
			/* Once: the next due insert asks a worker again. */
			pfree(asked[i].handle);
			asked[i].handle = NULL;
			return ASKED_IN_VAIN;
		}
		return ASKED_NONE;
	}
	return ASKED_NONE;
}

/* Remembers the worker asked for `indexoid`, in its old slot or the oldest one. */
static void
remember_worker(Oid indexoid, BackgroundWorkerHandle *handle, uint32 generation)
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
	asked[slot].generation = generation;
}

/*
 * Whether this transaction holds a lock on the index or its table that a
 * worker's (an insert's, RowExclusiveLock) would wait for: LOCK TABLE, or
 * ALTER TABLE, before a load in the same transaction.  A worker would try
 * in vain and leave, again and again for the whole load, each time a slot
 * of max_worker_processes taken for nothing.
 */
static bool
locked_against_workers(Relation index)
{
	if (CheckRelationLockedByMe(index, ShareLock, true))
		return true;
	Relation	heap = RelationIdGetRelation(index->rd_index->indrelid);
	bool		locked = RelationIsValid(heap) && CheckRelationLockedByMe(heap, ShareLock, true);

	if (RelationIsValid(heap))
		RelationClose(heap);
	return locked;
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
		BLOOMIDX_NEW_FILE_SUBID(index) != InvalidSubTransactionId ||
		locked_against_workers(index))
		return false;
	switch (asked_state(index))
	{
		case ASKED_RUNNING:
			return true;
		case ASKED_IN_VAIN:
			return false;
		case ASKED_NONE:
			break;
	}
	/* A seal or VACUUM under way: it seals, or the next insert asks. */
	if (!ConditionalLockPage(index, bloomidx::kMetaBlock, ExclusiveLock))
		return true;
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION |
		BLOOMIDX_BGWORKER_INTERRUPTIBLE;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	/* The extension's module_pathname, whatever dynamic_library_path says. */
	strlcpy(worker.bgw_library_name, "$libdir/bloomidx", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "bloomidx_seal_worker_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "bloomidx seal of index %u", indexoid);
	strlcpy(worker.bgw_type, "bloomidx seal", BGW_MAXLEN);
	worker.bgw_main_arg = ObjectIdGetDatum(indexoid);
	request.database = MyDatabaseId;
	request.segment_rows = bloomidx_segment_rows;
	memcpy(worker.bgw_extra, &request, sizeof(request));
	worker.bgw_notify_pid = 0;

	uint32		generation = bloomidx_directory_generation(index);
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	bool		registered = RegisterDynamicBackgroundWorker(&worker, &handle);

	MemoryContextSwitchTo(old);
	if (!registered)
		return false;
	remember_worker(indexoid, handle, generation);
	elog(DEBUG1, "bloomidx: a background worker was asked to seal index \"%s\"",
		 RelationGetRelationName(index));
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
 * Tries for about a second to take a lock, by try(); false if it could not.
 * Conditional tries with short sleeps, so that a worker never queues behind
 * a transaction that holds the table for long (or before a waiter that
 * VACUUM or DDL would then queue behind).
 */
#define WORKER_LOCK_TRIES 100
#define WORKER_LOCK_SLEEP_MS 10

static bool
worker_try_lock(bool (*try_lock) (Relation index, Oid relid), Relation index, Oid relid)
{
	for (int i = 0; i < WORKER_LOCK_TRIES; i++)
	{
		if (try_lock(index, relid))
			return true;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 WORKER_LOCK_SLEEP_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	return false;
}

static bool
try_relation_lock(Relation index, Oid relid)
{
	return ConditionalLockRelationOid(relid, RowExclusiveLock);
}

static bool
try_seal_lock(Relation index, Oid relid)
{
	return ConditionalLockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
}

/*
 * One transaction of the worker: locks the table and the index as an
 * insert does, unless the index has gone or no longer takes rows; then, as
 * the table's owner (as VACUUM does), seals one segment if one is due,
 * under the seal lock, gives the pending pages it left their pending
 * filters again (bloomidx_pending_filters_after_seal), and flushes the WAL
 * of it.  True when it sealed one.
 */
static bool
seal_one_as_worker(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	int64		sealed = 0;

	if (!OidIsValid(heapoid) || !worker_try_lock(try_relation_lock, NULL, heapoid) ||
		!worker_try_lock(try_relation_lock, NULL, indexoid))
		return false;
	Relation	index = try_relation_open(indexoid, NoLock);

	if (index == NULL)
		return false;
	if (index->rd_rel->relkind != RELKIND_INDEX || index->rd_indam == NULL ||
		index->rd_indam->aminsert != bloomidx_insert ||
		index->rd_index->indrelid != heapoid || !index->rd_index->indisready)
	{
		relation_close(index, NoLock);
		return false;
	}
	Relation	heap = table_open(heapoid, NoLock);
	Oid			owner = heap->rd_rel->relowner;

	table_close(heap, NoLock);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
	bloomidx_restrict_search_path();
	if (worker_try_lock(try_seal_lock, index, InvalidOid))
	{
		uint32		threshold = bloomidx_seal_threshold(bloomidx_cached_meta(index)->capacity);

		sealed = bloomidx_seal_once(index, threshold);
		if (sealed > 0)
			bloomidx_pending_filters_after_seal(index, threshold, false);
		UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	}
	XLogFlush(XactLastRecEnd);	/* the rest: the publish, its last pages */
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	relation_close(index, NoLock);
	return sealed > 0;
}

/*
 * The worker: connects to the inserter's database as the bootstrap
 * superuser (the table's owner may not log in; nor may anyone to a
 * database that takes no connections, where rows may still be inserted),
 * seals the segments due, a transaction each (so that none holds back the
 * xmin horizon or the seal lock for more than a seal: VACUUM waits for one
 * at most), and exits once none is due, or after WORKER_MAX_SEALS: inserts
 * that keep linking pages while it runs ask for no other worker, and one
 * that lives no more than a few seconds never keeps DROP DATABASE waiting
 * long.  An error ends it like any backend's: logged, the transaction
 * rolled back, the rows still pending (the next due insert then seals them
 * itself, and meets the error).
 */
#define WORKER_MAX_SEALS 32

void
bloomidx_seal_worker_main(Datum main_arg)
{
	SealRequest request;

	memcpy(&request, MyBgworkerEntry->bgw_extra, sizeof(request));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(request.database, InvalidOid,
											  BGWORKER_BYPASS_ALLOWCONN);

	/*
	 * A process of its own: the inserter's segment size, for its whole
	 * life; and its WAL flushed as it goes, so that no insert's commit
	 * waits for a whole seal's (storage/block_write.cpp).
	 */
	bloomidx_segment_rows = request.segment_rows;
	bloomidx_wal_flush_pages = 32;
	pgstat_report_activity(STATE_RUNNING, "sealing pending rows");
	for (int i = 0; i < WORKER_MAX_SEALS; i++)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		/* Opening a relation may read toasted catalog data, which needs one. */
		PushActiveSnapshot(GetTransactionSnapshot());
		bool		sealed = seal_one_as_worker(DatumGetObjectId(main_arg));

		PopActiveSnapshot();
		CommitTransactionCommand();
		if (!sealed)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}
