/*
 * verify.cpp: bloomidx_verify(index regclass), in the spirit of amcheck's
 * bt_index_check(index, heapallindexed => true).
 *
 * It checks, with only the locks a reader takes (AccessShareLock on the
 * table and the index, a share lock on one buffer at a time):
 *   - the metapage (core/page_layout.hpp's check_meta_page, the number of
 *     columns, the insert hint inside the file);
 *   - every data page (check_row_page: special space, kind, format, count,
 *     pd_lower / pd_upper / pd_special, the sums of its signatures and of
 *     its TIDs) and every entry on it: its heap TID
 *     is a valid item pointer inside the table, its signature has no bit
 *     past the index's length and at least the bits one column sets;
 *     pages PageIsNew (an extension a crash interrupted) are skipped;
 *   - the pending groups (format 17; storage/pending_filters.cpp): their
 *     chain from the metapage (each header as a scan checks it, ids
 *     growing along it, no cycle, none of their pages on the free list),
 *     their region pages, that their slots' pages are a run of the pending
 *     list (the first slot's page on it, each next slot's page its
 *     predecessor's successor, a group starting at the page the one before
 *     it names as `after`, each `after` its last slot's page's successor),
 *     each such page full, and that each row's filter key of every column
 *     is in its slot's filter of the column (probed as a scan probes it: a
 *     key missing is a row a scan would skip);
 *   - that every row the table shows (an MVCC snapshot registered before
 *     the first index page is read, so every row it sees had its entry
 *     inserted before) has an entry with its TID whose signature holds
 *     every bit the row's values set.  Entries of rows the snapshot does
 *     not see (dead, not yet vacuumed) are fine.
 * The entries it keeps to compare with the table (16 bytes and a
 * signature each, 8 more where pending rows keep filter keys: 38 for six
 * int4 columns) stay within maintenance_work_mem, and at least
 * ENTRIES_AT_LEAST of them (150 kB for six int4 columns, 2.2 MB for
 * 4,096-bit signatures); past that it checks the table in batches of heap
 * blocks, each a pass over the index's pages and over those blocks
 * (check_batch).  A segment's rows are checked one segment at a time
 * (their TIDs, slots and bit counts: 12 bytes a row, 0.8 MB at most),
 * only those of the batch's blocks put back together, in the entries.
 * A pass keeps copies of the filter groups of the segments that hold rows
 * of its batch's blocks only (each group up to 1,016 segments' filters: a
 * third of data set A's index when one group holds them all), and every
 * pending group's; a table of another access method than heap is read
 * whole for each batch.
 * The first problem found is raised as an ERROR (ERRCODE_INDEX_CORRUPTED
 * for the index's contents) that names the index and the page or the row;
 * a page whose entry sums disagree is reported last, as the checks of its
 * entries and rows may name the damaged entry first.
 *
 * The caller needs SELECT on the table, checked before any lock is
 * taken.  Index expressions, predicates and hash functions run as the
 * table's owner, security-restricted, with search_path = pg_catalog,
 * pg_temp, as in amcheck.
 *
 * A partitioned index has no pages of its own: it is refused with a hint
 * that verifies its partitions' indexes.  An index not ready for inserts
 * is refused; one that is ready but not valid (a CREATE INDEX
 * CONCURRENTLY that failed late) gets its pages checked only, with a
 * NOTICE.  An UNLOGGED index has no data during recovery: a NOTICE says so.
 *
 * Glue frames hold plain data only (support/pg.h); all memory is palloc'd in one
 * context, deleted at the end (or by the error's cleanup).
 */
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

PG_FUNCTION_INFO_V1(bloomidx_verify);
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


/* Copies block blkno into vs->page under a share lock. */
static void
copy_page(VerifyState *vs, BlockNumber blkno, BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(vs->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(vs->page.data, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);
}

/*
 * Block 0: a sound metapage, for as many columns as the index has, whose
 * insert hint is inside the file; its options are the ones the session
 * makes signatures with (bloomidx_init_state, from the relcache).
 */
static void
check_metapage(VerifyState *vs)
{
	Relation	index = vs->index;

	if (RelationGetNumberOfBlocks(index) == 0)
		bloomidx_report_not_built(index);
	copy_page(vs, bloomidx::kMetaBlock, NULL);

	const uint8 *page = (const uint8 *) vs->page.data;
	PageProblem problem = bloomidx::check_meta_page(page);

	if (problem != PageProblem::None)
		bloomidx_report_meta_problem(index, problem, bloomidx::meta_data(page)->version);
	vs->meta = *bloomidx::meta_data(page);
	if (vs->meta.ncolumns != RelationGetNumberOfAttributes(index))
		bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
					psprintf("The metapage is for %u columns, the index has %d.",
							 vs->meta.ncolumns, RelationGetNumberOfAttributes(index)));
	/*
	 * Each free extent clear of the segments and of the other extents (a
	 * seal would overwrite them), and of the directory pages.
	 */
	MemoryContext old = MemoryContextSwitchTo(vs->cxt);
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	MemoryContextSwitchTo(old);
	bloomidx_read_directory(index, &nblocks, dir);
	for (uint32 i = 0; i < dir->free.count; i++)
	{
		bool		clear = bloomidx::free_extent_ok(dir->free, i, vs->meta.signature_bits, nblocks,
													 dir->entries, dir->header.nsegments);

		for (uint32 p = 0; clear && p < dir->pages.count; p++)
			clear = !bloomidx::free_list_overlaps(dir->free, dir->pages.blocks[p], 1);
		if (!clear)
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
						psprintf("Extent %u of the metapage's free list overlaps pages in use.", i));
	}
	bloomidx_directory_copy_free(dir);

	vs->geometry = bloomidx::meta_row_geometry(vs->meta);
	vs->min_bits = 0;
	vs->min_bits_column = 0;
	for (int i = 0; i < vs->meta.ncolumns; i++)
		if (vs->meta.column_bits[i] > vs->min_bits)
		{
			vs->min_bits = vs->meta.column_bits[i];
			vs->min_bits_column = i + 1;
		}

	bloomidx_init_state(&vs->state, index);
	const MetaPageData *cached = &vs->state.meta;

	if (cached->signature_bits != vs->meta.signature_bits ||
		cached->signature_bytes != vs->meta.signature_bytes ||
		cached->ncolumns != vs->meta.ncolumns ||
		memcmp(cached->column_bits, vs->meta.column_bits, sizeof(vs->meta.column_bits)) != 0)
		bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
					"The metapage's options differ from those this session read from it before.");
}

/* Room for n more entries. */
static void
reserve_entries_for(VerifyState *vs, Size n)
{
	Size		need = vs->nentries + n;

	if (need <= vs->max_entries)
		return;
	if (need > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" has too many entries to verify",
						RelationGetRelationName(vs->index))));

	/*
	 * Past the budget by a pending page's entries at most (reserve_entries:
	 * add_entry keeps no more than the budget); a segment's rows are asked
	 * for only where they fit it (check_segment).
	 */
	Size		room = Min(Max(need, Min(Max(vs->max_entries * 2, (Size) 1024),
									 vs->entry_budget + vs->geometry.capacity)),
						   (Size) PG_UINT32_MAX);
	Size		key_bytes = room * sizeof(EntryKey);
	Size		sig_bytes = room * vs->geometry.signature_bytes;

	if (vs->keys == NULL)
	{
		vs->keys = (EntryKey *) MemoryContextAllocHuge(vs->cxt, key_bytes);
		vs->signatures = (uint8 *) MemoryContextAllocHuge(vs->cxt, sig_bytes);
		if (vs->geometry.keys > 0)
			vs->key_digests = (uint64 *) MemoryContextAllocHuge(vs->cxt, room * sizeof(uint64));
	}
	else
	{
		vs->keys = (EntryKey *) repalloc_huge(vs->keys, key_bytes);
		vs->signatures = (uint8 *) repalloc_huge(vs->signatures, sig_bytes);
		if (vs->key_digests)
			vs->key_digests = (uint64 *) repalloc_huge(vs->key_digests, room * sizeof(uint64));
	}
	vs->max_entries = room;
}

/* Room for one more page of entries. */
static void
reserve_entries(VerifyState *vs)
{
	reserve_entries_for(vs, vs->geometry.capacity);
}

