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
 * truncates.  RelationTruncate logs the truncation; the lock is logged for
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

/*
 * Whether block blkno is free: on the free list (whatever it holds: a
 * removed segment's pages stay as they were until reused), or a free, listed
 * or new page.
 */
static bool
tail_page_free(Relation index, BlockNumber blkno, const bloomidx::FreeList *list,
			   BufferAccessStrategy strategy)
{
	if (bloomidx::free_list_overlaps(*list, blkno, 1))
		return true;

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		free_page = PageIsNew((Page) page) ||
		bloomidx::check_free_page(page) == bloomidx::PageProblem::None ||
		bloomidx::check_listed_page(page) == bloomidx::PageProblem::None;

	UnlockReleaseBuffer(buffer);
	return free_page;
}

/*
 * The first block of the free pages that end an index of nblocks blocks
 * (nblocks if none), read back from its end; with `locked`, stops early
 * (the blocks read so far) when a session waits for the lock.  *off_list:
 * how many of them are not on the free list (VACUUM's sweep counted those
 * as free).
 */
static BlockNumber
free_tail_start(Relation index, BlockNumber nblocks, BufferAccessStrategy strategy, bool locked,
				BlockNumber *off_list)
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
	while (start > bloomidx::kMetaBlock + 1)
	{
		CHECK_FOR_INTERRUPTS();
		if (locked && (nblocks - start) % TRUNCATE_CHECK_EVERY == 0 && start < nblocks &&
			LockHasWaitersRelation(index, AccessExclusiveLock))
			break;
		if (!tail_page_free(index, start - 1, &list, strategy))
			break;
		if (!bloomidx::free_list_overlaps(list, start - 1, 1))
			(*off_list)++;
		start--;
	}
	return start;
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

	if (IsInParallelMode() || !bloomidx_table_allows_truncation(index))
		return;

	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber start = free_tail_start(index, nblocks, strategy, false, &off_list);

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
	start = free_tail_start(index, nblocks, strategy, true, &off_list);
	if (start < nblocks)
	{
		unlist_tail(index, start);
		RelationTruncate(index, start);
		ereport(info->message_level,
				(errmsg("index \"%s\": truncated %u to %u pages",
						RelationGetRelationName(index), nblocks, start)));
		if (stats != NULL)
		{
			stats->pages_free -= Min(stats->pages_free, off_list);
			stats->pages_deleted -= Min(stats->pages_deleted, off_list);
		}
	}
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	UnlockRelation(index, AccessExclusiveLock);
}
