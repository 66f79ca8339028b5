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
/* Of a segment filter: the fraction of segments without a value it lets through (0: no filters). */
#define BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE 0.02

/* Reloptions as parsed (varlena, as build_reloptions makes them). */
typedef struct BloomidxOptions
{
	int32		vl_len_;
	int			length;			/* 0: not given */
	int			column_bits[INDEX_MAX_KEYS];	/* 0: not given */
	double		false_positive_rate;	/* 0: not given */
	double		segment_filter_rate;	/* 0: no segment filters */
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
	double		filter_bits_per_key;	/* of the filters a build, seal or merge
										 * writes; 0: none (set by those alone:
										 * bloomidx_state_filters) */
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
double		bloomidx_filter_bits_per_key(Relation index);

/* page.cpp */
void		bloomidx_init_page(Page page, uint16 flags);
void		bloomidx_init_data_page(Page page);
void		bloomidx_fill_metapage(Relation index, Page page);
const bloomidx::MetaPageData *bloomidx_cached_meta(Relation index);
/* Per data page: where this backend last found it, and when its sums passed (page.cpp). */
typedef struct BufferHints
{
	BlockNumber n;				/* blocks [0, n) have hints */
	bool		trust_sums;		/* whether checked[] may be used (page.cpp) */
	Buffer	   *buffers;		/* InvalidBuffer: none yet */
	XLogRecPtr *checked;		/* the page's LSN when its sums last passed; 0: never */
} BufferHints;
BufferHints *bloomidx_buffer_hints(Relation index, BlockNumber nblocks);
bool		bloomidx_sums_known(const BufferHints *hints, BlockNumber blkno, Page page);
void		bloomidx_sums_passed(BufferHints *hints, BlockNumber blkno, Page page);
BLOOMIDX_NORETURN void bloomidx_report_corrupted_page(Relation index, BlockNumber blkno,
															const char *detail);
void		bloomidx_warn_corrupted_page(Relation index, BlockNumber blkno, const char *detail);
BLOOMIDX_NORETURN void bloomidx_report_not_built(Relation index);
BLOOMIDX_NORETURN void bloomidx_report_bad_version(Relation index, uint32 version);
BLOOMIDX_NORETURN void bloomidx_report_meta_problem(Relation index, const uint8 *page,
												   bloomidx::PageProblem problem);
BLOOMIDX_NORETURN void bloomidx_report_page_problem(Relation index, BlockNumber blkno,
														  bloomidx::PageProblem problem);
void		bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
									 const bloomidx::RowPageGeometry *geometry,
									 bloomidx::EntryChecks entries =
									 bloomidx::EntryChecks::SignaturesAndTids);
void		bloomidx_check_data_page_tids(Relation index, BlockNumber blkno, Page page);

/* state.cpp */
void		bloomidx_init_state(BloomidxState *state, Relation index);
void		bloomidx_state_filters(BloomidxState *state, Relation index);
uint8		bloomidx_column_hashing(Relation index, int column);
const ValueHasher *bloomidx_key_hasher(Relation index, const BloomidxState *state,
									   int column, Oid key_type, ValueHasher *scratch);
uint64		bloomidx_hash_value(const ValueHasher *hasher, Datum value);
void		bloomidx_opclass_hasher(ValueHasher *hasher, Oid opclass, Oid collation, int column);
bool		bloomidx_hashes_equal_apart(Oid type, Oid collation);
void		bloomidx_check_array_hashing(Oid hash_proc, Oid type);

/* What bloomidx_hashes_equal_apart refuses, said where a type is refused. */
#define BLOOMIDX_EQUAL_APART_DETAIL "It holds char(n) values under a nondeterministic collation inside a composite or range, which PostgreSQL's hash functions hash with their trailing blanks although equality ignores them."
#define BLOOMIDX_EQUAL_APART_HINT "Use varchar or text there, or a deterministic collation."
/* keys (may be NULL): each column's filter key (bloomidx::filter_key). */
void		bloomidx_form_signature(const BloomidxState *state, const Datum *values,
									const bool *isnull, uint8 *signature, uint32 *keys);

/* segment_write.cpp: rows gathered in memory, written as one segment */
typedef struct SegmentRows
{
	uint32		nrows;
	uint32		capacity;		/* rows a segment takes (bloomidx.segment_rows) */
	uint32		signature_bytes;
	uint8	   *signatures;		/* capacity signatures, back to back */
	ItemPointerData *tids;		/* capacity heap TIDs */
	uint32	   *keys;			/* for filters: ncolumns filter keys a row; or NULL */
	void	   *scratch;		/* segment_write.cpp's, made on first use */
} SegmentRows;