/*
 * A pending entry's filter keys (g.keys of them, as stored), as compared
 * with the keys its row's values give: a seal builds the segment's filters
 * from them, so a wrong key would hide the row once sealed.
 */
static uint64
key_digest(const uint8 *keys, uint32 nkeys)
{
	return (UINT64CONST(1) << 32) |
		(uint32) bloomidx::hash_bytes(keys, nkeys * bloomidx::kFilterKeySize, bloomidx::kMetaMagic);
}

/* Checks entry i of block blkno's heap TID: a tuple's place, within the table. */
static void
check_entry_tid(VerifyState *vs, BlockNumber blkno, uint32 i, const ItemPointerData *tidp)
{
	BlockNumber heap_block = ItemPointerGetBlockNumberNoCheck(tidp);
	OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(tidp);

	if (offset < FirstOffsetNumber || offset > MaxHeapTuplesPerPage ||
		heap_block == InvalidBlockNumber)
		bloomidx_report_corrupted_page(vs->index, blkno,
					psprintf("Entry %u points to (%u,%u), which is not a valid heap tuple.",
							 i, heap_block, offset));
	if (heap_block >= vs->heap_blocks)
	{
		/* The table may have grown since it was last measured. */
		vs->heap_blocks = RelationGetNumberOfBlocks(vs->heap);
		if (heap_block >= vs->heap_blocks)
			bloomidx_report_corrupted_page(vs->index, blkno,
						psprintf("Entry %u points to heap tuple (%u,%u), past the end of table \"%s\" (%u blocks).",
								 i, heap_block, offset,
								 RelationGetRelationName(vs->heap), vs->heap_blocks));
	}
}

/* Checks that entry i of block blkno (TID checked) sets at least the bits one column sets. */
static void
check_entry_bits(VerifyState *vs, BlockNumber blkno, uint32 i, const ItemPointerData *tidp,
				 uint32 set)
{
	if (set < vs->min_bits)
		bloomidx_report_corrupted_page(vs->index, blkno,
					psprintf("Entry %u (heap tuple (%u,%u)) has %u bits set, fewer than the %u that column %d sets alone.",
							 i, ItemPointerGetBlockNumberNoCheck(tidp),
							 ItemPointerGetOffsetNumberNoCheck(tidp), set, vs->min_bits,
							 vs->min_bits_column));
}

/*
 * Keeps entry i of block blkno (checked), its signature sig, if its heap
 * block is of the batch's and the budget has room (else notes the
 * overflow); digest: its key_digest, 0 for a segment's row.
 */
static void
keep_entry(VerifyState *vs, BlockNumber blkno, uint32 i, const uint8 *sig,
		   const ItemPointerData *tidp, uint64 digest)
{
	uint32		nbytes = vs->geometry.signature_bytes;
	BlockNumber heap_block = ItemPointerGetBlockNumberNoCheck(tidp);

	/* Checked in every pass; kept only in its batch, and while the budget lasts. */
	if (heap_block < vs->rows_lo || heap_block >= vs->rows_hi)
		return;
	vs->entries_in_range++;
	if (vs->nentries >= vs->entry_budget)
	{
		vs->overflow = true;
		return;
	}

	EntryKey   *k = &vs->keys[vs->nentries];

	k->key = tid_key(heap_block, ItemPointerGetOffsetNumberNoCheck(tidp)) | (i & 0xFFFF);
	k->entry = (uint32) vs->nentries;
	k->index_block = blkno;
	if (sig != vs->signatures + vs->nentries * nbytes)
		memcpy(vs->signatures + vs->nentries * nbytes, sig, nbytes);
	if (vs->key_digests)
		vs->key_digests[vs->nentries] = digest;
	vs->nentries++;
}

/*
 * Checks one pending entry (slot i of pending page blkno), its signature
 * sig as stored, and collects it; digest: its key_digest.
 */
static void
add_entry(VerifyState *vs, BlockNumber blkno, uint32 i, const uint8 *sig,
		  const ItemPointerData *tidp, uint64 digest)
{
	uint32		nbits = vs->meta.signature_bits;
	uint32		nbytes = vs->geometry.signature_bytes;
	uint32		set = 0;

	check_entry_tid(vs, blkno, i, tidp);
	for (uint32 b = 0; b < nbytes; b++)
		set += __builtin_popcount(sig[b]);
	for (uint32 pos = nbits; pos < nbytes * 8; pos++)
		if (bloomidx::signature_test_bit(sig, pos))
			bloomidx_report_corrupted_page(vs->index, blkno,
						psprintf("Entry %u (heap tuple (%u,%u)) sets bit %u, past the index's %u bits.",
								 i, ItemPointerGetBlockNumberNoCheck(tidp),
								 ItemPointerGetOffsetNumberNoCheck(tidp), pos, nbits));
	check_entry_bits(vs, blkno, i, tidp, set);
	keep_entry(vs, blkno, i, sig, tidp, digest);
}

/* Checks the entries of the pending page in vs->page and collects them. */
static void
collect_entries(VerifyState *vs, BlockNumber blkno)
{
	const bloomidx::RowPageGeometry *g = &vs->geometry;
	const uint8 *page = (const uint8 *) vs->page.data;
	uint32		count = bloomidx::page_opaque(page)->count;

	for (uint32 i = 0; i < count; i++)
	{
		ItemPointerData tid;

		memcpy(&tid, bloomidx::row_tid(page, *g, i), sizeof(tid));
		add_entry(vs, blkno, i, bloomidx::row_signatures(page) + i * g->signature_bytes, &tid,
				  g->keys > 0 ? key_digest(bloomidx::row_tid(page, *g, i) + bloomidx::kTidSize,
										   g->keys) : 0);
	}
}

/*
 * Copies block blkno into vs->page and checks it with `problem`; a
 * failure is damage, unless the directory changed since its copy of
 * `generation` (a concurrent seal reused the page): then false.
 */
static bool
copy_checked(VerifyState *vs, BlockNumber blkno, BufferAccessStrategy bas, uint32 generation,
			 PageProblem (*check) (const uint8 *page, const void *arg), const void *arg)
{
	copy_page(vs, blkno, bas);
	PageProblem problem = check((const uint8 *) vs->page.data, arg);

	if (problem == PageProblem::None)
		return true;
	if (bloomidx_directory_generation(vs->index) != generation)
		return false;
	bloomidx_report_page_problem(vs->index, blkno, problem);
	return false;				/* not reached */
}

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

static PageProblem
check_header_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_segment_page(page, a->entry->segment_id, a->entry->rows,
										a->entry->first_slice, a->nslices,
										a->entry->slices_per_page,
										RelationGetNumberOfAttributes(a->index_rel),
										a->entry->header_block, a->nblocks);
}

static PageProblem
check_live_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_live_page(page, a->entry->rows, a->entry->segment_id);
}

static PageProblem
check_tids_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_tid_page(page, *a->header, (uint16) a->index);
}

static PageProblem
check_keys_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_key_page(page, a->entry->segment_id, a->entry->rows,
									(uint16) RelationGetNumberOfAttributes(a->index_rel),
									(uint16) a->index);
}

static PageProblem
check_slice_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_slice_page(page, a->entry->rows, (uint16) a->index,
									  a->entry->segment_id);
}

/*
 * A segment's live rows by its live page and by its directory entry, when
 * the copies disagree: VACUUM clears live bits and the entry's count in
 * one record (then moves the generation on once its pass is done, when it
 * lowered an entry on a directory page), so it may have run between the
 * directory copy and the page's.  Both are read again together (the live
 * page, then the metapage: VACUUM's order).  They must agree, unless the
 * segment left the directory meanwhile (false: start again).
 */
