/*
 * storage.h: the storage under the access method's callbacks (README.md
 * beside it is its design note): sealed segments, the pending list, the
 * metapage's directory and free list, segment filters, seals, merges and
 * the sweep, and how their pages reach the index.  Sectioned by file,
 * each declaration under the file that defines it.  The storage calls
 * down into support/ and core/ only.
 */
#ifndef BLOOMIDX_STORAGE_H
#define BLOOMIDX_STORAGE_H

#include "support/support.h"

#include "core/query.hpp"

typedef struct DirectoryCopy DirectoryCopy;
typedef struct DirectoryChange DirectoryChange;

/*
 * ---------------------------------------------------------------------
 * block_write.cpp: how a segment's or filter group's new pages reach the
 * index: straight to its file (CREATE INDEX) or through shared buffers.
 * ---------------------------------------------------------------------
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
extern int	bloomidx_wal_flush_pages;
BlockNumber bloomidx_extend_run(Relation index, uint32 n, const BlockWriter *writer);
void		bloomidx_write_run_block(Relation index, BlockNumber blkno, char *image,
									 const BlockWriter *writer);
void		bloomidx_block_writer_finish(const BlockWriter *writer, Relation index);
/* Bounds a free space map walk whose hints keep being stale (here and in insert.cpp). */
#define MAX_FSM_TRIES 8
Buffer		bloomidx_free_buffer_before(Relation index, BlockNumber limit);
Buffer		bloomidx_free_or_new_buffer(Relation index);
Buffer		bloomidx_extend_buffer(Relation index);

/*
 * ---------------------------------------------------------------------
 * segment_write.cpp: rows gathered in memory, written as one segment.
 * ---------------------------------------------------------------------
 */
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

/*
 * A seal's or merge's segment's own filter group (filter_write.cpp,
 * filter_merge.cpp), made in memory and written with the segment.
 */
typedef struct SegmentFilters
{
	bloomidx::FilterGroupHeader header;	/* group id and slots set by the writer */
	uint8	   *image;			/* its region rows, back to back */
} SegmentFilters;

extern int	bloomidx_segment_rows;
uint32		bloomidx_segment_capacity(uint32 page_capacity);
bool		bloomidx_packs_slices(void);
uint16		bloomidx_slices_per_page(uint32 rows);
uint32		bloomidx_segment_blocks_for_rows(const bloomidx::MetaPageData *meta, uint32 rows);
uint32		bloomidx_segment_min_blocks(const bloomidx::MetaPageData *meta);
void		bloomidx_segment_rows_init(SegmentRows *rows, uint32 signature_bytes, uint32 capacity);
void		bloomidx_segment_rows_free(SegmentRows *rows);
void		bloomidx_segment_rows_keep_keys(SegmentRows *rows, uint32 ncolumns);
void		bloomidx_segment_rows_tail(const SegmentRows *rows, uint32 r,
									   const bloomidx::RowPageGeometry *g, uint8 *tail);
void		bloomidx_write_segment(Relation index, const BloomidxState *state, SegmentRows *rows,
								   uint32 segment_id, const BlockWriter *writer,
								   bloomidx::FreeList *list, const DirectoryCopy *dir,
								   SegmentFilters *filters, bool keep_keys, uint32 *taken,
								   bloomidx::SegmentEntry *entry);
/*
 * Where a filter group written in single free pages takes them: the free
 * space map's before `limit` (past the last segment's header, what VACUUM's
 * truncation may give back), else a run off the free list of `dir`, the
 * lowest that fits (its blocks taken by the publish that names the group:
 * first, nblocks), else the map's anywhere, else new pages at the end.
 */
typedef struct GroupSpill
{
	const DirectoryCopy *dir;	/* in: the directory copy, under the seal lock */
	BlockNumber limit;			/* in: blocks before it first */
	BlockNumber first;			/* out: the run taken, if nblocks > 0 (in: 0) */
	uint32		nblocks;		/* out: its length (in: 0) */
	uint32		used;			/* its blocks written so far */
} GroupSpill;
BlockNumber bloomidx_write_filter_group(Relation index, bloomidx::FilterGroupHeader *h,
										const uint8 *image, BlockNumber first,
										const BlockWriter *writer, const DirectoryCopy *listed,
										GroupSpill *spill, BloomidxIOBlock *page);
