/*
 * support.h: what every layer of the glue above the core shares (the SQL
 * functions, the AM callbacks and the storage): PostgreSQL's headers, the
 * checks that tie the core's page layout to them, the options as parsed,
 * and the support files below, each declaration under the file that
 * defines it.  Nothing here calls up into the storage or the callbacks.
 */
#ifndef BLOOMIDX_SUPPORT_H
#define BLOOMIDX_SUPPORT_H

#include "support/pg.h"

/* The operator classes' one support function and one strategy. */
#define BLOOMIDX_HASH_PROC 1	/* support function 1: (type, int8) -> int8 */
#define BLOOMIDX_NPROC 1
#define BLOOMIDX_EQUAL_STRATEGY 1
#define BLOOMIDX_NSTRATEGIES 1

#include "support/compat.h"

#include <cstddef>

#include "core/page_layout.hpp"
#include "core/signature.hpp"

/* The core describes pages without PostgreSQL's headers: hold it to them. */
static_assert(BLCKSZ == bloomidx::kBlockSize, "bloomidx needs 8 kB blocks");
static_assert(SizeOfPageHeaderData == bloomidx::kPageHeaderSize, "page header size");
static_assert(offsetof(PageHeaderData, pd_lower) == bloomidx::kPdLowerOffset, "pd_lower");
static_assert(offsetof(PageHeaderData, pd_upper) == bloomidx::kPdUpperOffset, "pd_upper");
static_assert(offsetof(PageHeaderData, pd_special) == bloomidx::kPdSpecialOffset, "pd_special");
static_assert(offsetof(PageHeaderData, pd_prune_xid) == bloomidx::kPdPruneXidOffset, "pd_prune_xid");
static_assert(sizeof(ItemPointerData) == bloomidx::kTidSize, "heap TID size");
static_assert(INDEX_MAX_KEYS == bloomidx::kMaxColumns, "one column_bits slot per key");
static_assert(MAXALIGN(sizeof(bloomidx::PageOpaque)) == sizeof(bloomidx::PageOpaque),
			  "special space needs no padding");

/*
 * Without options, an index is sized so that an equality on any single
 * column keeps at most 0.03% of the rows that do not match (README.md,
 * "Choosing the size", says why).
 */
#define BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE 0.0003
/*
 * Of a segment filter: the fraction of segments without a value it lets
 * through (0: no filters).  2.5 %: 9 bits a value in blocks of one word
 * (2.3 % measured), where 2 % took 9.5 and the index passed 1.4 times
 * contrib/bloom's size on data set A (format 18; 64-byte blocks gave 2 %
 * at 8.5 bits).
 */
#define BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE 0.025

/*
 * Reloptions as parsed (varlena, as build_reloptions makes them):
 * src/options.cpp parses them; a seal or merge reads segment_filter_rate
 * (storage/filter_write.cpp).
 */
typedef struct BloomidxOptions
{
	int32		vl_len_;
	int			length;			/* 0: not given */
	int			column_bits[INDEX_MAX_KEYS];	/* 0: not given */
	double		false_positive_rate;	/* 0: not given */
	double		segment_filter_rate;	/* 0: no segment filters */
} BloomidxOptions;

/*
 * For the core's long loops (bloomidx::Interrupted, core/sizing.hpp):
 * stop when an interrupt is pending that CHECK_FOR_INTERRUPTS would serve
 * now, so that the caller serves it outside the core and calls again.
 */
static inline bool
bloomidx_interrupt_pending(void *arg)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED();
}

/*
 * ---------------------------------------------------------------------
 * page.cpp: making pages, the cached metapage, buffer hints, the checks
 * every reader runs before trusting a page, and the reports of a damaged
 * page or an index of another format.
 * ---------------------------------------------------------------------
 */
void		bloomidx_init_page(Page page, uint16 flags);
void		bloomidx_init_data_page(Page page);
Buffer		bloomidx_lock_metapage(Relation index, BloomidxLockMode mode);
const bloomidx::MetaPageData *bloomidx_cached_meta(Relation index);