static bool
live_counts_agree(VerifyState *vs, const DirectoryCopy *dir, uint32 slot,
				  BlockNumber live_block)
{
	const bloomidx::SegmentEntry *e = &dir->entries[slot];
	uint32		generation = dir->header.generation;
	Buffer		lbuf = ReadBuffer(vs->index, live_block);
	Buffer		meta = ReadBuffer(vs->index, bloomidx::kMetaBlock);
	uint32		page_live = 0;
	int64		entry_live = -1;

	LockBuffer(lbuf, BUFFER_LOCK_SHARE);
	LockBuffer(meta, BUFFER_LOCK_SHARE);
	const uint8 *lpage = (const uint8 *) BufferGetPage(lbuf);
	const uint8 *mpage = (const uint8 *) BufferGetPage(meta);
	bool		live_sound = bloomidx::check_live_page(lpage, e->rows, e->segment_id) ==
		PageProblem::None;
	bool		same_generation = bloomidx::directory_header(mpage)->generation == generation;

	if (live_sound)
		for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
			page_live += (uint32) pg_popcount64(bloomidx::slice_page_words(lpage)[w]);
	/* The same generation: the entry is at the same place (on a page the copy names). */
	uint32		place;
	BlockNumber eblock = bloomidx_directory_entry_block(dir, slot, &place);

	if (same_generation && eblock == bloomidx::kMetaBlock &&
		bloomidx::directory_entries(mpage)[place].segment_id == e->segment_id)
		entry_live = bloomidx::directory_entries(mpage)[place].live_rows;
	else if (same_generation && eblock != bloomidx::kMetaBlock)
	{
		Buffer		dbuf = ReadBuffer(vs->index, eblock);

		LockBuffer(dbuf, BUFFER_LOCK_SHARE);
		const uint8 *dpage = (const uint8 *) BufferGetPage(dbuf);
		uint32		p = bloomidx::directory_page_of(slot);
		const bloomidx::SegmentEntry *de = &bloomidx::directory_page_entries(dpage)[place];

		if (bloomidx::check_directory_page(dpage,
										   (uint16) bloomidx::directory_page_count(dir->header.nsegments, p),
										   (uint16) p) == PageProblem::None &&
			de->segment_id == e->segment_id)
			entry_live = de->live_rows;
		UnlockReleaseBuffer(dbuf);
	}
	UnlockReleaseBuffer(meta);
	UnlockReleaseBuffer(lbuf);

	if (!same_generation)
		return false;
	if (!live_sound || entry_live != (int64) page_live)
		bloomidx_report_corrupted_page(vs->index, live_block,
					psprintf("Segment %u has %u live rows, its directory entry says %lld.",
							 e->segment_id, page_live, (long long) entry_live));
	return true;
}

static PageProblem
check_group_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_filter_group_page(page, a->entry->filter_group,
											 (uint32) RelationGetNumberOfAttributes(a->index_rel),
											 a->entry->filter_block, a->nblocks);
}

static PageProblem
check_filter_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_filter_page(page, *a->group, a->index);
}

/*
 * Checks the region pages of group vg (header copied, for segment entry
 * e's check args) and, if keep, copies them for check_row_filter.  False:
 * replaced meanwhile.
 */
