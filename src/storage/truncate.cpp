/*
 * truncate.cpp: VACUUM gives the free pages that end the index back to the
 * file system (storage/README.md, "Writing", VACUUM).
 *
 * Merges leave the blocks of the segments they removed free, and seals and
 * merges take free blocks lowest first (core: free_list_take), moving the
 * segments that end the index to free blocks before them (merge.cpp), so
 * that after deletions the free pages gather at the end.  As lazy VACUUM
 * truncates a table, this truncates an index whose last pages are free:
 * free pages (kPageFree), pages on the metapage's free list (kPageListed)
 * and new pages, at least TRUNCATE_MIN_PAGES of them and a sixteenth of
 * the index.  No scan or insert may use the index meanwhile (a scan's
 * directory copy may name a page that is free now; an insert may be
 * taking one from the free space map), so it takes the index's
 * AccessExclusiveLock, if it can at once (as heap truncation, which
 * retries for a while: here the next VACUUM tries again), reads the free
 * tail again under it, stopping early if someone waits for the lock, takes
 * the tail's blocks off the free list (one published change) and
 * truncates.  Pending pages among the free ones (a parallel build's last
 * pending page, which its participants' rows left at the end; pages inserts
 * linked at the end of the file) are moved to free blocks before them
 * first, under the same locks: else a few pending rows would hold a
 * shrunk index at its old length until a seal took them, which VACUUM
 * does not do in a small index (seal.cpp, bloomidx_vacuum_flush).
 * RelationTruncate logs the truncation; the lock is logged for
 * standbys, whose queries on the index conflict with its replay as with
 * a table's truncation; a standby holds the lock until VACUUM's
 * transaction ends (as it does a table's, there at VACUUM's very end).
 * Not in a parallel VACUUM: the lock's WAL record needs a transaction id,
 * which parallel mode cannot assign, and a VACUUM of a table with two or
 * more indexes over min_parallel_index_scan_size runs its index cleanup in
 * parallel mode, the leader's part too.  Autovacuum (never parallel) and
 * VACUUM (PARALLEL 0) truncate such indexes.
 */
#include "storage/storage.h"

extern "C" {
#include "catalog/storage.h"
}

/* Whether the table's vacuum_truncate lets VACUUM truncate it, and so its index. */
static bool
bloomidx_table_allows_truncation(Relation index)
{
	/* VACUUM holds the table's lock. */
	Relation	heap = relation_open(index->rd_index->indrelid, NoLock);
	bool		allowed = bloomidx_vacuum_truncate_option(heap);

	relation_close(heap, NoLock);
	return allowed;
}

#define TRUNCATE_MIN_PAGES 16
#define TRUNCATE_FRACTION 16
/* Pages read between looks for a session waiting for the lock. */
#define TRUNCATE_CHECK_EVERY 32

typedef enum TailPage
{
	TAIL_FREE,
	TAIL_PENDING,
	TAIL_USED
} TailPage;

/*
 * What block blkno is: free (on the free list, whatever it holds: a
 * removed segment's pages stay as they were until reused; or a free,
 * listed or new page), a pending page, or anything else.
 */
static TailPage
tail_page_kind(Relation index, BlockNumber blkno, const bloomidx::FreeList *list,
			   BufferAccessStrategy strategy)
{
	if (bloomidx::free_list_overlaps(*list, blkno, 1))
		return TAIL_FREE;

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	TailPage	kind = TAIL_USED;

	if (PageIsNew((Page) page) ||
		bloomidx::check_free_page(page) == bloomidx::PageProblem::None ||
		bloomidx::check_listed_page(page) == bloomidx::PageProblem::None)
		kind = TAIL_FREE;
	else if (bloomidx::page_opaque(page)->page_id == bloomidx::kPageId &&
			 bloomidx::page_opaque(page)->flags == bloomidx::kPageData)
		kind = TAIL_PENDING;
	UnlockReleaseBuffer(buffer);
	return kind;
}

/* Pending pages among the free ones that end the index, highest first. */
typedef struct TailPending
{
	BlockNumber *blocks;		/* palloc'd, `room` of them */
	uint32		n;
	uint32		room;
} TailPending;

/*
 * The first block of the free pages that end an index of nblocks blocks
 * (nblocks if none), read back from its end; with `locked`, stops early
 * (the blocks read so far) when a session waits for the lock.  *off_list:
 * how many of them are not on the free list (VACUUM's sweep counted those
 * as free).  With `pending`, pending pages count among them, listed there
 * to be moved (not those that start them: moving those would gain
 * nothing).
 */
