/*
 * block_write.cpp: how the new pages of a segment or filter group reach
 * the index.
 *
 * A seal or merge works beside readers, so its pages go through shared
 * buffers.  CREATE INDEX owns an index no one else can see yet, so, as
 * core AMs' builds do, it writes them straight to the index's file: one
 * write each instead of a zeroed extension, a buffer taken and dirtied,
 * and a second write when the buffer leaves.  On 10 M rows that was a
 * fifth of a build's time.  No buffer holds these blocks: they are past
 * the end of the index until the run that adds them, and only the build
 * reads the index before it ends.  (A superuser's page inspection during
 * CREATE INDEX CONCURRENTLY could read a run's blocks while still zero and
 * leave that stale image in a buffer, as it could btree's zero-filled
 * gaps; bloomidx_verify refuses an index that is not ready.)  A serial
 * build extends the index without the extension lock: no one else can
 * extend it then (inserts skip an index that is not ready, VACUUM waits
 * for the table's lock, and a seal finds nothing pending before publish).
 *
 * Durability: each write asks the checkpointer to fsync the file (an
 * unlogged index must survive a clean shutdown too; mdwrite asks nothing
 * for a temporary one).  A checkpoint that began during the build may have
 * moved its redo point past our WAL before our requests reached it, so
 * then the file is fsynced at the end, here, as PostgreSQL 17's bulk
 * writes do.  With wal_level minimal, commit syncs or logs the new file.
 */
#include "storage/storage.h"

void
bloomidx_block_writer_init(BlockWriter *writer, Relation index, bool shared_extension,
						   bool direct)
{
	writer->shared_extension = shared_extension;
	writer->direct = direct;
	writer->start_redo = direct ? GetRedoRecPtr() : InvalidXLogRecPtr;
}

/*
 * Whole pages logged between WAL flushes, in a seal worker (0: none, the
 * commit flushes).  A seal logs its 180 or so pages whole, about 1.5 MB;
 * unflushed, the next commit of any backend, an INSERT beside the worker,
 * would wait for all of it to reach the disk (measured here: an insert of
 * 20 rows that took 192 ms while a worker sealed).  Flushed a quarter of a
 * megabyte at a time, a commit waits for a quarter at most.
 */
int			bloomidx_wal_flush_pages = 0;
static int	pages_since_flush = 0;

/* Writes `image` to the locked buffer, logs it whole and releases it. */
void
bloomidx_write_page(Relation index, Buffer buffer, const char *image)
{
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buffer), image, BLCKSZ);
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
	if (bloomidx_wal_flush_pages > 0 && ++pages_since_flush >= bloomidx_wal_flush_pages)
	{
		XLogFlush(XactLastRecEnd);
		pages_since_flush = 0;
	}
}

/*
 * Extends the index by n blocks in one run, returning the first; the
 * blocks are left new (zero) until written, and nothing points at them
 * (nor does the free space map, which never knew them) until the segment
 * is published.  Beside other extenders (parallel build participants,
 * inserts), the extension lock keeps the run consecutive.  The run is
 * added to the file past shared buffers (bloomidx_zero_extend; written
 * directly, by writing its last block, the file system filling the blocks
 * before it with zeros): no buffer can hold a block past the end of the
 * file, and bloomidx_write_run_block takes each block's buffer zeroed,
 * without reading it.  A seal's 180 or so blocks, each taken as a new
 * buffer (a write of zeros and a buffer mapped apiece), took a fifth of
 * the seal's time, and a seal runs inside an INSERT.
 */
BlockNumber
bloomidx_extend_run(Relation index, uint32 n, const BlockWriter *writer)
{
	Assert(n >= 1);
	if (writer->shared_extension)
		LockRelationForExtension(index, ExclusiveLock);

	SMgrRelation smgr = RelationGetSmgr(index);
	BlockNumber first = smgrnblocks(smgr, MAIN_FORKNUM);

	if ((uint64) first + n > MaxBlockNumber)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot extend index \"%s\" beyond %u blocks",
						RelationGetRelationName(index), MaxBlockNumber)));
	bloomidx_zero_extend(smgr, first, n, writer->direct);
	if (writer->shared_extension)
		UnlockRelationForExtension(index, ExclusiveLock);
	return first;
}