void		bloomidx_write_next_segment(Relation index, const BloomidxState *state,
										SegmentRows *rows, const DirectoryCopy *dir,
										BlockNumber nblocks, SegmentFilters *filters,
										bool keep_keys, bloomidx::SegmentEntry *entry,
										DirectoryChange *change);

/*
 * ---------------------------------------------------------------------
 * recycle.cpp: pages freed with the generation that unlinked them, and
 * how a reader holding an older directory copy tells a recycled page
 * from a damaged one.
 * ---------------------------------------------------------------------
 */
uint32		bloomidx_directory_generation(Relation index);
bool		bloomidx_page_was_recycled(Relation index, BlockNumber blkno, uint32 generation,
									   bloomidx::PageProblem problem);
void		bloomidx_free_page(Relation index, BlockNumber blkno, uint32 generation);

/*
 * ---------------------------------------------------------------------
 * directory.cpp: the metapage's segment directory, pending list ends and
 * free list, as readers copy them and as the seal lock's holder changes
 * them.
 * ---------------------------------------------------------------------
 */

/* A copy of the directory, as a scan or VACUUM takes it. */
struct DirectoryCopy
{
	bloomidx::DirectoryHeader header;
	bloomidx::SegmentEntry *entries;	/* header.nsegments of them, inline ones
										 * and those of directory pages */
	uint32		capacity;		/* entries' room */
	MemoryContext cxt;			/* where entries live */
	bool		scratch;		/* or a scan's scratch (support.h): not freed */
	bloomidx::DirectoryPageList pages;	/* the directory pages */
	bloomidx::FreeList free;
	bloomidx::PendingFilters pending_filters;	/* the pending groups (format 17) */
};

void		bloomidx_read_directory(Relation index, BlockNumber *nblocks, DirectoryCopy *copy);
void		bloomidx_read_directory_for_scan(Relation index, BlockNumber *nblocks,
											 DirectoryCopy *copy);
uint32		bloomidx_publish_generation(Relation index);

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
	bool		pending_groups; /* the metapage names pending groups */
} DirectoryStats;
void		bloomidx_directory_stats(Relation index, DirectoryStats *stats);

/*
 * One change of the directory, made by the seal lock's holder and
 * published in one WAL record of the metapage (README.md, "Writing"): a
 * segment added (sealed or merged), segments removed (merged away), free
 * extents the sweep found, the pending list's head moved past sealed
 * pages, segments' filters moved to a gathered group (refiled).
 */
struct DirectoryChange
{
	const bloomidx::SegmentEntry *added;	/* a new segment, or NULL */
	uint32		taken_blocks;	/* its blocks taken off the free list, from its
								 * first slice on, or from taken_first (0: none
								 * taken, the index grew) */
	BlockNumber taken_first;	/* without a segment added: where the blocks
								 * taken start (a gathered filter group's) */
	const uint32 *removed;		/* ids of segments removed */
	const bloomidx::SegmentHeader *removed_headers;	/* and their headers */
	const uint32 *removed_group_blocks; /* and the blocks of the filter group
										 * each has right after its header
										 * (bloomidx_own_group_blocks), or 0 */
	uint32		nremoved;
	bloomidx::FreeExtent *extents_to_free;	/* out: removed segments' extents
											 * the free list had no room for,
											 * which the caller frees page by
											 * page; room for nremoved *
											 * kMaxSegmentExtents */
	uint32		nextents_to_free;
	const bloomidx::FreeExtent *extents_to_list;	/* free extents VACUUM's
													 * sweep found, added to
													 * the list */
	uint32		nextents_to_list;
	const bloomidx::FreeExtent *extents_to_unlist;	/* extents the sweep takes
													 * off the list whole, too
													 * short for a segment */
	uint32		nextents_to_unlist;
	bool		move_head;		/* the pending head becomes new_head */
	BlockNumber new_head;		/* kMetaBlock: what follows unlinked_last now */
	uint32		unlinked_pages; /* pending pages that left the list */
	BlockNumber unlinked_last;	/* the last of them */
	const bloomidx::SegmentEntry *refiled;	/* segments whose filters moved
											 * to a new group: their ids and
											 * filter fields */
	uint32		nrefiled;
	uint32		new_groups;		/* group ids taken from next_group_id, for
								 * the groups refiled names */
	bool		drop_pending_filters;	/* the pending groups dropped (as a
										 * move_head must):
										 * bloomidx_publish_dropping_pending_filters */
};