static bool
check_group_region(VerifyState *vs, VerifyGroup *vg, const bloomidx::SegmentEntry *e,
				   BufferAccessStrategy bas, uint32 generation, BlockNumber nblocks, bool keep)
{
	SegmentCheckArg arg = {e, NULL, 0, nblocks, 0, vs->index, &vg->header};

	if (keep)
		vg->region = (uint8 *) MemoryContextAllocHuge(vs->pass_cxt,
													  (Size) Max(vg->header.region_pages, 1) * BLCKSZ);
	for (uint32 p = 0; p < vg->header.region_pages; p++)
	{
		arg.index = p;
		if (!copy_checked(vs, vg->region_blocks[p], bas, generation, check_filter_arg, &arg))
			return false;
		if (keep)
			memcpy(vg->region + (Size) p * BLCKSZ, vs->page.data, BLCKSZ);
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/*
 * Checks the filter group of segment entry e (once per group) and notes
 * the segment's slot in it, for check_row; keeps a copy of its region
 * pages if keep (the segment has rows of the batch's blocks), else only
 * checks them, so that a batch holds the groups of its own rows.  False:
 * replaced meanwhile.
 */
static bool
collect_filter(VerifyState *vs, const bloomidx::SegmentEntry *e, BufferAccessStrategy bas,
			   uint32 generation, BlockNumber nblocks, bool keep)
{
	if (e->filter_block == 0)
		return true;

	uint32		g = vs->ngroups;

	for (uint32 i = vs->ngroups; i-- > 0;)	/* a group's segments come together */
		if (vs->groups[i].block == e->filter_block)
		{
			g = i;
			break;
		}
	if (g == vs->ngroups)
	{
		SegmentCheckArg arg = {e, NULL, 0, nblocks, 0, vs->index, NULL};

		if (!copy_checked(vs, e->filter_block, bas, generation, check_group_arg, &arg))
			return false;
		if (vs->ngroups == vs->max_groups)
		{
			vs->max_groups = Max(16, vs->max_groups * 2);
			vs->groups = vs->groups == NULL
				? (VerifyGroup *) MemoryContextAlloc(vs->pass_cxt, vs->max_groups * sizeof(VerifyGroup))
				: (VerifyGroup *) repalloc(vs->groups, vs->max_groups * sizeof(VerifyGroup));
		}
		VerifyGroup *vg = &vs->groups[g];

		vg->block = e->filter_block;
		memcpy(&vg->header, bloomidx::filter_group_header((const uint8 *) vs->page.data),
			   sizeof(vg->header));
		vg->region = NULL;
		vg->region_blocks = (uint32 *) MemoryContextAlloc(vs->pass_cxt,
														  Max(vg->header.region_pages, 1) * sizeof(uint32));
		for (uint32 p = 0; p < vg->header.region_pages; p++)
			vg->region_blocks[p] = bloomidx::group_region_block((const uint8 *) vs->page.data,
																e->filter_block, p);
		vs->ngroups++;
		if (!check_group_region(vs, vg, e, bas, generation, nblocks, keep))
			return false;
	}
	else if (keep && vs->groups[g].region == NULL &&
			 !check_group_region(vs, &vs->groups[g], e, bas, generation, nblocks, true))
		return false;			/* (checked before, not kept: read again) */

	const VerifyGroup *vg = &vs->groups[g];

	bloomidx::SlotMask slots = bloomidx::group_segment_slots(vg->header, e->segment_id);

	if (e->filter_offset >= vg->header.slots_taken || !slots.has(e->filter_offset))
		bloomidx_report_corrupted_page(vs->index, e->filter_block,
					psprintf("Slot %u of the filter group does not hold segment %u.",
							 e->filter_offset, e->segment_id));
	if (vs->nfilter_refs == vs->max_filter_refs)
	{
		vs->max_filter_refs = Max(64, vs->max_filter_refs * 2);
		vs->filter_refs = vs->filter_refs == NULL
			? (SegmentFilterRef *) MemoryContextAlloc(vs->pass_cxt, vs->max_filter_refs * sizeof(SegmentFilterRef))
			: (SegmentFilterRef *) repalloc(vs->filter_refs, vs->max_filter_refs * sizeof(SegmentFilterRef));
	}
	SegmentFilterRef *ref = &vs->filter_refs[vs->nfilter_refs++];

	ref->header_block = e->header_block;
	ref->group = g;
	ref->slots = slots;
	ref->segment_id = e->segment_id;
	return true;
}

/*
 * Pending groups (storage/pending_filters.cpp, format 17): filter groups
 * whose slots are pending pages, a run of the pending list.  The chain is
 * copied before the list is walked, each header before its region pages.
 * A slot is written only for a page that is full and has a successor, its
 * region blocks before the header names it, and neither the page's rows
 * nor its successor change until a publish drops the groups (a new
 * generation: a seal, VACUUM).  So within one generation the walk that
 * follows meets every slot's page, full, with the successor it had and
 * every row the slot's filters were made from, and the region pages
 * copied hold the blocks of every slot their header had taken.  What
 * disagrees is damage, unless the generation moved on meanwhile (then the
 * pass starts again).  Like the rest of verify, this takes no seal lock:
 * the slots and groups inserts add after the copy are left out, as a scan
 * that copied the chain earlier leaves them out.
 */

/* Reports damage at blkno, unless the directory changed since the copy of `generation`: false, start again. */
static bool
pending_damage(VerifyState *vs, uint32 generation, BlockNumber blkno, const char *detail)
{
	if (bloomidx_directory_generation(vs->index) != generation)
		return false;
	bloomidx_report_corrupted_page(vs->index, blkno, detail);
	return false;				/* not reached */
}

/* The order of two blocks, for qsort's comparators. */
static inline int
block_order(BlockNumber x, BlockNumber y)
{
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Slot refs in pending page order, to look them up. */
static int
compare_pending_slots(const void *a, const void *b)
{
	return block_order(((const PendingSlotRef *) a)->page, ((const PendingSlotRef *) b)->page);
}

/* The copies of a pass that starts again, freed. */
static void
free_pending_groups(VerifyState *vs)
{
	for (uint32 g = 0; g < vs->npending_groups; g++)
	{
		pfree(vs->pending_groups[g].region);
		pfree(vs->pending_groups[g].region_blocks);
	}
	if (vs->pending_groups != NULL)
		pfree(vs->pending_groups);
	if (vs->pending_slots != NULL)
		pfree(vs->pending_slots);
	vs->pending_groups = NULL;
	vs->pending_slots = NULL;
	vs->npending_groups = 0;
	vs->npending_slots = 0;
}

/*
 * Copies and checks the chain of pending groups of the directory copy:
 * every header as a scan checks it (check_pending_group_page), the ids
 * growing along the chain and none a group of segments', no cycle, no
 * page of theirs on the free list, every region page (check_filter_page);
 * and notes each slot's pending page, for the walk.  False: start again.
 */
static bool
collect_pending_groups(VerifyState *vs, const DirectoryCopy *dir, BufferAccessStrategy bas)
{
	uint32		generation = dir->header.generation;
	BlockNumber blkno = dir->pending_filters.first_group;
	uint32		id = dir->pending_filters.first_group_id;
	uint32		prev_id = 0;
	uint32		max_groups = 0;
	uint32		max_slots = 0;

	free_pending_groups(vs);
	if (blkno != bloomidx::kMetaBlock && vs->geometry.keys == 0)
		return pending_damage(vs, generation, bloomidx::kMetaBlock,
							  "The metapage names pending groups, but the index's pending rows keep no filter keys to make them from.");

	for (BlockNumber walked = 0; blkno != bloomidx::kMetaBlock; walked++)
	{
		CHECK_FOR_INTERRUPTS();
		if (walked >= vs->index_blocks)
			vs->index_blocks = RelationGetNumberOfBlocks(vs->index);
		if (walked >= vs->index_blocks)
			return pending_damage(vs, generation, blkno,
								  psprintf("The chain of pending groups has more groups than the index has pages (%u): it has a cycle.",
										   vs->index_blocks));

		PageProblem problem = bloomidx_pending_group_copy(vs->index, blkno, id, &vs->index_blocks,
														  bas, vs->page.data);

		if (problem != PageProblem::None)
		{
			if (bloomidx_directory_generation(vs->index) != generation)
				return false;
			bloomidx_report_page_problem(vs->index, blkno, problem);
		}
		vs->index_blocks = Max(vs->index_blocks, RelationGetNumberOfBlocks(vs->index));
		if (id <= prev_id)
			return pending_damage(vs, generation, blkno,
								  psprintf("Pending group %u follows pending group %u in their chain: each group's id is above the one's before it.",
										   id, prev_id));
		for (uint32 i = 0; i < dir->header.nsegments; i++)
			if (dir->entries[i].filter_block != 0 && dir->entries[i].filter_group == id)
				return pending_damage(vs, generation, blkno,
									  psprintf("Pending group %u has the id of segment %u's filter group.",
											   id, dir->entries[i].segment_id));

		if (vs->npending_groups == max_groups)
		{
			max_groups = Max(8, 2 * max_groups);
			vs->pending_groups = vs->pending_groups == NULL
				? (VerifyGroup *) MemoryContextAlloc(vs->cxt, max_groups * sizeof(VerifyGroup))
				: (VerifyGroup *) repalloc(vs->pending_groups, max_groups * sizeof(VerifyGroup));
		}

		uint32		g = vs->npending_groups;
		VerifyGroup *vg = &vs->pending_groups[g];
		const uint8 *hp = (const uint8 *) vs->page.data;

		vg->block = blkno;
		memcpy(&vg->header, bloomidx::filter_group_header(hp), sizeof(vg->header));
		vg->links = bloomidx::pending_group_links(hp);
		vg->region = (uint8 *) MemoryContextAllocHuge(vs->cxt,
													  (Size) Max(vg->header.region_pages, 1) * BLCKSZ);
		vg->region_blocks = (uint32 *) MemoryContextAlloc(vs->cxt,
														  Max(vg->header.region_pages, 1) * sizeof(uint32));
		for (uint32 p = 0; p < vg->header.region_pages; p++)
			vg->region_blocks[p] = bloomidx::group_region_block(hp, blkno, p);
		vs->npending_groups++;

		/* A page of theirs on the free list: a seal would write a segment over it. */
		for (uint32 p = 0; p <= vg->header.region_pages; p++)
		{
			BlockNumber b = p == 0 ? blkno : vg->region_blocks[p - 1];

			if (bloomidx::free_list_overlaps(dir->free, b, 1))
				return pending_damage(vs, generation, bloomidx::kMetaBlock,
									  psprintf("The metapage's free list includes page %u of pending group %u.",
											   b, id));
		}

		/* The region pages, after the header: every slot it names is written there. */
		SegmentCheckArg arg = {NULL, NULL, 0, vs->index_blocks, 0, vs->index, &vg->header};

		for (uint32 p = 0; p < vg->header.region_pages; p++)
		{
			arg.index = p;
			if (!copy_checked(vs, vg->region_blocks[p], bas, generation, check_filter_arg, &arg))
				return false;
			memcpy(vg->region + (Size) p * BLCKSZ, vs->page.data, BLCKSZ);
			CHECK_FOR_INTERRUPTS();
		}

		for (uint32 slot = 0; slot < vg->header.slots_taken; slot++)
		{
			if (vs->npending_slots == max_slots)
			{
				max_slots = Max(128, 2 * max_slots);
				vs->pending_slots = vs->pending_slots == NULL
					? (PendingSlotRef *) MemoryContextAlloc(vs->cxt, max_slots * sizeof(PendingSlotRef))
					: (PendingSlotRef *) repalloc(vs->pending_slots, max_slots * sizeof(PendingSlotRef));
			}
			PendingSlotRef *ref = &vs->pending_slots[vs->npending_slots];

			ref->page = vg->header.slot_segment[slot];
			ref->group = g;
			ref->slot = slot;
			ref->run = vs->npending_slots;
			ref->next = InvalidBlockNumber;
			vs->npending_slots++;
		}
		prev_id = id;
		blkno = vg->links.next_group;
		id = vg->links.next_group_id;
	}

	/* Each pending page in one slot at most. */
	if (vs->npending_slots > 1)
		pg_qsort(vs->pending_slots, vs->npending_slots, sizeof(PendingSlotRef),
				 compare_pending_slots);
	for (uint32 i = 1; i < vs->npending_slots; i++)
	{
		const PendingSlotRef *a = &vs->pending_slots[i - 1];
		const PendingSlotRef *b = &vs->pending_slots[i];

		if (a->page == b->page)
			return pending_damage(vs, generation, vs->pending_groups[b->group].block,
								  psprintf("Pending page %u has two slots: slot %u of pending group %u and slot %u of pending group %u.",
										   a->page, a->slot, vs->pending_groups[a->group].header.group_id,
										   b->slot, vs->pending_groups[b->group].header.group_id));
	}
	return true;
}

/*
 * The pending page in vs->page (block blkno, checked), as the walk meets
 * it: if it has a slot, it is full, and every row's filter key of each
 * column is in that slot's filter of the column (else a scan that reads
 * the group would skip the row); its successor noted for
 * check_pending_run.  False: start again.
 */
static bool
check_pending_slot_page(VerifyState *vs, BlockNumber blkno, uint32 generation)
{
	PendingSlotRef probe;

	probe.page = blkno;

	PendingSlotRef *ref = (PendingSlotRef *)
		bsearch(&probe, vs->pending_slots, vs->npending_slots, sizeof(PendingSlotRef),
				compare_pending_slots);

	if (ref == NULL)
		return true;			/* before or after the run */

	const uint8 *raw = (const uint8 *) vs->page.data;
	const bloomidx::RowPageGeometry *g = &vs->geometry;
	const VerifyGroup *vg = &vs->pending_groups[ref->group];
	const bloomidx::FilterGroupHeader *h = &vg->header;
	uint32		count = bloomidx::page_opaque(raw)->count;

	ref->next = bloomidx::pending_next(raw);
	if (count != g->capacity)
		return pending_damage(vs, generation, blkno,
							  psprintf("Pending page %u has slot %u of pending group %u but %u rows, not the %u of a full page: a page gets its slot once full, and VACUUM drops the groups before it removes rows.",
									   blkno, ref->slot, h->group_id, count, g->capacity));
	for (uint32 i = 0; i < count; i++)
	{
		const uint8 *keys = bloomidx::row_tid(raw, *g, i) + bloomidx::kTidSize;

		for (uint32 c = 0; c < h->ncolumns && c < g->keys; c++)
		{
			uint32		key;
			uint32		page,
						at;

			memcpy(&key, keys + c * bloomidx::kFilterKeySize, sizeof(key));
			if (!bloomidx::group_row_of(*h, c, key, &page, &at))
				continue;		/* no filter for the column: every slot passes */
			if (!bloomidx::group_row_probe(vg->region + (Size) page * BLCKSZ + at,
										   h->columns[c].probes, h->slots_taken,
										   key).has(ref->slot))
				return pending_damage(vs, generation, vg->region_blocks[page],
									  psprintf("Slot %u of pending group %u lacks the filter key of column %u of entry %u of pending page %u: a scan would skip the row.",
											   ref->slot, h->group_id, c + 1, i, blkno));
		}
	}
	return true;
}

/*
 * After the walk: the slots' pages a run of the pending list, as a scan
 * reads them.  Every slot's page met by the walk; each slot's page the
 * successor of the one before it, a group's first slot's the page the
 * group before it names as `after`; each group's `after` the successor of
 * its last slot's page.  False: start again.
 */
static bool
check_pending_run(VerifyState *vs, uint32 generation)
{
	const PendingSlotRef **order = (const PendingSlotRef **)
		MemoryContextAlloc(vs->pass_cxt, Max(vs->npending_slots, 1) * sizeof(PendingSlotRef *));
	uint32		k = 0;
	const PendingSlotRef *prev = NULL;
	BlockNumber prev_after = bloomidx::kMetaBlock;

	for (uint32 i = 0; i < vs->npending_slots; i++)
		order[vs->pending_slots[i].run] = &vs->pending_slots[i];
	for (uint32 g = 0; g < vs->npending_groups; g++)
	{
		const VerifyGroup *vg = &vs->pending_groups[g];
		uint32		id = vg->header.group_id;

		for (uint32 s = 0; s < vg->header.slots_taken; s++)
		{
			const PendingSlotRef *ref = order[k++];

			if (ref->next == InvalidBlockNumber)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Slot %u of pending group %u names page %u, which is not on the pending list.",
											   s, id, ref->page));
			if (prev != NULL && s == 0 && ref->page != prev_after)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Pending group %u starts at page %u, not at page %u, which the group before it names as the page after its slots.",
											   id, ref->page, prev_after));
			if (prev != NULL && s > 0 && ref->page != prev->next)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Slot %u of pending group %u names page %u, but the pending list links slot %u's page %u to page %u.",
											   s, id, ref->page, s - 1, prev->page, prev->next));
			prev = ref;
		}
		if (vg->header.slots_taken > 0 && vg->links.after != prev->next)
			return pending_damage(vs, generation, vg->block,
								  psprintf("Pending group %u names page %u as the page after its slots, but the pending list links its last slot's page %u to page %u.",
										   id, vg->links.after, prev->page, prev->next));
		prev_after = vg->links.after;
	}
	pfree(order);
	return true;
}