/*
 * Per data page a scan reads: where this backend last found it, and when
 * its sums passed; a table of a bounded size (page.cpp).
 */
typedef struct BufferHint
{
	BlockNumber blkno;
	Buffer		buffer;			/* InvalidBuffer: no hint in this slot */
	XLogRecPtr	checked;		/* the page's LSN when its sums last passed; 0: never */
} BufferHint;

typedef struct BufferHints
{
	int			bits;			/* the table has 1 << bits slots; 0: no table yet */
	uint32		evictions;		/* hints of other pages overwritten since it last grew */
	bool		trust_sums;		/* whether checked may be used */
	BufferHint *slots;
} BufferHints;
BufferHints *bloomidx_buffer_hints(Relation index);
bool		bloomidx_sums_checked_at_lsn(const BufferHints *hints, BlockNumber blkno, Page page);
void		bloomidx_remember_sums_checked(BufferHints *hints, BlockNumber blkno, Page page);
Buffer		bloomidx_read_page(Relation index, BlockNumber blkno, BufferAccessStrategy bas,
							   BufferHints *hints);
bool		bloomidx_prefetch_page(Relation index, BlockNumber blkno, BlockNumber nblocks,
								   const BufferHints *hints);

/*
 * check(sums), a core check of page blkno (pinned and locked), given
 * Sums::Trust where the hints remember the page's sums passing at its
 * present LSN, else Sums::Verify; a page that passes is remembered.  (A
 * template, not a callback: the checks take different arguments, and the
 * lambda holds plain data only.)
 */
template <typename Check>
inline bloomidx::PageProblem
bloomidx_check_page(BufferHints *hints, BlockNumber blkno, Page page, Check check)
{
	bool		known = bloomidx_sums_checked_at_lsn(hints, blkno, page);
	bloomidx::PageProblem problem = check(known ? bloomidx::Sums::Trust : bloomidx::Sums::Verify);

	if (problem == bloomidx::PageProblem::None && !known)
		bloomidx_remember_sums_checked(hints, blkno, page);
	return problem;
}

/*
 * ---------------------------------------------------------------------
 * scratch.cpp: the memory a scan reuses from one query to the next, kept
 * by the backend: what it returns is the caller's until the amgetbitmap
 * call that began it (bloomidx_scan_scratch_begin) ends it (never freed
 * by it, never kept past it).
 * ---------------------------------------------------------------------
 */
typedef enum ScanScratch
{
	SCRATCH_DIRECTORY,			/* scan.cpp: its directory copy's entries */
	SCRATCH_SEGMENT_WORK,		/* scan.cpp: segment_scan.cpp's work */
	SCRATCH_SKIP,				/* scan.cpp: the segments the filters rule out */
	SCRATCH_ELEMENTS,			/* scan.cpp: the IN list elements each segment may hold */
	SCRATCH_GROUP_ORDER,		/* filter_scan.cpp: the entries in group order */
	SCRATCH_SLOT_RANGES,		/* filter_scan.cpp: a group's segments' slots */
	SCRATCH_GROUP_IDS,			/* filter_scan.cpp: a group's segments' ids */
	SCRATCH_SLOT_TABLE,			/* filter_scan.cpp: group_segments_slot_ranges' table */
	SCRATCH_GROUP_AHEAD,		/* filter_scan.cpp: how far each group was read ahead */
	SCRATCH_PAGES,				/* filter_scan.cpp, scan.cpp: group header copies */
	SCRATCH_COUNT
} ScanScratch;
/* SCRATCH_PAGES: a group's header, and one read ahead (region pages are probed in place). */
#define SCRATCH_PAGES_BYTES ((Size) 2 * BLCKSZ)
/* The most one buffer keeps (a directory copy takes 1 MB at most); IN list masks past it are the query's. */
#define SCRATCH_MAX_BYTES ((Size) 2 * 1024 * 1024)
void		bloomidx_scan_scratch_begin(void);
void		bloomidx_scan_scratch_end(void);
void	   *bloomidx_scan_scratch(ScanScratch which, Size bytes);