/*
 * Writes `image` (a whole page, which gets its LSN and checksum here) to
 * block blkno of a run bloomidx_extend_run added, and logs it whole.
 */
void
bloomidx_write_run_block(Relation index, BlockNumber blkno, char *image,
						 const BlockWriter *writer)
{
	if (!writer->direct)
	{
		/* Zeroed, not read: the block is new, and may be a hole (bloomidx_zero_extend). */
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_ZERO_AND_LOCK,
												NULL);

		bloomidx_write_page(index, buffer, image);
		return;
	}
	if (RelationNeedsWAL(index))
		log_newpage(&BLOOMIDX_REL_LOCATOR(index), MAIN_FORKNUM, blkno, (Page) image, true);
	bloomidx_page_set_checksum((Page) image, blkno);
	smgrwrite(RelationGetSmgr(index), MAIN_FORKNUM, blkno, image, false);
}

/*
 * Ends a build's direct writes (every participant's: the leader, after the
 * workers are done): fsyncs the file if a checkpoint began since they
 * started.
 */
void
bloomidx_block_writer_finish(const BlockWriter *writer, Relation index)
{
	if (writer->direct && RelationNeedsWAL(index) && GetRedoRecPtr() != writer->start_redo)
	{
		elog(DEBUG1, "bloomidx: index \"%s\" fsynced: a checkpoint began while it was built",
			 RelationGetRelationName(index));
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
	}
}

/*
 * A free page from the free space map before block `limit`
 * (InvalidBlockNumber: anywhere), exclusively locked; InvalidBuffer when
 * the map offers none in a few tries.  For a page written whole (a
 * directory page, a seal's or merge's filter group page, a pending page
 * VACUUM moves).  Only wholly free pages are asked for (free pages are
 * recorded so, pending pages with room below: MaxHeapTupleSize is the
 * map's top category), and a page is marked used in the map only once it
 * is taken; one taken meanwhile (an insert links free pages as pending
 * ones) is left to what its taker recorded.  The caller holds no buffer
 * lock, so waiting for this one cannot deadlock.
 */
Buffer
bloomidx_free_buffer_before(Relation index, BlockNumber limit)
{
	for (int tries = 0; tries < MAX_FSM_TRIES; tries++)
	{
		BlockNumber blkno = GetPageWithFreeSpace(index, MaxHeapTupleSize);

		if (blkno == InvalidBlockNumber)
			break;
		if (blkno == bloomidx::kMetaBlock || blkno >= RelationGetNumberOfBlocks(index))
		{
			RecordPageWithFreeSpace(index, blkno, 0);	/* a stale entry */
			continue;
		}
		if (limit != InvalidBlockNumber && blkno >= limit)
			continue;			/* the map's search moves on to other pages */

		Buffer		buffer = ReadBuffer(index, blkno);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);

		if (PageIsNew((Page) page) ||
			bloomidx::check_free_page(page) == bloomidx::PageProblem::None)
		{
			RecordUsedIndexPage(index, blkno);
			return buffer;
		}
		UnlockReleaseBuffer(buffer);
		/* Not free any more, and not recorded so by its taker: a stale entry. */
		if (GetRecordedFreeSpace(index, blkno) >= MaxHeapTupleSize)
			RecordPageWithFreeSpace(index, blkno, 0);
	}
	return InvalidBuffer;
}

/* A free page from the free space map, else a new one at the index's end, exclusively locked. */
Buffer
bloomidx_free_or_new_buffer(Relation index)
{
	Buffer		buffer = bloomidx_free_buffer_before(index, InvalidBlockNumber);

	return BufferIsValid(buffer) ? buffer : bloomidx_extend_buffer(index);
}

/* A new page at the end of the file, exclusively locked. */
Buffer
bloomidx_extend_buffer(Relation index)
{
	bool		need_lock = !RELATION_IS_LOCAL(index);

	if (need_lock)
		LockRelationForExtension(index, ExclusiveLock);
	Buffer		buffer = ReadBuffer(index, P_NEW);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (need_lock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}