/*
 * Checks every page of a segment and collects its live rows, their
 * signatures put back together from the slices.  False: the segment was
 * replaced meanwhile.
 */
static bool
check_segment(VerifyState *vs, const DirectoryCopy *dir, uint32 entry, BufferAccessStrategy bas,
			  BlockNumber nblocks)
{
	const bloomidx::SegmentEntry *e = &dir->entries[entry];
	uint32		generation = dir->header.generation;
	SegmentCheckArg arg = {e, NULL, vs->meta.signature_bits, nblocks, 0, vs->index, NULL};
	/* In the pass's memory: a pass that starts again returns early, without freeing them. */
	bloomidx::SegmentHeader *h = (bloomidx::SegmentHeader *)
		MemoryContextAlloc(vs->pass_cxt, sizeof(bloomidx::SegmentHeader));
	uint64	   *live = (uint64 *) MemoryContextAlloc(vs->pass_cxt, BLCKSZ);
	ItemPointerData *tids = (ItemPointerData *)
		MemoryContextAlloc(vs->pass_cxt, e->rows * sizeof(ItemPointerData));
	uint32	   *slot = (uint32 *) MemoryContextAlloc(vs->pass_cxt, e->rows * sizeof(uint32));
	uint32		nbytes = vs->geometry.signature_bytes;
	uint8	   *row_keys = NULL;	/* a small segment's rows' filter keys */
	bool		ok = false;

	if (!copy_checked(vs, e->header_block, bas, generation, check_header_arg, &arg))
		return false;
	memcpy(h, bloomidx::segment_header((const uint8 *) vs->page.data), sizeof(*h));
	arg.header = h;

	if (!copy_checked(vs, h->live_block, bas, generation, check_live_arg, &arg))
		return false;
	memcpy(live, bloomidx::slice_page_words((const uint8 *) vs->page.data),
		   bloomidx::kSliceWords * sizeof(uint64));
	uint32		nlive = 0;

	for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
		nlive += (uint32) pg_popcount64(live[w]);
	if (nlive != e->live_rows && !live_counts_agree(vs, dir, entry, h->live_block))
		return false;

	/* The TIDs, group by group. */
	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		arg.index = p;
		if (!copy_checked(vs, h->tid_blocks[p], bas, generation, check_tids_arg, &arg))
			goto done;
		for (uint32 g = 0; g < h->ngroups; g++)
		{
			if (h->groups[g].page != p)
				continue;
			bloomidx::HeapTid group[bloomidx::kTidGroupRows];
			uint32		first = g * bloomidx::kTidGroupRows;
			uint32		n = bloomidx::tid_page_group(*h, (const uint8 *) vs->page.data, g, group);

			if (n == 0)
				bloomidx_report_corrupted_page(vs->index, h->tid_blocks[p],
							psprintf("TID group %u of segment %u cannot be decoded.",
									 g, e->segment_id));
			for (uint32 i = 0; i < n; i++)
				ItemPointerSet(&tids[first + i], group[i].block, group[i].offset);
		}
	}

	/* Its filters, copied if some live row is of the batch's blocks (check_row_filter). */
	{
		bool		in_batch = false;

		for (uint32 r = 0; r < e->rows && !in_batch; r++)
			in_batch = (live[r / 64] & (UINT64CONST(1) << (r % 64))) != 0 &&
				ItemPointerGetBlockNumberNoCheck(&tids[r]) >= vs->rows_lo &&
				ItemPointerGetBlockNumberNoCheck(&tids[r]) < vs->rows_hi;
		if (!collect_filter(vs, e, bas, generation, nblocks, in_batch))
			goto done;
	}

	/*
	 * A small segment's rows' filter keys (format 16), which a merge makes
	 * its filters from: checked against its rows' values below, as pending
	 * rows' are (a wrong key would leave a merged filter without a value
	 * its rows hold).
	 */
	if (h->key_pages > 0)
	{
		uint32		nkeys = (uint32) vs->state.ncolumns;
		uint32		per_page = bloomidx::key_rows_per_page(nkeys);
		BlockNumber first = h->live_block + 1 + h->ntid_pages;

		/* Where and how many: check_segment_page checked the header. */
		Assert((uint64) first + h->key_pages == e->header_block &&
			   bloomidx::key_page_count(e->rows, nkeys) == h->key_pages);
		row_keys = (uint8 *) MemoryContextAlloc(vs->pass_cxt, (Size) e->rows * nkeys * sizeof(uint32));
		for (uint32 p = 0; p < h->key_pages; p++)
		{
			arg.index = p;
			if (!copy_checked(vs, first + p, bas, generation, check_keys_arg, &arg))
				goto done;
			memcpy(row_keys + (Size) p * per_page * nkeys * sizeof(uint32),
				   bloomidx::key_page_keys((const uint8 *) vs->page.data),
				   (Size) bloomidx::page_opaque((const uint8 *) vs->page.data)->count *
				   nkeys * sizeof(uint32));
		}
	}

	/*
	 * Every live row's bits counted from the slices (each checked, as a
	 * pending entry is, in every pass), and the signatures of the rows of
	 * the batch's blocks put back together in the arena, where they are
	 * kept: no more memory than the entries kept (a pass they would take
	 * past the budget keeps none, and is made again over fewer blocks).
	 */
	{
		uint64	   *keep = (uint64 *) MemoryContextAllocZero(vs->pass_cxt, BLCKSZ);
		uint16	   *counts = (uint16 *) MemoryContextAllocZero(vs->pass_cxt,
															   e->rows * sizeof(uint16));
		uint32		nkeep = 0;
		uint8	   *base = NULL;

		for (uint32 r = 0; r < e->rows; r++)
			if ((live[r / 64] & (UINT64CONST(1) << (r % 64))) &&
				ItemPointerGetBlockNumberNoCheck(&tids[r]) >= vs->rows_lo &&
				ItemPointerGetBlockNumberNoCheck(&tids[r]) < vs->rows_hi)
			{
				keep[r / 64] |= UINT64CONST(1) << (r % 64);
				slot[r] = nkeep++;
			}
		if (vs->nentries + nkeep > vs->entry_budget)
		{
			vs->overflow = true;
			vs->entries_in_range += nkeep;
			nkeep = 0;
		}
		else if (nkeep > 0)
		{
			reserve_entries_for(vs, nkeep);
			base = vs->signatures + vs->nentries * nbytes;
			memset(base, 0, (Size) nkeep * nbytes);
		}
		for (uint32 j = 0; j < vs->meta.signature_bits; j++)
		{
			bloomidx::SliceSpot spot = bloomidx::slice_spot(j, e->rows, e->slices_per_page);

			CHECK_FOR_INTERRUPTS();
			/* A page of packed slices is read once, at its first. */
			arg.index = spot.first;
			if (spot.first == j &&
				!copy_checked(vs, e->first_slice + spot.page, bas, generation, check_slice_arg, &arg))
				goto done;

			const uint64 *words = bloomidx::slice_page_words((const uint8 *) vs->page.data) + spot.word;

			if (!bloomidx::count_slice_bits(words, live, e->rows, counts))
				bloomidx_report_corrupted_page(vs->index, e->first_slice + spot.page,
							psprintf("Slice %u of segment %u sets a row past its %u rows.",
									 j, e->segment_id, (uint32) e->rows));
			if (nkeep > 0)
				(void) bloomidx::untranspose_slice(words, keep, e->rows, j, slot, base, nbytes);
		}
		for (uint32 r = 0; r < e->rows; r++)
		{
			if (!(live[r / 64] & (UINT64CONST(1) << (r % 64))))
				continue;
			check_entry_tid(vs, e->header_block, r, &tids[r]);
			check_entry_bits(vs, e->header_block, r, &tids[r], counts[r]);
			/* Kept in row order: row r's slot is the next entry's place. */
			if (nkeep > 0 && (keep[r / 64] & (UINT64CONST(1) << (r % 64))))
				keep_entry(vs, e->header_block, r, base + (Size) slot[r] * nbytes, &tids[r],
						   row_keys == NULL ? 0 :
						   key_digest(row_keys + (Size) r * vs->state.ncolumns * sizeof(uint32),
									  (uint32) vs->state.ncolumns));
		}
		pfree(keep);
		pfree(counts);
	}
	ok = true;
