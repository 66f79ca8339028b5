/*
 * verify_state.h: bloomidx_verify's state and the calls between its files.
 *   verify.cpp: the function (its design in the opening comment), the
 *     batches of heap blocks, and the table's rows against the entries;
 *   verify_pages.cpp: a pass over every index page, each checked, the
 *     entries of the batch's blocks kept;
 *   verify_filters.cpp: the segments' filter groups and the pending
 *     groups, checked and copied, and a row's filter keys probed in them.
 * verify.cpp calls into the other two, verify_pages.cpp into
 * verify_filters.cpp; the page copy all three start from is here.  Private
 * to those three files.
 */
#ifndef BLOOMIDX_VERIFY_STATE_H
#define BLOOMIDX_VERIFY_STATE_H

#include "functions/functions.h"

#include "core/hash.hpp"

extern "C" {
#include "access/heapam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
}

using bloomidx::MetaPageData;
using bloomidx::PageProblem;

/*
 * One index entry, as collected: key is the heap TID and the entry's slot
 * on its page, (block << 32) | (offset << 16) | slot, so that sorting by
 * key sorts by TID; entry is its number in the signature arena.
 */
typedef struct EntryKey
{
	uint64		key;
	uint32		entry;
	BlockNumber index_block;
} EntryKey;

/*
 * The fewest entries a batch keeps, whatever maintenance_work_mem says:
 * more than a heap page's line pointers, one entry each at most (a dead
 * row keeps its line pointer until VACUUM has removed its entries), so
 * that a batch of one block always fits.
 */
#define ENTRIES_AT_LEAST ((Size) 4096)
StaticAssertDecl(ENTRIES_AT_LEAST > MaxHeapTuplesPerPage,
				 "a batch of one heap block fits the fewest entries kept");

static inline uint64
tid_key(BlockNumber block, OffsetNumber offset)
{
	return ((uint64) block << 32) | ((uint64) offset << 16);
}

typedef struct VerifyState
{
	Relation	index;
	Relation	heap;
	BloomidxState state;		/* hashers and the options frozen at build */
	MetaPageData meta;			/* as read from block 0 */
	bloomidx::RowPageGeometry geometry;
	uint32		min_bits;		/* the most bits one column sets */
	int			min_bits_column;
	BlockNumber heap_blocks;	/* the table's length, as last measured */

	MemoryContext cxt;			/* everything below */
	MemoryContext pass_cxt;		/* a pass's filter copies and segment scratch, reset at each pass */
	MemoryContext tuple_cxt;	/* reset after every heap row */
	EntryKey   *keys;
	uint8	   *signatures;		/* entry i at i * signature_bytes */
	Size		nentries;
	Size		max_entries;	/* room in keys and signatures */

	/*
	 * The entries kept are those of heap blocks [rows_lo, rows_hi), at
	 * most entry_budget of them (maintenance_work_mem); a pass that met more
	 * sets overflow, and is made again over fewer blocks (check_batch).
	 */
	BlockNumber rows_lo;
	BlockNumber rows_hi;
	Size		entry_budget;
	bool		overflow;
	Size		entries_in_range;	/* the pass's entries of the batch's blocks, kept or not */
	uint32		passes;			/* passes over the index's pages */
	uint32		batches;		/* heap block ranges checked */
	IndexInfo  *indexInfo;		/* for the table scans, made once */

	BlockNumber index_blocks;
	BlockNumber pending_pages;
	uint32		segments;
	int64		heap_rows;		/* rows the table scan checked */

	PageProblem sums_problem;	/* first page whose entry sums disagree */
	BlockNumber sums_problem_block;

	PGAlignedBlock page;		/* copy of the page being checked */
	uint8		expected[bloomidx::kMaxSignatureBytes];
	uint32		row_keys[INDEX_MAX_KEYS];	/* the row's filter keys */
	uint64	   *key_digests;	/* entry i's: a pending entry's filter keys'
								 * digest (key_digest), 0 for a segment's
								 * row; NULL where rows keep no keys */

	/* Segment filters: each group's pages, and each segment's group and slot. */
	struct VerifyGroup *groups;
	uint32		ngroups;
	uint32		max_groups;
	struct SegmentFilterRef *filter_refs;	/* sorted by header block to look up */
	uint32		nfilter_refs;
	uint32		max_filter_refs;

	/*
	 * Pending groups (format 17): the chain's groups, copied before the
	 * pending list is walked, and their slots, sorted by pending page to
	 * look up as the walk meets each page.
	 */
	struct VerifyGroup *pending_groups;
	uint32		npending_groups;
	struct PendingSlotRef *pending_slots;
	uint32		npending_slots;
} VerifyState;