static BlockNumber
free_tail_start(Relation index, BlockNumber nblocks, BufferAccessStrategy strategy, bool locked,
				BlockNumber *off_list, TailPending *pending)
{
	BlockNumber start = nblocks;
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber dir_nblocks = nblocks;

	/*
	 * Checked whole, and each extent against the segments, as a seal checks
	 * it before writing there: a damaged list never truncates a page in use.
	 */
	bloomidx_read_directory(index, &dir_nblocks, dir);
	bloomidx_check_free_list(index, dir, bloomidx_cached_meta(index)->signature_bits, dir_nblocks);
	bloomidx::FreeList list = dir->free;

	bloomidx_directory_copy_free(dir);
	*off_list = 0;
	if (pending != NULL)
		pending->n = 0;
	while (start > bloomidx::kMetaBlock + 1)
	{
		CHECK_FOR_INTERRUPTS();
		if (locked && (nblocks - start) % TRUNCATE_CHECK_EVERY == 0 && start < nblocks &&
			LockHasWaitersRelation(index, AccessExclusiveLock))
			break;

		TailPage	kind = tail_page_kind(index, start - 1, &list, strategy);

		if (kind == TAIL_PENDING && pending != NULL)
		{
			if (pending->n == pending->room)
			{
				pending->room = Max(16, pending->room * 2);
				pending->blocks = pending->blocks == NULL ?
					(BlockNumber *) palloc(pending->room * sizeof(BlockNumber)) :
					(BlockNumber *) repalloc(pending->blocks, pending->room * sizeof(BlockNumber));
			}
			pending->blocks[pending->n++] = start - 1;
		}
		else if (kind != TAIL_FREE)
			break;
		else if (!bloomidx::free_list_overlaps(list, start - 1, 1))
			(*off_list)++;
		start--;
	}
	while (pending != NULL && pending->n > 0 && pending->blocks[pending->n - 1] == start)
	{
		start++;
		pending->n--;
	}
	return start;
}

/*
 * The lowest free page before block `limit` that is quick to find,
 * exclusively locked: the free list's lowest extent's first block (seals
 * and merges also take the lowest first), unless the free space map, where
 * single free pages are, offers one before it; InvalidBuffer if neither
 * has one before `limit`.  A block taken off the free list is unlisted in
 * a record of its own, before the move that writes it: a crash between
 * the two leaves it an orphan (whatever it held, listed), which the next
 * VACUUM's sweep frees.
 */
static Buffer
free_page_before(Relation index, BlockNumber limit, bool *from_map)
{
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	bloomidx::FreeExtent lowest = {InvalidBlockNumber, 0};

	bloomidx_read_directory(index, &nblocks, dir);
	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents; i++)
		if (dir->free.extents[i].first < Min(limit, lowest.first))
			lowest = dir->free.extents[i];
	bloomidx_directory_copy_free(dir);

	Buffer		buffer = bloomidx_free_buffer_before(index, Min(limit, lowest.first));

	*from_map = BufferIsValid(buffer);
	if (!BufferIsValid(buffer) && lowest.first != InvalidBlockNumber)
	{
		const bloomidx::FreeExtent rest = {lowest.first + 1, lowest.nblocks - 1};

		(void) bloomidx_publish_free_extents(index, &rest, rest.nblocks > 0 ? 1 : 0, &lowest, 1);
		buffer = ReadBuffer(index, lowest.first);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	}
	return buffer;
}

/*
 * Moves the pending pages listed, highest first, each to the lowest free
 * page before it, while there is one and no session waits for the lock;
 * returns how many it moved.  Lowest first, the copies gather at the
 * start of the free pages (most of the index, after mass deletions), and
 * the free tail then starts just past the highest copy.  Their predecessors are found in one
 * walk before any free page is locked (the walk's share locks then wait
 * for no lock of ours).  *from_map: how many of the pages it wrote came
 * from the free space map (VACUUM's sweep counted those as free); the
 * pages moved from are pending->blocks[0 .. returned).
 */
static uint32
move_tail_pending(Relation index, const TailPending *pending, uint32 *from_map)
{
	BlockNumber *preds = (BlockNumber *) palloc(pending->n * sizeof(BlockNumber));
	uint32		moved = 0;

	*from_map = 0;
	bloomidx_pending_predecessors(index, pending->blocks, pending->n, preds);
	for (uint32 i = 0; i < pending->n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (preds[i] == InvalidBlockNumber ||
			LockHasWaitersRelation(index, AccessExclusiveLock))
			break;

		bool		mapped;
		Buffer		to = free_page_before(index, pending->blocks[i], &mapped);

		if (!BufferIsValid(to))
			break;

		BlockNumber blkno_to = BufferGetBlockNumber(to);

		if (!bloomidx_move_pending_page(index, pending->blocks[i], preds[i], to))
		{
			/*
			 * Unwritten, but taken: back to the map if it came from there
			 * (new or free); off the list, it is still a listed page,
			 * which the map's takers refuse, so it is freed as a page
			 * nothing points at.
			 */
			if (mapped)
				RecordFreeIndexPage(index, blkno_to);
			else
			{
				DirectoryCopy *dir = bloomidx_directory_copy_new();
				BlockNumber nblocks = RelationGetNumberOfBlocks(index);

				bloomidx_read_directory(index, &nblocks, dir);
				bloomidx_free_page(index, blkno_to, dir->header.generation);
				bloomidx_directory_copy_free(dir);
			}
			break;
		}
		moved++;
		*from_map += mapped ? 1 : 0;
		/* A page still to move that the moved one linked to has a new predecessor. */
		for (uint32 j = i + 1; j < pending->n; j++)
			if (preds[j] == pending->blocks[i])
				preds[j] = blkno_to;
	}
	pfree(preds);
	return moved;
}

