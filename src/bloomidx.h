/*
 * bloomidx glue: what the files of src/ share.  The page layout itself is
 * in core/page_layout.hpp; this header only ties it to PostgreSQL.
 */
#ifndef BLOOMIDX_H
#define BLOOMIDX_H

#include "pg.h"

#define BLOOMIDX_HASH_PROC 1	/* support function 1: (type, int8) -> int8 */
#define BLOOMIDX_NPROC 1
#define BLOOMIDX_EQUAL_STRATEGY 1
#define BLOOMIDX_NSTRATEGIES 1

#include "compat.h"

#include <cstddef>

#include "core/page_layout.hpp"
#include "core/signature.hpp"

/* The core describes pages without PostgreSQL's headers: hold it to them. */
static_assert(BLCKSZ == bloomidx::kBlockSize, "bloomidx needs 8 kB blocks");
static_assert(SizeOfPageHeaderData == bloomidx::kPageHeaderSize, "page header size");
static_assert(offsetof(PageHeaderData, pd_lower) == bloomidx::kPdLowerOffset, "pd_lower");
static_assert(offsetof(PageHeaderData, pd_upper) == bloomidx::kPdUpperOffset, "pd_upper");
static_assert(offsetof(PageHeaderData, pd_special) == bloomidx::kPdSpecialOffset, "pd_special");
static_assert(sizeof(ItemPointerData) == bloomidx::kTidSize, "heap TID size");
static_assert(INDEX_MAX_KEYS == bloomidx::kMaxColumns, "one column_bits slot per key");
static_assert(MAXALIGN(sizeof(bloomidx::PageOpaque)) == sizeof(bloomidx::PageOpaque),
			  "special space needs no padding");

/*
 * Without options, an index is sized so that an equality on any single
 * column keeps at most 0.1% of the rows that do not match (README.md,
 * "Choosing the size", says why).
 */
#define BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE 0.001

/* Reloptions as parsed (varlena, as build_reloptions makes them). */
typedef struct BloomidxOptions
{
	int32		vl_len_;
	int			length;			/* 0: not given */
	int			column_bits[INDEX_MAX_KEYS];	/* 0: not given */
	double		false_positive_rate;	/* 0: not given */
} BloomidxOptions;

/*
 * How a column's values become 64-bit hashes (state.cpp says which kind a
 * type takes).  The byte kinds hash the value's bytes with XXH3 and are
 * only for types whose equality is byte equality; the others call the
 * family's extended hash function and hash its result with XXH3.
 */
typedef enum ValueHashKind
{
	VALUE_INT2,					/* int2, widened to int64 */
	VALUE_INT4,					/* int4, date: widened to int64 */
	VALUE_INT8,					/* int8, timestamp, timestamptz, time */
	VALUE_OID,					/* oid: widened to int64 */
	VALUE_UUID,					/* the 16 bytes */
	VALUE_VARLENA_BYTES,		/* detoasted payload: bytea, text under a
								 * deterministic collation */
	VALUE_BPCHAR_BYTES,			/* char(n), deterministic collation: the
								 * payload without trailing blanks */
	VALUE_BPCHAR_FUNCTION,		/* char(n) otherwise: the function, given
								 * the value without trailing blanks */
	VALUE_ARRAY_FUNCTION,		/* arrays: char(n) elements as above, any
								 * other through hash_array_extended */
	VALUE_HASH_FUNCTION			/* the family's extended hash, then XXH3 */
} ValueHashKind;

/* Turns values of one type, in one index column, into 64-bit hashes. */
typedef struct ValueHasher
{
	ValueHashKind kind;
	uint8		byte_class;		/* state.cpp's ByteClass of its function */
	Oid			collation;
	uint64		seed;			/* the column's: core/hash.hpp */
	FmgrInfo	proc;			/* the family's extended hash function */
} ValueHasher;

/* Everything needed to make signatures for one index. */
typedef struct BloomidxState
{
	bloomidx::MetaPageData meta;	/* options frozen at build */
	bloomidx::RowPageGeometry geometry;
	int			ncolumns;
	ValueHasher hasher[INDEX_MAX_KEYS];
} BloomidxState;

/* handler.cpp */
extern "C" {
PGDLLEXPORT void _PG_init(void);
PGDLLEXPORT Datum bloomidx_handler(PG_FUNCTION_ARGS);
}

/* options.cpp */
void		bloomidx_register_options(void);
extern "C" bytea *bloomidx_options(Datum reloptions, bool validate);
void		bloomidx_options_for_build(Relation index, uint16 *signature_bits,
									   uint16 *column_bits);
void		bloomidx_report_sizing(Relation index, bool warn);

/* page.cpp */
void		bloomidx_init_page(Page page, uint16 flags);
void		bloomidx_init_data_page(Page page);
void		bloomidx_fill_metapage(Relation index, Page page);
const bloomidx::MetaPageData *bloomidx_cached_meta(Relation index);
Buffer	   *bloomidx_buffer_hints(Relation index, BlockNumber nblocks, BlockNumber *nhints);
BlockNumber bloomidx_insert_block(Relation index);
void		bloomidx_set_insert_block(Relation index, BlockNumber blkno);
BLOOMIDX_NORETURN void bloomidx_report_corrupted_page(Relation index, BlockNumber blkno,
															const char *detail);
