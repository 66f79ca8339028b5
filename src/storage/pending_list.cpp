/*
 * pending_list.cpp: walking the pending list (README.md, "Pages"
 * and "Reading"): every link checked before it is followed, the pages walked
 * counted against the metapage's count, and a page met on the list that
 * a seal recycled since the directory was copied told from damage; and
 * moving a page of the list to another block, for VACUUM's truncation.
 */
#include "storage/storage.h"

/*
 * A pending page met on the list (locked in *buffer) that is not one, or
 * was linked after the directory copy of `generation`: reused since the
 * copy (true: start again, the buffer released), or damage (an ERROR).
 * The page is copied and released before the metapage is read: a scan
 * holds one page lock at a time, so that it never waits for an insert
 * that holds the metapage and waits for this page.
 */
bool
bloomidx_pending_page_recycled(Relation index, BlockNumber blkno, Buffer *buffer,
							   uint32 generation, const bloomidx::RowPageGeometry *g)
{
	const uint8 *raw = (const uint8 *) BufferGetPage(*buffer);

	if (!PageIsNew((Page) raw) && bloomidx::is_pending_kind(bloomidx::page_opaque(raw)->flags) &&
		bloomidx::page_stamp(raw) <= generation)
		return false;

	Page		page = (Page) palloc(BLCKSZ);

	memcpy(page, raw, BLCKSZ);
	UnlockReleaseBuffer(*buffer);
	*buffer = InvalidBuffer;
	if (bloomidx_directory_generation(index) != generation)
	{
		pfree(page);
		return true;
	}
	if (PageIsNew(page))
		bloomidx_report_corrupted_page(index, blkno, "The pending list leads to a new page.");
	bloomidx_check_data_page(index, blkno, page, g, bloomidx::EntryChecks::None);
	bloomidx_report_corrupted_page(index, blkno,
								   "A pending page is stamped with a later directory generation than the directory's.");
	return false;				/* not reached */
}

/*
 * Checks a link of the pending list (from block `from`, or the metapage)
 * before it is followed: inside the index (its length read again when the
 * link is past it, as pages are added meanwhile), and not more links than
 * the index has pages (a cycle).  Damage is an ERROR: without the link,
 * there is no telling where the rest of the list is.
 */
void
bloomidx_check_pending_link(Relation index, BlockNumber from, BlockNumber blkno,
							BlockNumber *nblocks, BlockNumber *followed)
{
	if (blkno >= *nblocks)
		*nblocks = RelationGetNumberOfBlocks(index);
	if (blkno >= *nblocks || ++*followed > *nblocks)
		bloomidx_report_corrupted_page(index, from,
									   "Its link in the pending list is damaged.");
}

void
bloomidx_pending_walk_init(PendingWalk *w, Relation index, BlockNumber head, BlockNumber nblocks)
{
	w->index = index;
	w->blkno = head;
	w->from = bloomidx::kMetaBlock;
	w->nblocks = nblocks;
	w->followed = 0;
	w->visited = 0;
}

/* Whether there is a page to visit (w->blkno), its link checked. */
bool
bloomidx_pending_walk_more(PendingWalk *w)
{
	if (w->blkno == bloomidx::kMetaBlock)
		return false;
	bloomidx_check_pending_link(w->index, w->from, w->blkno, &w->nblocks, &w->followed);
	return true;
}

/* The page visited links to `next` (kMetaBlock: it is the last). */
void
bloomidx_pending_walk_follow(PendingWalk *w, BlockNumber next)
{
	w->from = w->blkno;
	w->blkno = next;
	w->visited++;
}

/*
 * Checks that a walk of the pending list from the head of a directory
 * copy met at least the pages the copy counts (pages linked since may add
 * to them).  A damaged link that ends the list early, or skips pages,
 * would otherwise hide their rows without a word.  False when the
 * directory changed since the copy (a seal moved the head: start again).
 */
bool
bloomidx_check_pending_count(Relation index, const DirectoryCopy *dir, uint32 walked)
{
	if (walked >= dir->header.pending_pages)
		return true;
	if (bloomidx_directory_generation(index) != dir->header.generation)
		return false;
	bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
								   psprintf("The pending list ends after %u of the %u pages the metapage counts: a link is damaged.",
											walked, dir->header.pending_pages));
	return false;				/* not reached */
}

/*
 * Each block's predecessor on the pending list, in one walk: preds[i] is
 * the page linking to blocks[i], kMetaBlock if blocks[i] is the head, or
 * InvalidBlockNumber if it is not on the list.  The caller holds no
 * buffer lock (the walk takes share locks one at a time).
 */
