/*
 * handler.cpp: the access method's entry point, telling PostgreSQL what
 * bloomidx can do and which callbacks do it.
 */
#include "bloomidx.h"

#include "core/hash.hpp"

extern "C" {
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(bloomidx_handler);
}

void
_PG_init(void)
{
	/*
	 * Every signature on disk was made with one hash: a module that hashes
	 * otherwise (another xxHash, a miscompilation) would silently lose rows
	 * of every existing index, on a standby or after pg_upgrade too.
	 */
	if (!bloomidx::hash_known_answers_ok())
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("bloomidx cannot load: its hash function gives other answers than the one its indexes were built with"),
				 errdetail("The module was built against an xxHash whose XXH3 differs from version 0.8."),
				 errhint("Rebuild bloomidx against xxHash 0.8.0 or later.")));
	bloomidx_register_options();
	bloomidx_header_cache_init();

	/*
	 * A developer setting: tests make many segments out of small tables.
	 * Superuser only, as it shapes what every later build writes.
	 */
	DefineCustomIntVariable("bloomidx.segment_rows",
							"Rows a sealed segment takes (for tests: fewer than the most a slice page holds).",
							NULL, &bloomidx_segment_rows, bloomidx::kSegmentRows, 64,
							bloomidx::kSegmentRows, PGC_SUSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	/*
	 * Who pays for a seal: a worker, so that no INSERT waits for one
	 * (seal_worker.cpp).  Superuser only: workers take slots of
	 * max_worker_processes, which is the administrator's to share out.
	 */
	DefineCustomBoolVariable("bloomidx.background_seal",
							 "Seals pending rows in a background worker rather than in the INSERT that finds a segment's worth.",
							 "Off, or when no worker can be started, the INSERT seals them itself.",
							 &bloomidx_background_seal, true, PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("bloomidx.debug_seal_stop",
							"Debugging only: a seal or merge stops the server (PANIC) after this step: "
							"1 pending pages marked, 2 segment written, 3 published, 4 old pages freed, "
							"5 directory pages written (in the publish), 6 directory pages switched (in the publish); "
							"VACUUM's gathering of filter groups: 7 group written, 8 published, 9 old groups freed; "
							"an insert's pending filters: 10 a page's filters written, not its slot; 0 never.",
							NULL, &bloomidx_debug_seal_stop, 0, 0, 10, PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							bloomidx_debug_check, NULL, NULL);
	DefineCustomIntVariable("bloomidx.debug_filter_batch_pages",
							"Debugging only: a build writes a filter group's region pages in batches of this many "
							"(0: about 4 MB of them), so that tests can cross batches with small groups.",
							NULL, &bloomidx_debug_filter_batch_pages, 0, 0, 1024, PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("bloomidx.debug_unpacked_slices",
							"Debugging only: 1 writes new segments with one slice a page, as format 13 did, "
							"so that tests read both layouts in one index.",
							NULL, &bloomidx_debug_unpacked_slices, 0, 0, 1, PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomBoolVariable("bloomidx.debug_group_header_cache",
							 "Debugging only: off, scans read every filter group's header page again rather than "
							 "copy what the backend kept of it, so that benchmarks and tests can compare.",
							 NULL, &bloomidx_debug_group_header_cache, true, PGC_SUSET,
							 GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("bloomidx.debug_max_segments",
							"Debugging only: the most segments an index's directory takes (0: the format's 32,228), "
							"so that tests fill it with few rows.",
							NULL, &bloomidx_debug_max_segments, 0, 0, bloomidx::kMaxSegments, PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, bloomidx_debug_check, NULL, NULL);
	DefineCustomEnumVariable("bloomidx.debug_pause_at",
							 "Debugging only: where a seal, a pending pass or a scan waits until no session holds advisory lock 4242.",
							 NULL, &bloomidx_debug_pause_at, PAUSE_NONE, debug_pause_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 bloomidx_debug_check, NULL, NULL);
	MarkGUCPrefixReserved("bloomidx");
}

/*
 * The name of a step of the build (bloomidx.h, BuildPhase), which
 * pg_stat_progress_create_index shows as "building index: <name>"; NULL
 * for a number that names none (pg_indexam_progress_phasename then
 * answers NULL).
 */
char *
bloomidx_build_phase_name(int64 phase)
{
	switch (phase)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return (char *) "initializing";
		case BUILD_PHASE_SCAN:
			return (char *) "scanning table";
		case BUILD_PHASE_LAST_ROWS:
			return (char *) "writing last rows";
		case BUILD_PHASE_DIRECTORY:
			return (char *) "syncing and writing directory";
		case BUILD_PHASE_SEAL:
			return (char *) "sealing pending rows";
	}
	return NULL;
}

Datum
bloomidx_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = BLOOMIDX_NSTRATEGIES;
	am->amsupport = BLOOMIDX_NPROC;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = false;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = true;
	am->amoptionalkey = true;
	am->amsearcharray = true;
	am->amsearchnulls = true;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	bloomidx_set_version_am_fields(am);
	am->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	am->amkeytype = InvalidOid;

	am->ambuild = bloomidx_build;
	am->ambuildempty = bloomidx_buildempty;
	am->aminsert = bloomidx_insert;
	am->ambulkdelete = bloomidx_bulkdelete;
	am->amvacuumcleanup = bloomidx_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = bloomidx_costestimate;
	am->amoptions = bloomidx_options;
	/*
	 * No amproperty: what pg_indexam_has_property, pg_index_has_property
	 * and pg_index_column_has_property derive from the fields above is
	 * what bloomidx does (sql/properties shows each claim), on every
	 * version (15 to 18 derive alike): bitmap scans only (no amgettuple:
	 * no index_scan, no exclusion constraints), no order (asc, desc,
	 * nulls_first, nulls_last, orderable and can_order false), no value
	 * returned (a signature keeps none), = ANY arrays and IS [NOT] NULL
	 * index keys of every column whatever its operator class (each has
	 * the one strategy, equality), no unique index, no INCLUDE, no
	 * CLUSTER.
	 * An amproperty would answer the same from the same fields.
	 */
	am->amproperty = NULL;
	am->ambuildphasename = bloomidx_build_phase_name;
	am->amvalidate = bloomidx_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = bloomidx_beginscan;
	am->amrescan = bloomidx_rescan;
	am->amgettuple = NULL;
	am->amgetbitmap = bloomidx_getbitmap;
	am->amendscan = bloomidx_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