extern int	bloomidx_segment_rows;
uint32		bloomidx_segment_capacity(uint32 page_capacity);
void		bloomidx_segment_rows_init(SegmentRows *rows, uint32 signature_bytes, uint32 capacity);
void		bloomidx_segment_rows_free(SegmentRows *rows);
void		bloomidx_segment_rows_keep_keys(SegmentRows *rows, uint32 ncolumns);
void		bloomidx_segment_rows_tail(const SegmentRows *rows, uint32 r,
									   const bloomidx::RowPageGeometry *g, uint8 *tail);
typedef struct DirectoryCopy DirectoryCopy;

/*
 * block_write.cpp: how a segment's or filter group's new pages reach the
 * index: straight to its file (CREATE INDEX) or through shared buffers.
 */
typedef struct BlockWriter
{
	bool		shared_extension;	/* other processes extend the index too */
	bool		direct;			/* past shared buffers: the index is being built */
	XLogRecPtr	start_redo;		/* direct: the redo point when writes began */
} BlockWriter;
void		bloomidx_block_writer_init(BlockWriter *writer, Relation index,
									   bool shared_extension, bool direct);
void		bloomidx_write_page(Relation index, Buffer buffer, const char *image);
BlockNumber bloomidx_extend_run(Relation index, uint32 n, const BlockWriter *writer);
void		bloomidx_write_run_block(Relation index, BlockNumber blkno, char *image,
									 const BlockWriter *writer);
void		bloomidx_block_writer_finish(const BlockWriter *writer, Relation index);
Buffer		bloomidx_free_or_new_buffer(Relation index);

/*
 * A seal's or merge's segment's own filter group (filter_write.cpp,
 * filter_merge.cpp), made in memory and written with the segment.
 */
typedef struct SegmentFilters
{
	bloomidx::FilterGroupHeader header;	/* group id and slots set by the writer */
	uint8	   *image;			/* its region rows, back to back */
} SegmentFilters;

void		bloomidx_write_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
								   uint32 segment_id, const BlockWriter *writer,
								   bloomidx::FreeList *list, const DirectoryCopy *dir,
								   SegmentFilters *filters, uint32 *taken,
								   bloomidx::SegmentEntry *entry);

/*
 * directory.cpp: the metapage's segment directory and pending list.  A
 * copy of the directory, as a scan or VACUUM takes it.
 */
typedef struct DirectoryCopy
{
	bloomidx::DirectoryHeader header;
	bloomidx::SegmentEntry *entries;	/* header.nsegments of them, inline ones
										 * and those of directory pages */
	uint32		capacity;		/* entries' room */
	MemoryContext cxt;			/* where entries live */
	bloomidx::DirectoryPageList pages;	/* the directory pages */
	bloomidx::FreeList free;
} DirectoryCopy;

void		bloomidx_read_directory(Relation index, BlockNumber *nblocks, DirectoryCopy *copy);

/* directory_pages.cpp: the entries past the metapage's */
DirectoryCopy *bloomidx_directory_copy_new(void);
void		bloomidx_directory_copy_init(DirectoryCopy *copy);
void		bloomidx_directory_copy_free(DirectoryCopy *copy);
void		bloomidx_directory_copy_room(DirectoryCopy *copy, uint32 n);
bool		bloomidx_read_directory_pages(Relation index, BlockNumber *nblocks,
										  DirectoryCopy *copy);
void		bloomidx_write_directory_pages(Relation index, const bloomidx::SegmentEntry *entries,
										   uint32 n, const bloomidx::SegmentEntry *old_entries,
										   uint32 old_n, const bloomidx::DirectoryPageList *old,
										   uint32 generation, bloomidx::DirectoryPageList *out);
void		bloomidx_free_directory_pages(Relation index, const bloomidx::DirectoryPageList *old,
										  const bloomidx::DirectoryPageList *now, uint32 generation);
BlockNumber bloomidx_directory_entry_block(const DirectoryCopy *copy, uint32 slot,
										   uint32 *place);

typedef struct DirectoryStats
{
	uint32		segments;
	uint32		filtered_segments;	/* of them, with segment filters */
	uint32		filter_groups;	/* their groups: the segments in a group's
								 * first slot (one a group, unless a merge
								 * removed it) */
	double		segment_rows;
	double		live_rows;
	uint32		pending_pages;
} DirectoryStats;
void		bloomidx_directory_stats(Relation index, DirectoryStats *stats);
uint32		bloomidx_directory_generation(Relation index);
bool		bloomidx_check_pending_count(Relation index, const DirectoryCopy *dir,
										 uint32 walked);
