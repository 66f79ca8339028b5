/*
 * debug.cpp: superuser settings that exist for the tests of the seal
 * protocol (storage/README.md, "Crashes" and "Reading"), never for
 * production: bloomidx.debug_seal_stop stops the server right after a step
 * of a seal or merge (the TAP tests crash there), and
 * bloomidx.debug_pause_at makes a seal or a scan wait at a point on an
 * advisory lock the isolation tests hold (they run other sessions there).
 * Both are checked at points where the backend holds no buffer lock.
 * bloomidx.debug_unpacked_slices writes new segments with one slice a
 * page, as format 13 did, so that one index holds both layouts.
 * bloomidx.debug_max_segments lowers the directory's limit, so that a test
 * fills it with a few thousand rows, not two million.
 */
#include "support/support.h"

int			bloomidx_debug_seal_stop = 0;
int			bloomidx_debug_filter_batch_pages = 0;
int			bloomidx_debug_unpacked_slices = 0;
bool		bloomidx_debug_group_header_cache = true;
int			bloomidx_debug_pause_at = PAUSE_NONE;
int			bloomidx_debug_max_segments = 0;

const struct config_enum_entry debug_pause_options[] = {
	{"none", PAUSE_NONE, false},
	{"seal_marked", PAUSE_SEAL_MARKED, false},
	{"seal_published", PAUSE_SEAL_PUBLISHED, false},
	{"scan_directory", PAUSE_SCAN_DIRECTORY, false},
	{"directory_pages", PAUSE_DIRECTORY_PAGES, false},
	{"pending_slots", PAUSE_PENDING_SLOTS, false},
	{NULL, 0, false}
};

/*
 * These settings only take a value from SET in a session (never from a
 * configuration file, ALTER SYSTEM, ALTER DATABASE or ALTER ROLE): set
 * anywhere else, a crash switch would reach every backend, autovacuum's
 * included, and could keep the server in a crash loop.
 */
bool
bloomidx_debug_check(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || source == PGC_S_SESSION)
		return true;
	GUC_check_errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM);
	GUC_check_errdetail("This debugging setting can only be changed with SET, in a session.");
	return false;
}

/*
 * A seal or merge has done `step`: with bloomidx.debug_seal_stop at that
 * step, the server stops as if it crashed there.  The WAL written so
 * far is flushed first, so that the crash comes after the step, not
 * before: up to the end of the WAL inserted, not the insert position,
 * which at a WAL page boundary lies past the next page's header, past any
 * WAL written (PostgreSQL 18 refuses to flush there: "request to flush
 * past end of generated WAL"; 008_seal_steps.pl failed so).
 */
void
bloomidx_seal_step(SealStep step)
{
	if (bloomidx_debug_seal_stop != (int) step)
		return;
	XLogFlush(GetXLogInsertEndRecPtr());
	elog(PANIC, "bloomidx: stopped after seal step %d (bloomidx.debug_seal_stop)", (int) step);
}

/*
 * With bloomidx.debug_pause_at at `point`, waits until no session holds
 * advisory lock BLOOMIDX_PAUSE_KEY: a heavyweight lock, so that the
 * isolation tester sees this backend as waiting.
 */
void
bloomidx_debug_pause(DebugPause point)
{
	LOCKTAG		tag;

	if (bloomidx_debug_pause_at != (int) point)
		return;
	/* As pg_advisory_lock_shared(bigint) names its lock. */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, BLOOMIDX_PAUSE_KEY, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

/*
 * The most segments an index's directory takes: the format's
 * (kMaxSegments), or fewer under bloomidx.debug_max_segments.
 */
uint32
bloomidx_max_segments(void)
{
	/* The setting's range ends at kMaxSegments. */
	return bloomidx_debug_max_segments > 0 ? (uint32) bloomidx_debug_max_segments
		: bloomidx::kMaxSegments;
}