/*
 * Takes the blocks from `start` on off the free list: extents there are
 * dropped, and the part of one before `start` listed again.
 */
static void
unlist_tail(Relation index, BlockNumber start)
{
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	bloomidx::FreeExtent unlist[bloomidx::kMaxFreeExtents];
	bloomidx::FreeExtent relist[bloomidx::kMaxFreeExtents];
	uint32		nunlist = 0,
				nrelist = 0;

	bloomidx_read_directory(index, &nblocks, dir);
	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents; i++)
	{
		const bloomidx::FreeExtent e = dir->free.extents[i];

		if ((uint64) e.first + e.nblocks <= start)
			continue;
		unlist[nunlist++] = e;
		if (e.first < start)
			relist[nrelist++] = bloomidx::FreeExtent{e.first, start - e.first};
	}
	if (nunlist > 0)
		(void) bloomidx_publish_free_extents(index, relist, nrelist, unlist, nunlist);
	bloomidx_directory_copy_free(dir);
}

/*
 * Truncates the free pages that end the index, after VACUUM let go of the
 * seal lock: the AccessExclusiveLock is a heavyweight lock, taken before
 * the page lock as everywhere (PostgreSQL before 16 asserts that no
 * heavyweight lock is taken while a page lock is held), and under it no
 * one else can hold the seal lock, which it then takes for the publish.
 * Counts what it gave back out of stats' free and deleted pages, and says
 * so at VACUUM's message level (INFO under VERBOSE), as heap truncation
 * does.
 */
void
bloomidx_truncate_free_tail(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	BufferAccessStrategy strategy = info->strategy;
	BlockNumber off_list;
	uint32		moved = 0,
				from_map = 0;

	if (IsInParallelMode() || !bloomidx_table_allows_truncation(index))
		return;

	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	TailPending pending = {NULL, 0, 0};
	BlockNumber start = free_tail_start(index, nblocks, strategy, false, &off_list, &pending);

	if (nblocks - start < Max(TRUNCATE_MIN_PAGES, nblocks / TRUNCATE_FRACTION))
		return;
	if (!ConditionalLockRelation(index, AccessExclusiveLock))
	{
		ereport(info->message_level,
				(errmsg("index \"%s\": %u free pages at its end not truncated: the index is in use",
						RelationGetRelationName(index), nblocks - start)));
		return;
	}
	LockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	/* Inserts may have extended the index, or taken a page, since. */
	nblocks = RelationGetNumberOfBlocks(index);
	start = free_tail_start(index, nblocks, strategy, true, &off_list, &pending);
	if (pending.n > 0 && start < nblocks)
	{
		/* A moved page leaves the pending groups' run (pending_filters.cpp). */
		bloomidx_pending_filters_drop(index);
		moved = move_tail_pending(index, &pending, &from_map);
		start = free_tail_start(index, nblocks, strategy, true, &off_list, NULL);
	}
	/*
	 * VACUUM's sweep counted as free the pages moved to that the free space
	 * map gave (in use now), and not the pages moved from (pending then,
	 * free now); and, of the pages cut, those off the list.  (Approximate,
	 * as the sweep's count is: its gathering and the moves of the last
	 * segments list and free pages after it counted.)
	 */
	int64		free_change = (int64) moved - from_map;

	if (start < nblocks)
	{
		unlist_tail(index, start);
		RelationTruncate(index, start);
		ereport(info->message_level,
				(errmsg("index \"%s\": truncated %u to %u pages",
						RelationGetRelationName(index), nblocks, start)));
		free_change -= off_list;
	}
	if (stats != NULL)
	{
		stats->pages_free = (BlockNumber) Max((int64) stats->pages_free + free_change, 0);
		stats->pages_deleted = (BlockNumber) Max((int64) stats->pages_deleted + free_change, 0);
	}
	if (pending.blocks != NULL)
		pfree(pending.blocks);
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	UnlockRelation(index, AccessExclusiveLock);
}