done:
	if (row_keys != NULL)
		pfree(row_keys);
	pfree(h);
	pfree(live);
	pfree(tids);
	pfree(slot);
	return ok;
}

/* Records the first page whose entry sums disagree, to report last. */
static void
note_sums(VerifyState *vs, BlockNumber blkno)
{
	const uint8 *raw = (const uint8 *) vs->page.data;
	PageProblem sums = bloomidx::check_row_page_signatures(raw, vs->geometry);

	if (sums == PageProblem::None)
		sums = bloomidx::check_row_page_tids(raw, vs->geometry);
	if (sums != PageProblem::None && vs->sums_problem == PageProblem::None)
	{
		vs->sums_problem = sums;
		vs->sums_problem_block = blkno;
	}
}

/*
 * One pass over the pages a scan reads: the segments and the pending
 * pages of one copy of the directory.  False when a page was reused by a
 * concurrent seal meanwhile: the caller starts again.
 */
static bool
check_pages_pass(VerifyState *vs, BufferAccessStrategy bas)
{
	MemoryContext old = MemoryContextSwitchTo(vs->cxt);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	MemoryContextSwitchTo(old);
	bool		ok = true;

	vs->index_blocks = RelationGetNumberOfBlocks(vs->index);
	bloomidx_read_directory(vs->index, &vs->index_blocks, dir);

	uint32		generation = dir->header.generation;

	for (uint32 i = 0; ok && i < dir->header.nsegments; i++)
		ok = check_segment(vs, dir, i, bas, vs->index_blocks);

	/* The pending groups, copied before the walk (collect_pending_groups says why). */
	if (ok)
		ok = collect_pending_groups(vs, dir, bas);

	PendingWalk walk;

	bloomidx_pending_walk_init(&walk, vs->index, dir->header.pending_head, vs->index_blocks);
	while (ok && bloomidx_pending_walk_more(&walk))
	{
		BlockNumber blkno = walk.blkno;

		CHECK_FOR_INTERRUPTS();
		reserve_entries(vs);
		copy_page(vs, blkno, bas);

		const uint8 *raw = (const uint8 *) vs->page.data;

		if (PageIsNew((Page) raw) || !bloomidx::is_pending_kind(bloomidx::page_opaque(raw)->flags) ||
			bloomidx::page_stamp(raw) > generation)
		{
			if (bloomidx_directory_generation(vs->index) != generation)
			{
				ok = false;
				break;
			}
			if (PageIsNew((Page) raw))
				bloomidx_report_corrupted_page(vs->index, blkno,
											   "The pending list leads to a new page.");
		}
		bloomidx_check_data_page(vs->index, blkno, (Page) raw, &vs->geometry,
								 bloomidx::EntryChecks::None);
		if (bloomidx::page_stamp(raw) > generation)
			bloomidx_report_corrupted_page(vs->index, blkno,
										   "A pending page is stamped with a later directory generation than the directory's.");
		/* A seal would write a segment over it. */
		if (bloomidx::free_list_overlaps(dir->free, blkno, 1))
			bloomidx_report_corrupted_page(vs->index, bloomidx::kMetaBlock,
										   psprintf("The metapage's free list includes pending page %u.",
													blkno));
		collect_entries(vs, blkno);
		if (vs->npending_slots > 0 && !check_pending_slot_page(vs, blkno, generation))
		{
			ok = false;
			break;
		}
		/* Reported after the row-by-row checks, which may name the damaged entry instead. */
		note_sums(vs, blkno);
		vs->pending_pages++;
		bloomidx_pending_walk_follow(&walk, bloomidx::pending_next(raw));
	}
	vs->index_blocks = walk.nblocks;
	if (ok)
		ok = bloomidx_check_pending_count(vs->index, dir, vs->pending_pages);
	if (ok && vs->npending_slots > 0)
		ok = check_pending_run(vs, generation);
	vs->segments = dir->header.nsegments;
	bloomidx_directory_copy_free(dir);
	return ok;
}

/* What a pass collects, let go of before the next. */
static void
reset_pass(VerifyState *vs)
{
	vs->nentries = 0;
	vs->overflow = false;
	vs->entries_in_range = 0;
	vs->pending_pages = 0;
	vs->sums_problem = PageProblem::None;
	MemoryContextReset(vs->pass_cxt);
	vs->groups = NULL;
	vs->ngroups = 0;
	vs->max_groups = 0;
	vs->filter_refs = NULL;
	vs->nfilter_refs = 0;
	vs->max_filter_refs = 0;
	free_pending_groups(vs);
}