void		bloomidx_check_pending_link(Relation index, BlockNumber from, BlockNumber blkno,
										BlockNumber *nblocks, BlockNumber *followed);

/*
 * A walk of the pending list from a head, one page at a time, each link
 * checked (bloomidx_check_pending_link) before it is followed:
 *     bloomidx_pending_walk_init(&w, index, head, nblocks);
 *     while (bloomidx_pending_walk_more(&w))
 *         { visit w.blkno; bloomidx_pending_walk_follow(&w, its successor); }
 */
typedef struct PendingWalk
{
	Relation	index;
	BlockNumber blkno;			/* the page to visit; kMetaBlock at the end */
	BlockNumber from;			/* the page (or the metapage) linking to it */
	BlockNumber nblocks;		/* the index's length, as last read */
	BlockNumber followed;		/* links followed */
	uint32		visited;		/* pages visited */
} PendingWalk;

void		bloomidx_pending_walk_init(PendingWalk *w, Relation index, BlockNumber head,
									   BlockNumber nblocks);
bool		bloomidx_pending_walk_more(PendingWalk *w);
void		bloomidx_pending_walk_follow(PendingWalk *w, BlockNumber next);

/*
 * One change of the directory, made by the seal lock's holder and
 * published in one WAL record of the metapage (src/segments.md,
 * "Publish"): a segment added (sealed or merged), segments removed (merged
 * away), the pending list's head moved past sealed pages.
 */
typedef struct DirectoryChange
{
	const bloomidx::SegmentEntry *added;	/* a new segment, or NULL */
	uint32		taken_blocks;	/* its blocks taken off the free list, from its
								 * first slice on (0: the index grew) */
	const uint32 *removed;		/* ids of segments removed */
	const bloomidx::SegmentHeader *removed_headers;	/* and their headers */
	const uint32 *removed_group_blocks; /* and the blocks of the filter group
										 * each has right after its header
										 * (bloomidx_own_group_blocks), or 0 */
	uint32		nremoved;
	bloomidx::FreeExtent *unlisted; /* out: removed segments' blocks the free
									 * list had no room for (the caller frees
									 * them); room for nremoved *
									 * kMaxSegmentExtents */
	uint32		nunlisted;
	const bloomidx::FreeExtent *gathered;	/* free blocks VACUUM's sweep adds
											 * to the list (sweep.cpp) */
	uint32		ngathered;
	const bloomidx::FreeExtent *dropped;	/* extents it takes off whole, too
											 * short for a segment */
	uint32		ndropped;
	bool		move_head;		/* the pending head becomes new_head */
	BlockNumber new_head;
	uint32		unlinked_pages; /* pending pages that left the list */
} DirectoryChange;

uint32		bloomidx_publish(Relation index, DirectoryChange *change);
void		bloomidx_free_page(Relation index, BlockNumber blkno, uint32 generation);
void		bloomidx_write_next_segment(Relation index, const BloomidxState *state,
										SegmentRows *rows, const DirectoryCopy *dir,
										BlockNumber nblocks, SegmentFilters *filters,
										bloomidx::SegmentEntry *entry,
										DirectoryChange *change);	/* segment_write.cpp */
bool		bloomidx_seal_filters(const BloomidxState *state, const SegmentRows *rows,
								  SegmentFilters *filters);	/* filter_write.cpp */
bool		bloomidx_merge_filters(Relation index, const BloomidxState *state,
								   const bloomidx::SegmentEntry *sources, uint32 nsources,
								   BlockNumber nblocks, BufferAccessStrategy strategy,
								   SegmentFilters *filters);	/* filter_merge.cpp */

/*
 * build.cpp: CREATE INDEX; one participant's part of it.  Segment ids and
 * directory slots come from one place for all participants.
 */
typedef struct BuildSegmentIds
{
	slock_t		mutex;
	uint32		next_id;		/* the next segment's id */
	uint32		room;			/* directory slots left */
} BuildSegmentIds;

/*
 * filter_write.cpp: a filter group (src/segments.md, *Segment filters*)
 * built in memory, slot by slot, and written whole.
 */