void
bloomidx_pending_predecessors(Relation index, const BlockNumber *blocks, uint32 n,
							  BlockNumber *preds)
{
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	PendingWalk walk;
	uint32		found = 0;

	for (uint32 i = 0; i < n; i++)
		preds[i] = InvalidBlockNumber;
	bloomidx_read_directory(index, &nblocks, dir);
	bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
	bloomidx_directory_copy_free(dir);
	while (found < n && bloomidx_pending_walk_more(&walk))
	{
		for (uint32 i = 0; i < n; i++)
			if (blocks[i] == walk.blkno && preds[i] == InvalidBlockNumber)
			{
				preds[i] = walk.from;
				found++;
			}

		Buffer		buffer = ReadBuffer(index, walk.blkno);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		BlockNumber next = bloomidx::pending_next((const uint8 *) BufferGetPage(buffer));

		UnlockReleaseBuffer(buffer);
		bloomidx_pending_walk_follow(&walk, next);
	}
}

/*
 * Moves pending page `from`, which page `before` (kMetaBlock: the
 * metapage's head) links to, to the free page locked in `to` (which the
 * caller took off the free space map or the free list), as VACUUM does
 * with pending pages that stand between the free pages ending the index
 * and the file's end (truncate.cpp).  The caller holds the index's
 * AccessExclusiveLock and the seal lock: no scan walks the list, no
 * insert adds to it, no seal takes from it.  One record copies the page,
 * relinks the page or metapage before it, names the copy the tail if
 * `from` was, and frees `from`.  False, nothing changed (`to` released,
 * as the caller took it), when `before` does not link to `from`.
 */
bool
bloomidx_move_pending_page(Relation index, BlockNumber from, BlockNumber before_blkno, Buffer to)
{
	const bloomidx::RowPageGeometry g = bloomidx::meta_row_geometry(*bloomidx_cached_meta(index));
	BlockNumber blkno_to = BufferGetBlockNumber(to);

	/* Locked as inserts lock: the new page, the metapage, then the list's pages in order. */
	Buffer		meta = bloomidx_lock_metapage(index, BUFFER_LOCK_EXCLUSIVE);
	Buffer		before = InvalidBuffer;
	bool		linked;

	if (before_blkno != bloomidx::kMetaBlock)
	{
		before = ReadBuffer(index, before_blkno);
		LockBuffer(before, BUFFER_LOCK_EXCLUSIVE);
		bloomidx_check_data_page(index, before_blkno, BufferGetPage(before), &g,
								 bloomidx::EntryChecks::None);
		linked = bloomidx::pending_next((const uint8 *) BufferGetPage(before)) == from;
	}
	else
		linked = bloomidx::directory_header((const uint8 *) BufferGetPage(meta))->pending_head == from;
	if (!linked || blkno_to == from || blkno_to == before_blkno)
	{
		if (BufferIsValid(before))
			UnlockReleaseBuffer(before);
		UnlockReleaseBuffer(meta);
		UnlockReleaseBuffer(to);
		return false;
	}
	Buffer		old = ReadBuffer(index, from);

	LockBuffer(old, BUFFER_LOCK_EXCLUSIVE);
	bloomidx_check_data_page(index, from, BufferGetPage(old), &g, bloomidx::EntryChecks::None);
	uint32		count = bloomidx::page_opaque((const uint8 *) BufferGetPage(old))->count;

	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *copy = (uint8 *) GenericXLogRegisterBuffer(xlog, to, GENERIC_XLOG_FULL_IMAGE);
	uint8	   *mp = (uint8 *) GenericXLogRegisterBuffer(xlog, meta, 0);
	uint8	   *freed = (uint8 *) GenericXLogRegisterBuffer(xlog, old, GENERIC_XLOG_FULL_IMAGE);
	bloomidx::DirectoryHeader *d = bloomidx::directory_header(mp);

	memcpy(copy, freed, BLCKSZ);
	if (BufferIsValid(before))
		bloomidx::set_pending_next((uint8 *) GenericXLogRegisterBuffer(xlog, before, 0), blkno_to);
	else
		d->pending_head = blkno_to;
	if (d->pending_tail == from)
		d->pending_tail = blkno_to;
	d->check = bloomidx::directory_check(*d);
	PageInit((Page) freed, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::free_page_fill(freed);
	bloomidx::set_page_stamp(freed, d->generation);
	GenericXLogFinish(xlog);

	UnlockReleaseBuffer(old);
	if (BufferIsValid(before))
		UnlockReleaseBuffer(before);
	UnlockReleaseBuffer(meta);
	UnlockReleaseBuffer(to);
	/* Inserts find the copy's room, as they found the page's. */
	RecordPageWithFreeSpace(index, blkno_to, bloomidx::row_page_free_bytes(g, count));
	RecordFreeIndexPage(index, from);
	return true;
}