/*
 * How many heap blocks would fill nine tenths of the entry budget at the
 * density of the last pass's batch (nine tenths: some blocks hold more
 * rows than others).
 */
static double
blocks_that_fit(const VerifyState *vs)
{
	return (double) (vs->rows_hi - vs->rows_lo) * 0.9 *
		(double) vs->entry_budget / (double) Max(vs->entries_in_range, 1);
}

/*
 * Checks every page, keeping the entries of heap blocks [rows_lo,
 * rows_hi): passes until one saw the directory unchanged throughout and
 * its entries fit the budget.  A pass whose batch held more entries than
 * the budget is made again over fewer blocks, as many as its count says
 * would fit (blocks_that_fit), half of them at most.
 */
static void
check_batch(VerifyState *vs)
{
	BufferAccessStrategy bas = GetAccessStrategy(BAS_BULKREAD);

	for (;;)
	{
		reset_pass(vs);
		vs->passes++;
		vs->heap_blocks = RelationGetNumberOfBlocks(vs->heap);
		if (!check_pages_pass(vs, bas))
			continue;
		if (!vs->overflow)
			break;

		BlockNumber blocks = vs->rows_hi - vs->rows_lo;

		/* A heap page has fewer line pointers than the budget has entries (ENTRIES_AT_LEAST). */
		if (blocks <= 1)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has more than %zu entries for heap block %u of table \"%s\"",
							RelationGetRelationName(vs->index), vs->entry_budget, vs->rows_lo,
							RelationGetRelationName(vs->heap)),
					 errhint("Please REINDEX it.")));
		vs->rows_hi = vs->rows_lo +
			(BlockNumber) Max(1.0, Min(blocks_that_fit(vs), (double) blocks / 2));
	}
	FreeAccessStrategy(bas);
}

static int
compare_keys(const void *a, const void *b)
{
	uint64		ka = ((const EntryKey *) a)->key;
	uint64		kb = ((const EntryKey *) b)->key;

	return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/* The first entry whose TID is not below tid's, or nentries. */
static Size
lower_bound(const VerifyState *vs, uint64 tid)
{
	Size		lo = 0;
	Size		hi = vs->nentries;

	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (vs->keys[mid].key < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Filter refs in header block order, to look them up. */
static int
compare_filter_refs(const void *a, const void *b)
{
	return block_order(((const SegmentFilterRef *) a)->header_block,
					   ((const SegmentFilterRef *) b)->header_block);
}

/*
 * The row's entry k (found, its bits right) is in a segment: its filter
 * must hold every column's value, or a scan would skip the row.
 */
static void
check_row_filter(VerifyState *vs, const EntryKey *k, BlockNumber heap_block, OffsetNumber offset)
{
	SegmentFilterRef probe;

	probe.header_block = k->index_block;
	const SegmentFilterRef *ref = (const SegmentFilterRef *)
		bsearch(&probe, vs->filter_refs, vs->nfilter_refs, sizeof(SegmentFilterRef),
				compare_filter_refs);

	if (ref == NULL)
		return;					/* a pending page's entry, or a segment without filters */

	const VerifyGroup *vg = &vs->groups[ref->group];
	bloomidx::SlotMask slots = ref->slots;

	/* Kept for every segment with a row of the batch (collect_filter): this one has k. */
	if (vg->region == NULL)
		elog(ERROR, "bloomidx_verify: the filter group at block %u was not kept for its batch",
			 vg->block);

	/*
	 * A scan lets the segment through when one of its slots holds every
	 * key: so must one slot hold every column's value here.
	 */
	for (int c = 0; c < vs->state.ncolumns; c++)
	{
		uint32		page,
					at;

		if (!bloomidx::group_row_of(vg->header, (uint32) c, vs->row_keys[c], &page, &at))
			continue;
		slots = bloomidx::group_row_probe_within(vg->region + (Size) page * BLCKSZ + at,
												 vg->header.columns[c].probes, slots,
												 vs->row_keys[c]);
		if (!slots.any())
			bloomidx_report_corrupted_page(vs->index, vg->region_blocks[page],
						psprintf("The filter of segment %u lacks the value of column %d of heap tuple (%u,%u).",
								 ref->segment_id, c + 1, heap_block, offset));
	}
}

/*
 * The row's entry k (found, its bits right), if on a pending page, must
 * keep the filter keys the row's values give.
 */
static void
check_row_keys(VerifyState *vs, const EntryKey *k, BlockNumber heap_block, OffsetNumber offset)
{
	if (vs->key_digests == NULL || vs->key_digests[k->entry] == 0)
		return;
	if (vs->key_digests[k->entry] !=
		key_digest((const uint8 *) vs->row_keys, (uint32) vs->state.ncolumns))
		bloomidx_report_corrupted_page(vs->index, k->index_block,
					psprintf("Entry %u (heap tuple (%u,%u)) keeps filter keys that its tuple's values do not give.",
							 (uint32) (k->key & 0xFFFF), heap_block, offset));
}

/*
 * table_index_build_scan's callback: tid is a row the snapshot sees (the
 * root of its HOT chain), values are what the index is built from.
 */
static void
check_row(Relation index, ItemPointer tid, Datum *values, bool *isnull,
		  bool tupleIsAlive, void *arg)
{
	VerifyState *vs = (VerifyState *) arg;
	uint32		nbytes = vs->geometry.signature_bytes;
	BlockNumber tid_block = ItemPointerGetBlockNumber(tid);

	/* Another batch's row. */
	if (tid_block < vs->rows_lo || tid_block >= vs->rows_hi)
		return;

	MemoryContext old = MemoryContextSwitchTo(vs->tuple_cxt);

	memset(vs->expected, 0, nbytes);
	bloomidx_form_signature(&vs->state, values, isnull, vs->expected, vs->row_keys);
	MemoryContextSwitchTo(old);
	MemoryContextReset(vs->tuple_cxt);
	vs->heap_rows++;

	BlockNumber heap_block = ItemPointerGetBlockNumber(tid);
	OffsetNumber offset = ItemPointerGetOffsetNumber(tid);
	uint64		key = tid_key(heap_block, offset);
	Size		first = lower_bound(vs, key);
	Size		i;

	/* Normally one entry per TID; any one that holds the bits will do. */
	for (i = first; i < vs->nentries && (vs->keys[i].key & ~(uint64) 0xFFFF) == key; i++)
	{
		const uint8 *sig = vs->signatures + (Size) vs->keys[i].entry * nbytes;
		uint32		b;

		for (b = 0; b < nbytes; b++)
			if ((sig[b] & vs->expected[b]) != vs->expected[b])
				break;
		if (b == nbytes)
		{
			check_row_keys(vs, &vs->keys[i], heap_block, offset);
			check_row_filter(vs, &vs->keys[i], heap_block, offset);
			return;
		}
	}

	if (i == first)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("heap tuple (%u,%u) of table \"%s\" has no entry in index \"%s\"",
						heap_block, offset, RelationGetRelationName(vs->heap),
						RelationGetRelationName(index)),
				 errhint("Please REINDEX it.")));

	const EntryKey *k = &vs->keys[first];
	const uint8 *sig = vs->signatures + (Size) k->entry * nbytes;
	uint32		missing = 0;
	uint32		wanted = 0;

	for (uint32 b = 0; b < nbytes; b++)
	{
		wanted += __builtin_popcount(vs->expected[b]);
		missing += __builtin_popcount(vs->expected[b] & ~sig[b]);
	}
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("the entry of heap tuple (%u,%u) of table \"%s\" in index \"%s\" does not match the tuple",
					heap_block, offset, RelationGetRelationName(vs->heap),
					RelationGetRelationName(index)),
			 errdetail("Entry %u of block %u lacks %u of the %u bits the tuple's values set.",
					   (uint32) (k->key & 0xFFFF), k->index_block, missing, wanted),
			 errhint("Please REINDEX it.")));
}

/*
 * Every row the snapshot sees in the batch's heap blocks must have its
 * entry: a scan of the table as CREATE INDEX CONCURRENTLY's first one does
 * it (an MVCC snapshot, index expressions and the partial index's
 * predicate evaluated for us).
 */