typedef struct VerifyGroup
{
	BlockNumber block;			/* its header */
	bloomidx::FilterGroupHeader header;
	bloomidx::PendingGroupLinks links;	/* a pending group's */
	uint8	   *region;			/* its region pages, copied; NULL: checked, not kept */
	uint32	   *region_blocks;	/* where they are */
} VerifyGroup;

typedef struct PendingSlotRef
{
	BlockNumber page;			/* the pending page it was taken for */
	uint32		group;			/* in pending_groups */
	uint32		slot;
	uint32		run;			/* its place in the run, from 0 */
	BlockNumber next;			/* the page's successor as the walk met it;
								 * InvalidBlockNumber: not met */
} PendingSlotRef;

typedef struct SegmentFilterRef
{
	BlockNumber header_block;	/* the segment's header: an entry's index_block */
	uint32		group;			/* in groups */
	bloomidx::SlotMask slots;	/* the slots taken for it */
	uint32		segment_id;
} SegmentFilterRef;

/* What copy_checked's checks of a segment's pages need to know. */
typedef struct SegmentCheckArg
{
	const bloomidx::SegmentEntry *entry;
	const bloomidx::SegmentHeader *header;
	uint32		nslices;
	BlockNumber nblocks;
	uint32		index;			/* TID page index, slice, or filter region page */
	Relation	index_rel;		/* filter pages: the index */
	const bloomidx::FilterGroupHeader *group;	/* filter region pages: their group */
} SegmentCheckArg;

/* Copies block blkno into vs->page under a share lock: every check starts from the copy. */
static inline void
verify_copy_page(VerifyState *vs, BlockNumber blkno, BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(vs->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(vs->page.data, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);
}

/*
 * Copies block blkno into vs->page and checks it with `problem`; a
 * failure is damage, unless the directory changed since its copy of
 * `generation` (a concurrent seal reused the page): then false.
 */
static inline bool
verify_copy_checked(VerifyState *vs, BlockNumber blkno, BufferAccessStrategy bas, uint32 generation,
					PageProblem (*check) (const uint8 *page, const void *arg), const void *arg)
{
	verify_copy_page(vs, blkno, bas);
	PageProblem problem = check((const uint8 *) vs->page.data, arg);

	if (problem == PageProblem::None)
		return true;
	if (bloomidx_directory_generation(vs->index) != generation)
		return false;
	bloomidx_report_page_problem(vs->index, blkno, problem);
	return false;				/* not reached */
}

/*
 * A pending entry's filter keys (g.keys of them, as stored), as compared
 * with the keys its row's values give: a seal builds the segment's filters
 * from them, so a wrong key would hide the row once sealed.
 */
static inline uint64
verify_key_digest(const uint8 *keys, uint32 nkeys)
{
	return (UINT64CONST(1) << 32) |
		(uint32) bloomidx::hash_bytes(keys, nkeys * bloomidx::kFilterKeySize, bloomidx::kMetaMagic);
}

/*
 * ---------------------------------------------------------------------
 * verify_pages.cpp
 * ---------------------------------------------------------------------
 */
void		verify_check_metapage(VerifyState *vs);
bool		verify_check_pages_pass(VerifyState *vs, BufferAccessStrategy bas);
void		verify_reset_pass(VerifyState *vs);

/*
 * ---------------------------------------------------------------------
 * verify_filters.cpp
 * ---------------------------------------------------------------------
 */
bool		verify_collect_filter(VerifyState *vs, const bloomidx::SegmentEntry *e,
								  BufferAccessStrategy bas, uint32 generation, BlockNumber nblocks,
								  bool keep);
bool		verify_collect_pending_groups(VerifyState *vs, const DirectoryCopy *dir,
										  BufferAccessStrategy bas);
bool		verify_check_pending_slot_page(VerifyState *vs, BlockNumber blkno, uint32 generation);
bool		verify_check_pending_run(VerifyState *vs, uint32 generation);
void		verify_free_pending_groups(VerifyState *vs);
int			verify_compare_filter_refs(const void *a, const void *b);
void		verify_check_row_filter(VerifyState *vs, const EntryKey *k, BlockNumber heap_block,
									OffsetNumber offset);
void		verify_check_row_keys(VerifyState *vs, const EntryKey *k, BlockNumber heap_block,
								  OffsetNumber offset);

#endif							/* BLOOMIDX_VERIFY_STATE_H */