typedef struct FilterGroupBuild
{
	bloomidx::FilterGroupHeader header;
	bool		open;			/* header and image describe a group */
	uint8	   *image;			/* its region rows */
	uint32		entry_index[bloomidx::kGroupSlots]; /* each slot's entry */
	uint64	   *scratch;		/* kDistinctWords words, for distinct_estimate */
	uint8	   *slot_scratch;	/* kFilterScratchBytes: a slot's filter being made */
} FilterGroupBuild;
void		bloomidx_filter_group_init(FilterGroupBuild *g);
void		bloomidx_filter_group_add(Relation index, FilterGroupBuild *g,
									  const BloomidxState *state, const SegmentRows *rows,
									  bloomidx::SegmentEntry *entries, uint32 entry_index,
									  const BlockWriter *writer);
void		bloomidx_filter_group_flush(Relation index, FilterGroupBuild *g,
										bloomidx::SegmentEntry *entries,
										const BlockWriter *writer);
void		bloomidx_filter_group_free(FilterGroupBuild *g);
void		bloomidx_free_unused_groups(Relation index, const DirectoryCopy *dir,
										const bloomidx::SegmentEntry *removed,
										const uint32 *own_blocks, uint32 nremoved,
										BlockNumber nblocks, uint32 generation);
uint32		bloomidx_own_group_blocks(Relation index, const bloomidx::SegmentEntry *e,
									  BlockNumber nblocks, BufferAccessStrategy strategy);

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
 *   pages (build.cpp); the leader of a parallel build then waits for its
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

extern "C" char *bloomidx_build_phase_name(int64 phase);	/* handler.cpp */
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

/* parallel_build.cpp */
int			bloomidx_parallel_build_workers(Relation heap, Relation index,
											IndexInfo *indexInfo);
bool		bloomidx_build_parallel(Relation heap, Relation index, IndexInfo *indexInfo,
									int nworkers, BloomidxBuildPart *leader);
extern "C" PGDLLEXPORT void bloomidx_parallel_build_main(dsm_segment *seg, shm_toc *toc);

/* insert.cpp (MAX_FSM_TRIES bounds a free space map walk whose hints keep being stale) */
#define MAX_FSM_TRIES 8
extern "C" bool bloomidx_insert(Relation index, Datum *values, bool *isnull,
								ItemPointer ht_ctid, Relation heapRel,
								IndexUniqueCheck checkUnique, bool indexUnchanged,
								IndexInfo *indexInfo);
Buffer		bloomidx_extend_buffer(Relation index);

/* wal.cpp */
void		bloomidx_append_logged(Relation index, Buffer buffer,
								   const bloomidx::RowPageGeometry *g, const uint8 *signature,
								   const uint8 *tail);

/* scan.cpp */
extern "C" IndexScanDesc bloomidx_beginscan(Relation r, int nkeys, int norderbys);
extern "C" void bloomidx_rescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
								ScanKey orderbys, int norderbys);
extern "C" int64 bloomidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern "C" void bloomidx_endscan(IndexScanDesc scan);
bool		bloomidx_pending_page_recycled(Relation index, BlockNumber blkno, Buffer *buffer,
										   uint32 generation, const bloomidx::RowPageGeometry *g);

/*
 * segment_scan.cpp: a query over the segments.  The query's bit positions:
 * those of its equality and IS NULL keys (base), and per IN list those of
 * each element (per_element positions each, back to back).
 */
typedef struct SliceList
{
	uint16	   *positions;
	uint32		count;			/* elements */
	uint32		per_element;	/* the column's bits */
} SliceList;

typedef struct SliceQuery
{
	uint16		base[bloomidx::kMaxSignatureBits];
	uint32		nbase;
	SliceList  *lists;
	int			nlists;
} SliceQuery;

/* Where a scan's TIDs go: checked against the table, batched into the bitmap. */
#define TID_BATCH 1024
typedef struct TidSink
{
	TIDBitmap  *tbm;
	Relation	heap;
	BlockNumber heap_blocks;	/* the table's length, read again when passed */
	int			n;
	int64		found;
	ItemPointerData tids[TID_BATCH];
} TidSink;

void		bloomidx_sink_add(Relation index, TidSink *sink, BlockNumber blkno, uint32 entry,
							  const ItemPointerData *tid);
void		bloomidx_sink_flush(TidSink *sink);

typedef struct SegmentScanWork SegmentScanWork;	/* segment_scan.cpp's */
SegmentScanWork *bloomidx_segment_scan_work(void);
bool		bloomidx_scan_segment(Relation index, const SliceQuery *query, SegmentScanWork *work,
								  const bloomidx::SegmentEntry *entry, uint32 nslices,
								  uint32 generation, BlockNumber nblocks, BufferHints *hints,
								  TidSink *sink);