/*
 * A scan's reading ahead (page.cpp): how far, and whether yet.  A scan
 * reads ahead only once it has met a page outside shared buffers, as read
 * streams do: a scan of a cached index asks for nothing (every ask would
 * cost a buffer lookup and, for a page it then does not read, a system
 * call, each time).
 */
typedef struct ReadAhead
{
	int			distance;		/* segments, and filter groups, asked for ahead; 0: never */
	int64		reads_before;	/* blocks read from outside shared buffers before the scan */
	bool		on;				/* whether the scan has met one since */
} ReadAhead;
void		bloomidx_read_ahead_init(ReadAhead *ra, Relation index);
bool		bloomidx_read_ahead_on(ReadAhead *ra);

BLOOMIDX_NORETURN void bloomidx_report_corrupted_page(Relation index, BlockNumber blkno,
													  const char *detail);
void		bloomidx_warn_corrupted_page(Relation index, BlockNumber blkno, const char *detail);
BLOOMIDX_NORETURN void bloomidx_report_not_built(Relation index);
BLOOMIDX_NORETURN void bloomidx_report_meta_problem(Relation index, bloomidx::PageProblem problem,
													uint32 version);
BLOOMIDX_NORETURN void bloomidx_report_page_problem(Relation index, BlockNumber blkno,
													bloomidx::PageProblem problem);
void		bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
									 const bloomidx::RowPageGeometry *geometry,
									 bloomidx::EntryChecks entries =
									 bloomidx::EntryChecks::SignaturesAndTids);
void		bloomidx_check_data_page_tids(Relation index, BlockNumber blkno, Page page);

/*
 * ---------------------------------------------------------------------
 * value_hash.cpp: how a column's values become 64-bit hashes that agree
 * with the type's equality, and a row's values its signature.
 * ---------------------------------------------------------------------
 */

/*
 * How a column's values become 64-bit hashes (value_hash.cpp says which
 * kind a type takes).  The byte kinds hash the value's bytes with XXH3 and
 * are only for types whose equality is byte equality; the others call the
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
	uint8		byte_class;		/* value_hash.cpp's ByteClass of its function */
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
	double		filter_bits_per_key;	/* of the filters a build, seal or merge
										 * writes; 0: none (set by those alone:
										 * bloomidx_state_filters) */
	ValueHasher hasher[INDEX_MAX_KEYS];
} BloomidxState;

void		bloomidx_init_state(BloomidxState *state, Relation index);
uint8		bloomidx_column_hashing(Relation index, int column);
const ValueHasher *bloomidx_key_hasher(Relation index, const BloomidxState *state,
									   int column, Oid key_type, ValueHasher *scratch);
uint64		bloomidx_hash_value(const ValueHasher *hasher, Datum value);
void		bloomidx_opclass_hasher(ValueHasher *hasher, Oid opclass, Oid collation, int column);
bool		bloomidx_hash_breaks_equality(Oid type, Oid collation);
void		bloomidx_check_array_hashing(Oid hash_proc, Oid type);
bool		bloomidx_hash_family_agrees(Oid opno, Oid lefttype, Oid righttype, Oid left_proc,
										Oid right_proc, bool *hashable);

/* What bloomidx_hash_breaks_equality refuses, said where a type is refused. */
#define BLOOMIDX_HASH_BREAKS_EQUALITY_DETAIL "It holds char(n) values under a nondeterministic collation inside a composite or range, which PostgreSQL's hash functions hash with their trailing blanks although equality ignores them."
#define BLOOMIDX_HASH_BREAKS_EQUALITY_HINT "Use varchar or text there, or a deterministic collation."
/* keys (may be NULL): each column's filter key (bloomidx::filter_key). */
void		bloomidx_form_signature(const BloomidxState *state, const Datum *values,
									const bool *isnull, uint8 *signature, uint32 *keys);