uint32		bloomidx_publish(Relation index, DirectoryChange *change);
uint32		bloomidx_publish_free_extents(Relation index, const bloomidx::FreeExtent *to_list,
										  uint32 nlist, const bloomidx::FreeExtent *to_unlist,
										  uint32 nunlist);
void		bloomidx_check_free_list(Relation index, const DirectoryCopy *dir, uint32 nslices,
									 BlockNumber nblocks);

/*
 * ---------------------------------------------------------------------
 * pending_filters.cpp: filters over the pending pages that filled.
 * ---------------------------------------------------------------------
 */

/*
 * The inserts that link every PENDING_FILTERS_EVERY-th pending page give
 * the pages that filled their slots (pending_filters.cpp), so a scan walks
 * at most that many pages past the groups' run, the tail with them, unless
 * a pass was skipped (the seal lock taken), a seal's pass is under way,
 * the run stopped at a page not yet full, or the scan's header is behind.
 * Every one: a pass logs only its slots' blocks (wal.cpp), so passes a
 * page apart cost a bulk INSERT of data set A no more than passes four
 * apart did (storage/README.md, *Every filled page, at twice the bits*).
 */
#define PENDING_FILTERS_EVERY 1

void		bloomidx_pending_filters_add(Relation index, const BloomidxState *state,
										 BlockNumber filled, uint32 pending_pages);
void		bloomidx_pending_filters_after_seal(Relation index, uint32 seal_threshold,
												bool in_statement);
void		bloomidx_pending_filters_if_full(Relation index);
bloomidx::PageProblem bloomidx_pending_group_copy(Relation index, BlockNumber blkno, uint32 id,
												  BlockNumber *nblocks,
												  BufferAccessStrategy strategy, char *copy);
BlockNumber *bloomidx_pending_filters_pages(Relation index, uint32 *n);
uint32		bloomidx_publish_dropping_pending_filters(Relation index, DirectoryChange *change);
void		bloomidx_pending_filters_drop(Relation index);
bool		bloomidx_pending_group_probe(Relation index, const bloomidx::FilterQuery *query,
										 const char *hcopy, BlockNumber header_block,
										 uint32 generation, BufferAccessStrategy bas,
										 BufferHints *hints, bloomidx::SlotMask *passed);

/*
 * ---------------------------------------------------------------------
 * directory_pages.cpp: the directory's entries past the metapage's.
 * ---------------------------------------------------------------------
 */
DirectoryCopy *bloomidx_directory_copy_new(void);
void		bloomidx_directory_copy_init(DirectoryCopy *copy);
void		bloomidx_directory_copy_init_scratch(DirectoryCopy *copy);
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

/*
 * ---------------------------------------------------------------------
 * pending_list.cpp: walking the pending list, each link checked; moving a page of it.
 * ---------------------------------------------------------------------
 */

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
void		bloomidx_check_pending_link(Relation index, BlockNumber from, BlockNumber blkno,
										BlockNumber *nblocks, BlockNumber *followed);
bool		bloomidx_check_pending_count(Relation index, const DirectoryCopy *dir,
										 uint32 walked);
bool		bloomidx_pending_page_recycled(Relation index, BlockNumber blkno, Buffer *buffer,
										   uint32 generation, const bloomidx::RowPageGeometry *g);
void		bloomidx_pending_predecessors(Relation index, const BlockNumber *blocks, uint32 n,
										  BlockNumber *preds);
bool		bloomidx_move_pending_page(Relation index, BlockNumber from, BlockNumber before,
									   Buffer to);