Buffer		bloomidx_read_page(Relation index, BlockNumber blkno, BufferAccessStrategy bas,
							   BufferHints *hints);
bool		bloomidx_page_was_recycled(Relation index, BlockNumber blkno, uint32 generation,
									   bloomidx::PageProblem problem);
bool		bloomidx_copy_segment_page(Relation index, BlockNumber blkno, BufferHints *hints,
									   uint32 generation, char *dst,
									   const bloomidx::SegmentEntry *e, uint32 nslices,
									   BlockNumber nblocks, int kind, int tid_page,
									   const bloomidx::SegmentHeader *header);

/*
 * filter_scan.cpp: the query's keys as (column, hashes) pairs, asked of the
 * segments' filters before their slices are read.  A key passes a segment
 * if one of its hashes may be there (one for an equality or IS NULL, the
 * elements for an IN list).
 */
/*
 * An IN list of more elements than this is not asked of the filters: each
 * element may take a page per group, and a long list passes most segments
 * anyway.
 */
#define MAX_FILTER_HASHES 64
typedef struct FilterKey
{
	int			column;
	uint32		nhashes;
	const uint64 *hashes;
} FilterKey;
typedef struct FilterQuery
{
	FilterKey  *keys;
	int			nkeys;
} FilterQuery;
void		bloomidx_filter_query_add(FilterQuery *query, int column, const uint64 *hashes,
									  uint32 nhashes);
bool		bloomidx_filter_segments(Relation index, const FilterQuery *query,
									 const DirectoryCopy *dir, uint32 ncolumns,
									 BlockNumber nblocks, BufferHints *hints, bool *skip);

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
extern "C" PGDLLEXPORT Datum bloomidx_index_info(PG_FUNCTION_ARGS);	/* info.cpp */
extern "C" PGDLLEXPORT Datum bloomidx_advise(PG_FUNCTION_ARGS);	/* advise.cpp */
Relation	bloomidx_open_relation(Oid relid, LOCKMODE lockmode);
Relation	bloomidx_open_metapage_reader(Oid indexoid, const char *what, LOCKMODE lockmode);
extern "C" PGDLLEXPORT Datum bloomidx_stats(PG_FUNCTION_ARGS);	/* stats.cpp */
extern "C" PGDLLEXPORT Datum bloomidx_page_items(PG_FUNCTION_ARGS);	/* page_items.cpp */
bloomidx::PageProblem bloomidx_page_kind(Page page, uint16 *kind);
extern "C" PGDLLEXPORT Datum bloomidx_seal(PG_FUNCTION_ARGS);	/* seal.cpp */
int64		bloomidx_seal_once(Relation index, uint32 min_rows);
int64		bloomidx_seal_all(Relation index, uint32 min_rows, bool build_progress = false);
void		bloomidx_seal_if_due(Relation index, uint32 pending_pages, uint32 capacity);
uint32		bloomidx_seal_threshold(uint32 capacity);
void		bloomidx_merge_segments(Relation index, BufferAccessStrategy strategy);	/* merge.cpp */

/*
 * The steps of a seal or merge (src/segments.md, "Crashes") at which
 * bloomidx.debug_seal_stop stops the server, so that the TAP tests can
 * crash at each one (seal.cpp).
 */
typedef enum SealStep
{
	SEAL_STEP_MARKED = 1,		/* pending pages marked as being sealed */
	SEAL_STEP_WRITTEN = 2,		/* the new segment's pages written */
	SEAL_STEP_PUBLISHED = 3,	/* the directory changed */
	SEAL_STEP_FREED = 4,		/* the old pages freed */
	SEAL_STEP_DIRECTORY_WRITTEN = 5,	/* in a publish: directory pages written */
	SEAL_STEP_DIRECTORY_SWITCHED = 6	/* in a publish: its record written, the
										 * replaced directory pages not yet freed */
} SealStep;
extern int	bloomidx_debug_seal_stop;
bool		bloomidx_debug_check(int *newval, void **extra, GucSource source);
void		bloomidx_seal_step(SealStep step);

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
	PAUSE_DIRECTORY_PAGES		/* a copy of the directory has the metapage's
								 * part, not yet its directory pages */
} DebugPause;
#define BLOOMIDX_PAUSE_KEY 4242
extern int	bloomidx_debug_pause_at;
extern const struct config_enum_entry debug_pause_options[];
void		bloomidx_debug_pause(DebugPause point);
void		bloomidx_sweep(Relation index, BufferAccessStrategy strategy,
						   IndexBulkDeleteResult *stats);	/* sweep.cpp */

#endif							/* BLOOMIDX_H */
