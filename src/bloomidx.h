/*
 * bloomidx.h: the access method: the callbacks PostgreSQL calls (the files
 * at the top of src/, one per phase, as in GIN and contrib/bloom) and what
 * they share with each other, sectioned by file, each declaration under
 * the file that defines it.  Below them: storage/ (segments, the pending
 * list, the directory, filters, seals and merges; its README.md is the
 * design note), support/ (pages, value hashing, WAL) and core/ (the pure
 * C++ core: page layout, signatures, sizing).  Above them: functions/,
 * the SQL-callable functions, which nothing here calls.
 */
#ifndef BLOOMIDX_H
#define BLOOMIDX_H

#include "storage/storage.h"

/*
 * ---------------------------------------------------------------------
 * handler.cpp: the access method's entry point and _PG_init.
 * ---------------------------------------------------------------------
 */
extern "C" {
PGDLLEXPORT void _PG_init(void);
PGDLLEXPORT Datum bloomidx_handler(PG_FUNCTION_ARGS);
}
extern "C" char *bloomidx_build_phase_name(int64 phase);

/*
 * ---------------------------------------------------------------------
 * options.cpp: the reloptions, and the sizing they give.
 * ---------------------------------------------------------------------
 */
void		bloomidx_register_options(void);
extern "C" bytea *bloomidx_options(Datum reloptions, bool validate);
int			bloomidx_options_elevel(void);
void		bloomidx_options_for_build(Relation index, int elevel, uint16 *signature_bits,
									   uint16 *column_bits);
void		bloomidx_report_sizing(Relation index, bool warn);

/*
 * ---------------------------------------------------------------------
 * build_part.cpp: one participant's part of CREATE INDEX; build.cpp:
 * CREATE INDEX.
 * ---------------------------------------------------------------------
 */

typedef struct BloomidxBuildPart
{
	BloomidxState state;
	SegmentRows rows;			/* rows gathered for the next segment */
	BuildSegmentIds *ids;
	bloomidx::SegmentEntry *entries;	/* all participants' segments, segment id
										 * i at i - 1: kMaxSegments slots */
	uint32		nentries;		/* this part's segments */
	PGAlignedBlock page;		/* the pending page being filled, at the end */
	BlockNumber pending_head;	/* this part's pending pages, newest first */
	BlockNumber pending_tail;	/* the oldest, whose link is 0 */
	uint32		pending_pages;
	double		heap_tuples;
	double		index_tuples;
	BlockWriter writer;			/* segments and groups straight to the file; and
								 * whether other participants extend the index too */
	MemoryContext tuple_cxt;	/* reset after every row */
	FilterGroupBuild filters;	/* this part's group being filled */
} BloomidxBuildPart;

/*
 * The steps of a build, as pg_stat_progress_create_index shows them in its
 * phase "building index: <name>" (bloomidx_build_phase_name names them;
 * PostgreSQL's PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE, 1, comes first).
 * Segments are written as the scan gathers their rows, so writing them is
 * no step of its own: the scan is most of a build's time, and the steps
 * after it write less than a segment a participant.
 * - SCAN: the table scan; each full segment written as it fills.  Blocks
 *   total and done are the table's, as table_index_build_scan counts them
 *   (in a parallel build, the leader's view of the shared scan: none when
 *   the leader does not take part, as for btree).  No tuple counts: the
 *   rows are not known before the scan has read them all (reltuples is an
 *   estimate, -1 before the first VACUUM or ANALYZE).
 * - LAST_ROWS: the rows each participant holds when its part of the scan
 *   ends, less than a segment, written as one more segment or as pending
 *   pages (build_part.cpp); the leader of a parallel build then waits for its
 *   workers to write theirs.  Tuples total: the rows the index takes;
 *   done: those written (none in a parallel build, whose leader knows
 *   neither before its workers are done).
 * - DIRECTORY: the index's file made durable (fsynced when a checkpoint
 *   began during the build) and its segments and pending list entered in
 *   the metapage and directory pages.  Tuples as LAST_ROWS left them.
 * - SEAL: a parallel build only: the leader seals the rows its
 *   participants left pending.  Tuples total: those rows; done: the rows
 *   sealed so far (those of the list's last page, and a last run too short
 *   for a segment, stay pending).
 */