void		bloomidx_warn_corrupted_page(Relation index, BlockNumber blkno, const char *detail);
BLOOMIDX_NORETURN void bloomidx_report_not_built(Relation index);
BLOOMIDX_NORETURN void bloomidx_report_page_problem(Relation index, BlockNumber blkno,
														  bloomidx::PageProblem problem);
void		bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
									 const bloomidx::RowPageGeometry *geometry,
									 bloomidx::EntryChecks entries =
									 bloomidx::EntryChecks::SignaturesAndTids);
void		bloomidx_check_data_page_tids(Relation index, BlockNumber blkno, Page page);

/* state.cpp */
void		bloomidx_init_state(BloomidxState *state, Relation index);
uint8		bloomidx_column_hashing(Relation index, int column);
const ValueHasher *bloomidx_key_hasher(Relation index, const BloomidxState *state,
									   int column, Oid key_type, ValueHasher *scratch);
uint64		bloomidx_hash_value(const ValueHasher *hasher, Datum value);
void		bloomidx_form_signature(const BloomidxState *state, const Datum *values,
									const bool *isnull, uint8 *signature);

/* build.cpp: CREATE INDEX; one participant's part of it */
typedef struct BloomidxBuildPart
{
	BloomidxState state;
	PGAlignedBlock page;		/* the data page being filled */
	BlockNumber last_block;		/* last data page written */
	double		heap_tuples;
	double		index_tuples;
	bool		shared_extension;	/* other participants extend the index too */
	MemoryContext tuple_cxt;	/* reset after every row */
} BloomidxBuildPart;

extern "C" IndexBuildResult *bloomidx_build(Relation heap, Relation index,
											IndexInfo *indexInfo);
extern "C" void bloomidx_buildempty(Relation index);
void		bloomidx_build_part_init(BloomidxBuildPart *part, Relation index,
									 bool shared_extension);
void		bloomidx_build_part_scan(BloomidxBuildPart *part, Relation heap, Relation index,
									 IndexInfo *indexInfo, TableScanDesc scan, bool progress);
void		bloomidx_build_part_absorb(BloomidxBuildPart *part, Relation index,
									   const char *other);
void		bloomidx_build_part_end(BloomidxBuildPart *part);

/* parallel_build.cpp */
int			bloomidx_parallel_build_workers(Relation heap, Relation index,
											IndexInfo *indexInfo);
bool		bloomidx_build_parallel(Relation heap, Relation index, IndexInfo *indexInfo,
									int nworkers, BloomidxBuildPart *leader);
extern "C" PGDLLEXPORT void bloomidx_parallel_build_main(dsm_segment *seg, shm_toc *toc);

/* insert.cpp */
extern "C" bool bloomidx_insert(Relation index, Datum *values, bool *isnull,
								ItemPointer ht_ctid, Relation heapRel,
								IndexUniqueCheck checkUnique, bool indexUnchanged,
								IndexInfo *indexInfo);

/* scan.cpp */
extern "C" IndexScanDesc bloomidx_beginscan(Relation r, int nkeys, int norderbys);
extern "C" void bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
								ScanKey orderbys, int norderbys);
extern "C" int64 bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern "C" void bloomidx_endscan(IndexScanDesc scan);

/* vacuum.cpp */
extern "C" IndexBulkDeleteResult *bloomidx_bulkdelete(IndexVacuumInfo *info,
													   IndexBulkDeleteResult *stats,
													   IndexBulkDeleteCallback callback,
													   void *callback_state);
extern "C" IndexBulkDeleteResult *bloomidx_vacuumcleanup(IndexVacuumInfo *info,
														  IndexBulkDeleteResult *stats);

/* cost.cpp */
extern "C" void bloomidx_costestimate(PlannerInfo *root, IndexPath *path,
									  double loop_count, Cost *indexStartupCost,
									  Cost *indexTotalCost, Selectivity *indexSelectivity,
									  double *indexCorrelation, double *indexPages);

/* validate.cpp */
extern "C" bool bloomidx_validate(Oid opclassoid);
bool		bloomidx_hash_family_agrees(Oid opno, Oid lefttype, Oid righttype, Oid left_proc,
										Oid right_proc, bool *hashable);
extern "C" PGDLLEXPORT Datum bloomidx_verify(PG_FUNCTION_ARGS);	/* verify.cpp */
extern "C" PGDLLEXPORT Datum bloomidx_ddl_check(PG_FUNCTION_ARGS);	/* ddl_check.cpp */
extern "C" PGDLLEXPORT Datum bloomidx_false_positive_rate(PG_FUNCTION_ARGS);	/* predict.cpp */

#endif							/* BLOOMIDX_H */