static void
check_batch_rows(VerifyState *vs, Snapshot snapshot)
{
	pg_qsort(vs->keys, vs->nentries, sizeof(EntryKey), compare_keys);
	if (vs->nfilter_refs > 0)
		pg_qsort(vs->filter_refs, vs->nfilter_refs, sizeof(SegmentFilterRef), compare_filter_refs);

	IndexInfo  *indexInfo = vs->indexInfo;

	indexInfo->ii_Concurrent = true;	/* the MVCC snapshot's rows only */
	indexInfo->ii_Unique = false;
	indexInfo->ii_ExclusionOps = NULL;
	indexInfo->ii_ExclusionProcs = NULL;
	indexInfo->ii_ExclusionStrats = NULL;

	/* No synchronized scan: the first row reported is the first of the batch's blocks. */
	TableScanDesc scan = table_beginscan_strat(vs->heap, snapshot, 0, NULL, true, false);

	/*
	 * Only the batch's blocks (check_row skips the others whatever the
	 * table's access method): a heap scan is told where to start and stop
	 * (the build scan takes a range only with a snapshot of its own, and a
	 * later one than ours would see rows whose entries came after the
	 * index was read).
	 */
	if (vs->heap->rd_tableam == GetHeapamTableAmRoutine())
		heap_setscanlimits(scan, vs->rows_lo, vs->rows_hi - vs->rows_lo);

	/* It ends the scan. */
	table_index_build_scan(vs->heap, vs->index, indexInfo, true, false,
						   check_row, vs, scan);
}

/* Opens and locks the table, then the index, as a reader; checks rights. */
static void
open_relations(Oid indexoid, Relation *heap_out, Relation *index_out)
{
	bloomidx_check_is_index(indexoid);

	/* Rights first, with no lock taken: a user who may not read the table
	 * must not be able to queue locks on it either. */
	Oid			heapoid = IndexGetRelation(indexoid, true);

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("could not find the table of index \"%s\"", get_rel_name(indexoid))));
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to verify index \"%s\"", get_rel_name(indexoid)),
				 errdetail("Verifying an index reads its table \"%s\", which needs the SELECT privilege on it.",
						   get_rel_name(heapoid))));

	/* The table before the index, as every reader does (no deadlock). */
	Relation	heap = try_table_open(heapoid, AccessShareLock);
	Relation	index = heap ? try_relation_open(indexoid, AccessShareLock) : NULL;

	/* Dropped, or even replaced, while unlocked? */
	if (heap == NULL || index == NULL || IndexGetRelation(indexoid, true) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u was dropped while it was being opened", indexoid)));

	bloomidx_check_index_argument(index, indexoid, "data");

	bloomidx_check_index_ready(index);

	*heap_out = heap;
	*index_out = index;
}

Datum
bloomidx_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = bloomidx_index_argument(fcinfo, "bloomidx_verify");
	Relation	heap;
	Relation	index;

	open_relations(indexoid, &heap, &index);

	/* During recovery an UNLOGGED index has no data to read. */
	if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" is unlogged and the server is in recovery: it has nothing to verify",
						RelationGetRelationName(index))));
		index_close(index, AccessShareLock);
		table_close(heap, AccessShareLock);
		PG_RETURN_VOID();
	}

	bool		all_rows = index->rd_index->indisvalid;

	if (!all_rows)
		ereport(NOTICE,
				(errmsg("index \"%s\" is not valid: only its pages are verified, not that it has every row",
						RelationGetRelationName(index))));

	/*
	 * Index expressions and predicates, and the opclasses' hash functions,
	 * run as the table's owner, restricted, with a safe search_path, as
	 * they do in amcheck (a table owner's functions must not run with the
	 * caller's rights, and a hostile search_path must not change them).
	 */
	Oid			save_userid;
	int			save_sec_context;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	int			save_nestlevel = NewGUCNestLevel();

	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);

	/*
	 * The snapshot before the first index page is read: every row it sees
	 * was committed, so had its entry inserted, before then.
	 */
	Snapshot	snapshot = InvalidSnapshot;

	if (all_rows)
	{
		snapshot = RegisterSnapshot(GetTransactionSnapshot());

		/*
		 * An older transaction snapshot (REPEATABLE READ) may see rows
		 * that a broken HOT chain keeps out of the index (indcheckxmin).
		 */
		if (IsolationUsesXactSnapshot() && index->rd_index->indcheckxmin &&
			!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
								   snapshot->xmin))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("index \"%s\" cannot be verified with this transaction's snapshot",
							RelationGetRelationName(index)),
					 errhint("Verify it in a READ COMMITTED transaction.")));
	}

	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx verify",
											  ALLOCSET_DEFAULT_SIZES);
	VerifyState *vs = (VerifyState *) MemoryContextAllocZero(cxt, sizeof(VerifyState));

	vs->index = index;
	vs->heap = heap;
	vs->cxt = cxt;
	vs->tuple_cxt = AllocSetContextCreate(cxt, "bloomidx verify row", ALLOCSET_DEFAULT_SIZES);

	vs->pass_cxt = AllocSetContextCreate(cxt, "bloomidx verify pass", ALLOCSET_DEFAULT_SIZES);

	check_metapage(vs);

	/*
	 * The entries kept (a TID key, a signature, a pending row's keys'
	 * digest: 16 bytes and the signature's, 8 more where pending rows keep
	 * filter keys) within maintenance_work_mem, as amcheck's heapallindexed
	 * sizes its filter, and room for ENTRIES_AT_LEAST entries whatever the
	 * setting.  A larger index is checked in batches of heap blocks, every
	 * page again in each (check_batch).
	 */
	Size		entry_bytes = sizeof(EntryKey) + vs->geometry.signature_bytes +
		(vs->geometry.keys > 0 ? sizeof(uint64) : 0);
	Size		entries = (Size) maintenance_work_mem * 1024 / entry_bytes;

	vs->entry_budget = Max(entries, ENTRIES_AT_LEAST);

	/*
	 * Every row the snapshot sees lies before the table's length now (a
	 * rewrite would need a stronger lock than ours): the batches end there,
	 * and entries past it, of rows inserted since, are checked but not kept.
	 * An index that is not valid keeps none.
	 */
	BlockNumber rows_end = all_rows ? RelationGetNumberOfBlocks(heap) : 0;

	vs->rows_lo = 0;
	vs->rows_hi = rows_end;
	vs->indexInfo = all_rows ? BuildIndexInfo(index) : NULL;
	/* Every pass checks every page: the first's page whose sums disagree, reported last. */
	PageProblem sums_problem = PageProblem::None;
	BlockNumber sums_problem_block = InvalidBlockNumber;

	for (;;)
	{
		check_batch(vs);
		vs->batches++;
		if (sums_problem == PageProblem::None)
		{
			sums_problem = vs->sums_problem;
			sums_problem_block = vs->sums_problem_block;
		}
		if (!all_rows || rows_end == 0)
			break;
		check_batch_rows(vs, snapshot);

		if (vs->rows_hi >= rows_end)
			break;

		/*
		 * The next blocks: as many as fit at this batch's density, so that a
		 * dense stretch of the table does not narrow every batch after it.
		 */
		double		width = blocks_that_fit(vs);

		vs->rows_lo = vs->rows_hi;
		vs->rows_hi = (BlockNumber) Min((double) rows_end, (double) vs->rows_lo + Max(width, 1.0));
	}
	if (all_rows)
		UnregisterSnapshot(snapshot);
	if (sums_problem != PageProblem::None)
		bloomidx_report_page_problem(index, sums_problem_block, sums_problem);

	ereport(DEBUG1,
			(errmsg_internal("bloomidx_verify: index \"%s\": %u blocks, %u segments, %u pending pages (%u in %u pending groups), %zu entries in the last batch, room for %zu; table \"%s\": " INT64_FORMAT " rows checked in %u batches, %u passes over the index",
							 RelationGetRelationName(index), vs->index_blocks, vs->segments,
							 vs->pending_pages, vs->npending_slots, vs->npending_groups,
							 vs->nentries, vs->max_entries, RelationGetRelationName(heap), vs->heap_rows,
							 vs->batches, vs->passes)));

	MemoryContextDelete(cxt);
	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	/*
	 * Locks released now, as amcheck does, so that one query can verify
	 * many indexes: nothing here sent an invalidation.
	 */
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_VOID();
}