/*
 * ---------------------------------------------------------------------
 * filter_write.cpp: segment filter groups.  A build spools each
 * segment's filters, made alone, to a temporary file, and writes a group
 * of up to kGroupSlots of them row by row from there.
 * ---------------------------------------------------------------------
 */
/*
 * Segment ids, directory slots and filter group ids, from one place for
 * all of a build's participants (build_part.cpp); and the block counts
 * their groups start from, the first segment's (so that the leader can
 * join their last groups' slots into one).
 */
typedef struct BuildSegmentIds
{
	slock_t		mutex;
	uint32		next_id;		/* the next segment's id */
	uint32		room;			/* directory slots left */
	uint32		next_group_id;	/* the next filter group's (kFirstGroupId up) */
	bool		has_like;
	uint16		like[INDEX_MAX_KEYS];
} BuildSegmentIds;

typedef struct FilterGroupBuild
{
	uint32		nslots;			/* segments spooled for the next group */
	BufFile    *spool;			/* their filters, a one-slot group's rows each */
	FileSet    *fileset;		/* a parallel worker's: the spool is made there, by name */
	int			participant;	/* its name's number */
	BuildSegmentIds *shared;	/* a parallel build's: where like is shared; else NULL */
	bool		has_like;		/* like: the block counts its groups start from */
	uint16		like[INDEX_MAX_KEYS];
	bloomidx::FilterGroupHeader *slot_header;	/* [kGroupSlots] each one's own */
	BufFile    *slot_spool[bloomidx::kGroupSlots];	/* where its rows are: spool, or
													 * another participant's */
	int			spool_file[bloomidx::kGroupSlots];	/* where its rows start */
	off_t		spool_offset[bloomidx::kGroupSlots];
	uint32		entry_index[bloomidx::kGroupSlots]; /* each slot's entry */
} FilterGroupBuild;

/* Where a parallel build's participant left its last slots (bloomidx_filter_group_export). */
typedef struct FilterSlotsLeft
{
	uint32		nslots;
	int			file;			/* in its spool: their headers, files, offsets, entries */
	off_t		offset;
} FilterSlotsLeft;

double		bloomidx_filter_bits_per_key(Relation index);
void		bloomidx_state_filters(BloomidxState *state, Relation index);
void		bloomidx_filter_group_init(FilterGroupBuild *g);
/* What bloomidx_filter_group_add did with a segment's filters. */
typedef enum FilterSpool
{
	FILTERS_NONE,				/* the index writes no filters: nothing */
	FILTERS_SPOOLED,			/* spooled for the group being gathered */
	FILTERS_GROUP_FULL,			/* spooled, and the group is full: write it */
	FILTERS_NEED_NEW_GROUP		/* not spooled: write the group, then add again */
} FilterSpool;

FilterSpool bloomidx_filter_group_add(FilterGroupBuild *g, const BloomidxState *state,
									  const SegmentRows *rows, uint32 entry_index);
void		bloomidx_filter_group_flush(Relation index, FilterGroupBuild *g, uint32 group_id,
										bloomidx::SegmentEntry *entries,
										const BlockWriter *writer);
void		bloomidx_filter_group_free(FilterGroupBuild *g);
void		bloomidx_filter_group_share(FilterGroupBuild *g, BuildSegmentIds *shared,
										FileSet *fileset, int participant);
void		bloomidx_filter_group_export(FilterGroupBuild *g, FilterSlotsLeft *left);
BufFile    *bloomidx_filter_group_import(FilterGroupBuild *g, FileSet *fileset, int participant,
										 const FilterSlotsLeft *left, Relation index,
										 bloomidx::SegmentEntry *entries, BuildSegmentIds *ids,
										 const BlockWriter *writer);
void		bloomidx_filter_group_flush_all(Relation index, FilterGroupBuild *g,
											BuildSegmentIds *ids, bloomidx::SegmentEntry *entries,
											const BlockWriter *writer);
bool		bloomidx_segment_filters(const BloomidxState *state, const SegmentRows *rows,
									 SegmentFilters *filters);