/*
 * ---------------------------------------------------------------------
 * wal.cpp: WAL records the glue writes itself.
 * ---------------------------------------------------------------------
 */
void		bloomidx_append_logged(Relation index, Buffer buffer,
								   const bloomidx::RowPageGeometry *g, const uint8 *signature,
								   const uint8 *tail);

/* Room bloomidx_log_page_ranges needs for a page's delta (ranges of one page never overlap). */
#define BLOOMIDX_PAGE_DELTA_ROOM (2 * BLCKSZ)
void		bloomidx_log_page_ranges(Relation index, const Buffer *buffers, uint32 n,
									 const bloomidx::PageRange *const *ranges,
									 const uint32 *nranges, uint8 *room, Size room_a_page);

/*
 * ---------------------------------------------------------------------
 * debug.cpp: the settings that exist for the tests of the seal protocol.
 * ---------------------------------------------------------------------
 */

/*
 * The steps of a seal or merge (storage/README.md, "Crashes") at which
 * bloomidx.debug_seal_stop stops the server, so that the TAP tests can
 * crash at each one.
 */
typedef enum SealStep
{
	SEAL_STEP_MARKED = 1,		/* pending pages marked as being sealed */
	SEAL_STEP_WRITTEN = 2,		/* the new segment's pages written */
	SEAL_STEP_PUBLISHED = 3,	/* the directory changed */
	SEAL_STEP_FREED = 4,		/* the old pages freed */
	SEAL_STEP_DIRECTORY_WRITTEN = 5,	/* in a publish: directory pages written */
	SEAL_STEP_DIRECTORY_SWITCHED = 6,	/* in a publish: its record written, the
										 * replaced directory pages not yet freed */
	SEAL_STEP_GROUP_WRITTEN = 7,	/* VACUUM's gathered filter group written */
	SEAL_STEP_GROUP_PUBLISHED = 8,	/* ... named in its segments' entries */
	SEAL_STEP_GROUP_FREED = 9,	/* ... the groups it replaced freed */
	SEAL_STEP_PENDING_SLOTS_WRITTEN = 10	/* an insert wrote pending pages'
											 * filters, not yet its group's header */
} SealStep;

/*
 * Points where bloomidx.debug_pause_at makes a backend wait until no
 * session holds advisory lock BLOOMIDX_PAUSE_KEY (pg_advisory_lock(key)),
 * so that the isolation tests can run a scan, an insert or VACUUM in the
 * middle of a seal, or a seal in the middle of a scan.
 */
typedef enum DebugPause
{
	PAUSE_NONE = 0,
	PAUSE_SEAL_MARKED,			/* a seal marked its pending pages */
	PAUSE_SEAL_PUBLISHED,		/* a seal published, before freeing */
	PAUSE_SCAN_DIRECTORY,		/* a scan copied the directory */
	PAUSE_DIRECTORY_PAGES,		/* a copy of the directory has the metapage's
								 * part, not yet its directory pages */
	PAUSE_PENDING_SLOTS			/* a pass wrote its slots' blocks, not yet the
								 * header that names them */
} DebugPause;
#define BLOOMIDX_PAUSE_KEY 4242

extern int	bloomidx_debug_seal_stop;
extern int	bloomidx_debug_filter_batch_pages;
extern int	bloomidx_debug_unpacked_slices;
extern bool bloomidx_debug_group_header_cache;
extern int	bloomidx_debug_pause_at;
extern int	bloomidx_debug_max_segments;

uint32		bloomidx_max_segments(void);
extern const struct config_enum_entry debug_pause_options[];
bool		bloomidx_debug_check(int *newval, void **extra, GucSource source);
void		bloomidx_seal_step(SealStep step);
void		bloomidx_debug_pause(DebugPause point);

#endif							/* BLOOMIDX_SUPPORT_H */