typedef enum BuildPhase
{
	BUILD_PHASE_SCAN = PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE + 1,
	BUILD_PHASE_LAST_ROWS,
	BUILD_PHASE_DIRECTORY,
	BUILD_PHASE_SEAL
} BuildPhase;

void		bloomidx_build_progress(BuildPhase phase, double tuples_total, double tuples_done);

extern "C" IndexBuildResult *bloomidx_build(Relation heap, Relation index,
											IndexInfo *indexInfo);
extern "C" void bloomidx_buildempty(Relation index);
void		bloomidx_build_part_init(BloomidxBuildPart *part, Relation index,
									 bool shared_extension, BuildSegmentIds *ids,
									 bloomidx::SegmentEntry *entries);
void		bloomidx_build_part_scan(BloomidxBuildPart *part, Relation heap, Relation index,
									 IndexInfo *indexInfo, TableScanDesc scan, bool progress);
void		bloomidx_build_part_finish(BloomidxBuildPart *part, Relation index, bool parallel);
uint32		bloomidx_tail_segment_rows(const BloomidxState *state, uint32 nsegments);
void		bloomidx_build_part_end(BloomidxBuildPart *part);
void		bloomidx_build_ids_init(BuildSegmentIds *ids);
void		bloomidx_build_join(BloomidxBuildPart *leader, Relation index, BlockNumber head,
								BlockNumber tail, uint32 npages);

/*
 * ---------------------------------------------------------------------
 * parallel_build.cpp: CREATE INDEX over parallel workers.
 * ---------------------------------------------------------------------
 */
int			bloomidx_parallel_build_workers(Relation heap, Relation index,
											IndexInfo *indexInfo);
bool		bloomidx_build_parallel(Relation heap, Relation index, IndexInfo *indexInfo,
									int nworkers, BloomidxBuildPart *leader);
extern "C" PGDLLEXPORT void bloomidx_parallel_build_main(dsm_segment *seg, shm_toc *toc);

/*
 * ---------------------------------------------------------------------
 * insert.cpp: one row into an existing index.
 * ---------------------------------------------------------------------
 */
extern "C" bool bloomidx_insert(Relation index, Datum *values, bool *isnull,
								ItemPointer ht_ctid, Relation heapRel,
								IndexUniqueCheck checkUnique, bool indexUnchanged,
								IndexInfo *indexInfo);

/*
 * ---------------------------------------------------------------------
 * seal_worker.cpp: a seal that an insert finds due, in a background
 * worker (bloomidx.background_seal) or else in the insert.
 * ---------------------------------------------------------------------
 */
extern bool bloomidx_background_seal;
void		bloomidx_seal_when_due(Relation index, uint32 pending_pages, uint32 capacity);

/*
 * ---------------------------------------------------------------------
 * scan.cpp: bitmap scans.
 * ---------------------------------------------------------------------
 */
extern "C" IndexScanDesc bloomidx_beginscan(Relation r, int nkeys, int norderbys);
extern "C" void bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
								ScanKey orderbys, int norderbys);
extern "C" int64 bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern "C" void bloomidx_endscan(IndexScanDesc scan);

/*
 * ---------------------------------------------------------------------
 * vacuum.cpp: bulk delete and cleanup.
 * ---------------------------------------------------------------------
 */
extern "C" IndexBulkDeleteResult *bloomidx_bulkdelete(IndexVacuumInfo *info,
													   IndexBulkDeleteResult *stats,
													   IndexBulkDeleteCallback callback,
													   void *callback_state);
extern "C" IndexBulkDeleteResult *bloomidx_vacuumcleanup(IndexVacuumInfo *info,
														  IndexBulkDeleteResult *stats);

/*
 * ---------------------------------------------------------------------
 * cost.cpp: the planner's cost of a bitmap scan.
 * ---------------------------------------------------------------------
 */
extern "C" void bloomidx_costestimate(PlannerInfo *root, IndexPath *path,
									  double loop_count, Cost *indexStartupCost,
									  Cost *indexTotalCost, Selectivity *indexSelectivity,
									  double *indexCorrelation, double *indexPages);

/*
 * ---------------------------------------------------------------------
 * validate.cpp: amvalidate.
 * ---------------------------------------------------------------------
 */
extern "C" bool bloomidx_validate(Oid opclassoid);

#endif							/* BLOOMIDX_H */