void		bloomidx_free_unused_groups(Relation index, const DirectoryCopy *dir,
										const bloomidx::SegmentEntry *removed,
										const uint32 *own_blocks, uint32 nremoved,
										BlockNumber nblocks, uint32 generation);
uint32		bloomidx_own_group_blocks(Relation index, const bloomidx::SegmentEntry *e,
									  BlockNumber nblocks, BufferAccessStrategy strategy);

/*
 * ---------------------------------------------------------------------
 * filter_merge.cpp: a merged segment's filters, from its sources'.
 * ---------------------------------------------------------------------
 */
uint32		bloomidx_filter_slots(Relation index, const bloomidx::SegmentEntry *e,
								  BlockNumber nblocks, BufferAccessStrategy strategy);
uint32		bloomidx_merged_slots_max(void);
bool		bloomidx_merge_filters(Relation index, const BloomidxState *state,
								   const bloomidx::SegmentEntry *sources, uint32 nsources,
								   BlockNumber nblocks, BufferAccessStrategy strategy,
								   SegmentFilters *filters);
bool		bloomidx_gather_filters(Relation index, uint32 ncolumns,
									const bloomidx::SegmentEntry *sources, uint32 nsources,
									uint32 max_slots, bool merging, BlockNumber nblocks,
									BufferAccessStrategy strategy, SegmentFilters *filters,
									uint32 *failed_segment);

/*
 * ---------------------------------------------------------------------
 * filter_gather.cpp: VACUUM gathers small filter groups into one.
 * ---------------------------------------------------------------------
 */
void		bloomidx_gather_filter_groups(Relation index, BufferAccessStrategy strategy);

/*
 * ---------------------------------------------------------------------
 * seal.cpp: pending rows sealed into a segment.
 * ---------------------------------------------------------------------
 */
int64		bloomidx_seal_once(Relation index, uint32 min_rows, bool through_tail = false);
int64		bloomidx_seal_all(Relation index, uint32 min_rows, bool build_progress = false);
void		bloomidx_seal_if_due(Relation index, uint32 pending_pages, uint32 capacity);

/* The rows a seal may take of pending_pages pages of capacity rows: all but the tail's. */
static inline uint64
bloomidx_pending_rows_sealable(uint32 pending_pages, uint32 capacity)
{
	return (uint64) (pending_pages > 0 ? pending_pages - 1 : 0) * capacity;
}
uint32		bloomidx_seal_threshold(uint32 capacity);
uint32		bloomidx_vacuum_seal_threshold(const bloomidx::MetaPageData *meta);
void		bloomidx_vacuum_flush(Relation index);

/*
 * ---------------------------------------------------------------------
 * merge.cpp: VACUUM's rewrite of segments deletions left mostly dead.
 * ---------------------------------------------------------------------
 */
void		bloomidx_merge_segments(Relation index, BufferAccessStrategy strategy);
void		bloomidx_move_last_segments(Relation index, BufferAccessStrategy strategy,
										BlockNumber free_pages);

/*
 * ---------------------------------------------------------------------
 * heap_keys.cpp: a merge's filter keys, from the table, for the sources
 * that kept none.
 * ---------------------------------------------------------------------
 */
typedef struct HeapKeys HeapKeys;
bool		bloomidx_heap_keys_usable(Relation index);
HeapKeys   *bloomidx_heap_keys_begin(Relation index, uint32 signature_bytes);
bool		bloomidx_heap_keys_read(HeapKeys *hk, const BloomidxState *state, SegmentRows *rows,
									uint32 first, uint32 n);
void		bloomidx_heap_keys_end(HeapKeys *hk);

/*
 * ---------------------------------------------------------------------
 * sweep.cpp: VACUUM's sweep of pages nothing points at onto the free list.
 * ---------------------------------------------------------------------
 */
void		bloomidx_sweep(Relation index, BufferAccessStrategy strategy,
						   IndexBulkDeleteResult *stats);

/*
 * ---------------------------------------------------------------------
 * truncate.cpp: VACUUM gives the free pages that end the index back.
 * ---------------------------------------------------------------------
 */
void		bloomidx_truncate_free_tail(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);

/*
 * ---------------------------------------------------------------------
 * tid_sink.cpp: where a scan's TIDs go: checked against the table,
 * batched into the bitmap.
 * ---------------------------------------------------------------------
 */
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

/*
 * ---------------------------------------------------------------------
 * segment_scan.cpp: a query over one sealed segment, its bit positions
 * (core/query.hpp's SliceQuery) tested slice by slice.
 * ---------------------------------------------------------------------
 */
typedef struct SegmentScanWork SegmentScanWork;	/* segment_scan.cpp's */
SegmentScanWork *bloomidx_segment_scan_work(void);
bool		bloomidx_scan_segment(Relation index, const bloomidx::SliceQuery *query,
								  const uint64 *elements, SegmentScanWork *work,
								  const bloomidx::SegmentEntry *entry, uint32 nslices,
								  uint32 generation, BlockNumber nblocks, BufferHints *hints,
								  bool prefetch, TidSink *sink);
void		bloomidx_prefetch_segment(Relation index, const bloomidx::SliceQuery *query,
									  const uint64 *elements,
									  const bloomidx::SegmentEntry *entry, BlockNumber nblocks,
									  const BufferHints *hints);
bool		bloomidx_copy_segment_page(Relation index, BlockNumber blkno, BufferHints *hints,
									   uint32 generation, char *dst,
									   const bloomidx::SegmentEntry *e, uint32 nslices,
									   BlockNumber nblocks, int kind);

/*
 * ---------------------------------------------------------------------
 * header_cache.cpp: the filter groups' header pages and the directory
 * pages' entries a backend's scans read, kept for one generation of the
 * directory of each of the last few indexes scanned.
 * ---------------------------------------------------------------------
 */
bool		bloomidx_cached_group_header(Relation index, uint32 generation, BlockNumber blkno,
										 uint32 group_id, char *copy);
bool		bloomidx_group_header_kept(Relation index, uint32 generation, BlockNumber blkno,
									   uint32 group_id);
void		bloomidx_keep_group_header(Relation index, uint32 generation, BlockNumber blkno,
									   uint32 group_id, const char *copy);
bool		bloomidx_cached_pending_group_header(Relation index,
												 const bloomidx::DirectoryHeader *dir,
												 BlockNumber blkno, uint32 group_id, char *copy);
void		bloomidx_keep_pending_group_header(Relation index, const bloomidx::DirectoryHeader *dir,
											   BlockNumber blkno, uint32 group_id,
											   const char *copy);
void		bloomidx_forget_pending_group_header(Relation index,
												 const bloomidx::DirectoryHeader *dir,
												 BlockNumber blkno);
void		bloomidx_forget_group_headers(Relation index);
bool		bloomidx_cached_directory_pages(Relation index, DirectoryCopy *copy);
const bloomidx::SegmentEntry *bloomidx_kept_directory_entries(Relation index, uint32 generation,
															  uint32 nsegments);
void		bloomidx_keep_directory_pages(Relation index, const DirectoryCopy *copy);
void		bloomidx_header_cache_init(void);

/*
 * ---------------------------------------------------------------------
 * filter_scan.cpp: the query's filter keys (core/query.hpp's FilterQuery)
 * asked of the segments' filters before their slices are read.
 * ---------------------------------------------------------------------
 */
bool		bloomidx_filter_segments(Relation index, const bloomidx::FilterQuery *query,
									 const DirectoryCopy *dir, uint32 ncolumns,
									 BlockNumber nblocks, BufferHints *hints, ReadAhead *ra,
									 bool *skip, uint64 *elements);
void		bloomidx_prefetch_filter_groups(Relation index, const DirectoryCopy *dir,
											BlockNumber nblocks, const BufferHints *hints,
											int distance);
bool		bloomidx_lock_region(Relation index, const uint8 *header, BlockNumber header_block,
								 uint32 region_page, uint32 generation, BufferAccessStrategy bas,
								 BufferHints *hints, int64 *loaded, Buffer *region);

#endif							/* BLOOMIDX_STORAGE_H */
