/*
 * insert.cpp: one row into an existing index.  Rows go to pending pages
 * (storage/README.md): the page this statement's previous row went to, else
 * one the free space map knows has room (space VACUUM freed), else the
 * pending list's last page (its tail); when that is full (or marked for a
 * seal: VACUUM may seal it), a new page (a
 * free one from the map, else a new one at the end of the file) is linked
 * behind it in one WAL record with the metapage, which names it the new
 * tail.  Locks are taken in one order, new page, metapage, old tail, so
 * that no two backends wait for each other; the metapage is never locked
 * while the file is extended.
 */
#include "bloomidx.h"

typedef struct NewEntry
{
	uint8		signature[bloomidx::kMaxSignatureBytes];
	uint8		tail[bloomidx::kMaxRowTailBytes];	/* TID, then the filter keys */
} NewEntry;

/*
 * What an INSERT statement keeps between its rows (in ii_AmCache), and
 * the context each row's work runs in: hash functions may allocate (a
 * detoasted numeric, an ICU sort key), so it is reset after every row, as
 * contrib/bloom, GIN and GiST do.
 */
typedef struct InsertCache
{
	BloomidxState state;
	BlockNumber last_block;		/* where this statement's last row went */
	MemoryContext row_cxt;
} InsertCache;

/* What became of an attempt to add the row to a page. */
typedef enum AppendResult
{
	APPEND_ADDED,				/* the row is in */
	APPEND_FULL,				/* a pending page, full */
	APPEND_FREE,				/* a free page (or a new one): the buffer stays locked */
	APPEND_OTHER				/* no page for rows (any more) */
} AppendResult;

/*
 * Adds the entry to block blkno if it is a pending page with room.  A page
 * reached through a hint (this statement's last page, the free space map)
 * may since have been sealed or reused as anything, so its kind decides;
 * a free page is left locked in *buffer for the caller to link.
 */
static AppendResult
try_append(Relation index, BlockNumber blkno, const BloomidxState *state,
		   const NewEntry *entry, Buffer *free_buffer)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	AppendResult result = APPEND_OTHER;

	if (PageIsNew((Page) page) || bloomidx::check_free_page(page) == bloomidx::PageProblem::None)
	{
		if (free_buffer != NULL)
		{
			*free_buffer = buffer;
			return APPEND_FREE;
		}
	}
	else if (bloomidx::page_opaque(page)->flags == bloomidx::kPageData &&
			 bloomidx::page_opaque(page)->page_id == bloomidx::kPageId)
	{
		/*
		 * Its structure, not its sums: an append keeps the sums as they
		 * were (damage stays for scans and bloomidx_verify to find), and
		 * summing a page per row would cost an insert as much as the rest.
		 */
		bloomidx_check_data_page(index, blkno, (Page) page, &state->geometry,
								 bloomidx::EntryChecks::None);
		if (bloomidx::page_opaque(page)->count < state->geometry.capacity)
		{
			bloomidx_append_logged(index, buffer, &state->geometry, entry->signature,
								   entry->tail);
			result = APPEND_ADDED;
		}
		else
			result = APPEND_FULL;
	}
	UnlockReleaseBuffer(buffer);
	return result;
}

/* The pending list's tail the metapage names (0: the list is empty). */
static BlockNumber
metapage_tail(Relation index)
{
	Buffer		buffer = bloomidx_lock_metapage(index, BUFFER_LOCK_SHARE);
	BlockNumber tail =
		bloomidx::directory_header((const uint8 *) BufferGetPage(buffer))->pending_tail;

	UnlockReleaseBuffer(buffer);
	if (tail >= RelationGetNumberOfBlocks(index))
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
									 bloomidx::PageProblem::BadDirectory);
	return tail;
}

/*
 * Makes `fresh` (a free or new page, locked) a pending page holding the
 * entry and links it behind the tail; returns its block, the pages the
 * list has now in *pending_pages, and the old tail in *filled (kMetaBlock:
 * the list was empty).
 */
static BlockNumber
link_new_tail(Relation index, Buffer fresh, const BloomidxState *state, const NewEntry *entry,
			  uint32 *pending_pages, BlockNumber *filled)
{
	BlockNumber blkno = BufferGetBlockNumber(fresh);
	Buffer		meta = bloomidx_lock_metapage(index, BUFFER_LOCK_EXCLUSIVE);
	const uint8 *metapage = (const uint8 *) BufferGetPage(meta);

	BlockNumber tail = bloomidx::directory_header(metapage)->pending_tail;
	Buffer		old = InvalidBuffer;

	if (tail >= RelationGetNumberOfBlocks(index) || tail == blkno)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
									 bloomidx::PageProblem::BadDirectory);

	if (tail != bloomidx::kMetaBlock)
	{
		old = ReadBuffer(index, tail);
		LockBuffer(old, BUFFER_LOCK_EXCLUSIVE);
		bloomidx_check_data_page(index, tail, BufferGetPage(old), &state->geometry,
								 bloomidx::EntryChecks::None);
		if (bloomidx::pending_next((const uint8 *) BufferGetPage(old)) != bloomidx::kMetaBlock)
			bloomidx_report_corrupted_page(index, tail,
										   "The pending list's tail has a successor.");
	}

	/*
	 * The tail has room after all: another insert linked it since this one
	 * found the last tail full.  The row goes there, and `fresh` stays free:
	 * else concurrent inserts would link pages of a row each, which no
	 * insert fills (nothing points the free space map at them), and whose
	 * pending filters could never be written (pending_filters.cpp).
	 */
	if (BufferIsValid(old) &&
		bloomidx::page_opaque((const uint8 *) BufferGetPage(old))->flags == bloomidx::kPageData &&
		bloomidx::page_opaque((const uint8 *) BufferGetPage(old))->count < state->geometry.capacity)
	{
		bloomidx_append_logged(index, old, &state->geometry, entry->signature, entry->tail);
		*pending_pages = bloomidx::directory_header(metapage)->pending_pages;
		*filled = bloomidx::kMetaBlock;
		UnlockReleaseBuffer(old);
		UnlockReleaseBuffer(meta);
		UnlockReleaseBuffer(fresh);
		RecordFreeIndexPage(index, blkno);
		return tail;
	}

	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *page = (uint8 *) GenericXLogRegisterBuffer(xlog, fresh, GENERIC_XLOG_FULL_IMAGE);
	uint8	   *mp = (uint8 *) GenericXLogRegisterBuffer(xlog, meta, 0);
	bloomidx::DirectoryHeader *d = bloomidx::directory_header(mp);

	bloomidx_init_data_page((Page) page);
	bloomidx::set_page_stamp(page, d->generation);
	bloomidx::row_page_append(page, state->geometry, entry->signature, entry->tail);
	if (BufferIsValid(old))
		bloomidx::set_pending_next((uint8 *) GenericXLogRegisterBuffer(xlog, old, 0), blkno);
	else
		d->pending_head = blkno;
	d->pending_tail = blkno;
	d->pending_pages++;
	*pending_pages = d->pending_pages;
	*filled = tail;
	d->check = bloomidx::directory_check(*d);
	GenericXLogFinish(xlog);

	if (BufferIsValid(old))
		UnlockReleaseBuffer(old);
	UnlockReleaseBuffer(meta);
	UnlockReleaseBuffer(fresh);
	return blkno;
}

/*
 * After a new tail was linked behind page `filled`: a segment's worth
 * gathered is sealed, by a background worker or now (seal_worker.cpp),
 * unless a seal or VACUUM runs; the pages that filled get their pending
 * filters (storage/pending_filters.cpp).
 */
static void
tail_linked(Relation index, const BloomidxState *state, uint32 pending_pages, BlockNumber filled)
{
	bloomidx_seal_when_due(index, pending_pages, state->geometry.capacity);
	if (filled != bloomidx::kMetaBlock)
		bloomidx_pending_filters_add(index, state, filled, pending_pages);
}

/* Adds the entry to the pending list's tail if it has room (the statement's page from then on). */
static bool
append_to_tail(Relation index, const BloomidxState *state, const NewEntry *entry,
			   InsertCache *cache)
{
	BlockNumber tail = metapage_tail(index);

	if (tail == bloomidx::kMetaBlock || try_append(index, tail, state, entry, NULL) != APPEND_ADDED)
		return false;
	cache->last_block = tail;
	return true;
}

bool
bloomidx_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
				Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
				IndexInfo *indexInfo)
{
	InsertCache *cache = (InsertCache *) indexInfo->ii_AmCache;

	if (cache == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(indexInfo->ii_Context);

		cache = (InsertCache *) palloc(sizeof(InsertCache));
		bloomidx_init_state(&cache->state, index);
		cache->last_block = InvalidBlockNumber;
		cache->row_cxt = AllocSetContextCreate(indexInfo->ii_Context, "bloomidx insert row",
											   ALLOCSET_SMALL_SIZES);
		MemoryContextSwitchTo(old);
		indexInfo->ii_AmCache = cache;
	}
	const BloomidxState *state = &cache->state;
	NewEntry	entry;
	MemoryContext old = MemoryContextSwitchTo(cache->row_cxt);

	uint32		keys[INDEX_MAX_KEYS];

	memset(entry.signature, 0, state->geometry.signature_bytes);
	bloomidx_form_signature(state, values, isnull, entry.signature,
							state->geometry.keys > 0 ? keys : NULL);
	MemoryContextSwitchTo(old);
	MemoryContextReset(cache->row_cxt);
	memcpy(entry.tail, ht_ctid, sizeof(ItemPointerData));
	memcpy(entry.tail + bloomidx::kTidSize, keys, state->geometry.keys * sizeof(uint32));

	/*
	 * The page this statement used last (no metapage visit for each row of
	 * a multi-row INSERT).  It is still within the index: the index
	 * shrinks only under its AccessExclusiveLock (storage/truncate.cpp),
	 * which the lock this statement holds on it keeps out, and nothing
	 * gives it a new file within a statement, so no lseek for the length
	 * per row.
	 */
	BlockNumber blkno = cache->last_block;

	if (blkno != InvalidBlockNumber &&
		try_append(index, blkno, state, &entry, NULL) == APPEND_ADDED)
		return false;

	/* Space VACUUM freed in pending pages, or a free page to link. */
	Size		need = state->geometry.signature_bytes + state->geometry.tail_bytes;
	uint32		pending_pages = 0;
	BlockNumber filled = bloomidx::kMetaBlock;
	bool		tail_tried = false;

	for (int tries = 0; tries < MAX_FSM_TRIES; tries++)
	{
		Buffer		fresh = InvalidBuffer;

		blkno = GetPageWithFreeSpace(index, need);
		if (blkno == InvalidBlockNumber)
			break;
		if (blkno == bloomidx::kMetaBlock || blkno >= RelationGetNumberOfBlocks(index))
		{
			RecordPageWithFreeSpace(index, blkno, 0);	/* a stale hint */
			continue;
		}
		AppendResult result = try_append(index, blkno, state, &entry, &fresh);

		/*
		 * A free page: the tail first, while it has room.  Else every
		 * statement of one row would link a page of its own (seals and
		 * merges free many), and the pending list would hold a row a page,
		 * which every query reads and no seal counts as enough rows.  The
		 * free page stays free (unlocked first: one page locked at a time).
		 */
		if (result == APPEND_FREE && !tail_tried)
		{
			UnlockReleaseBuffer(fresh);
			tail_tried = true;
			if (append_to_tail(index, state, &entry, cache))
				return false;
			tries--;			/* the map's next free page, linked this time */
			continue;
		}
		if (result == APPEND_FREE)
		{
			/* In the list from now on, so no longer free: inserts fill it. */
			BlockNumber fresh_blkno = BufferGetBlockNumber(fresh);

			blkno = link_new_tail(index, fresh, state, &entry, &pending_pages, &filled);
			if (blkno == fresh_blkno)
				RecordPageWithFreeSpace(index, blkno,
										bloomidx::row_page_free_bytes(state->geometry, 1));
		}
		if (result == APPEND_ADDED || result == APPEND_FREE)
		{
			cache->last_block = blkno;
			if (result == APPEND_FREE)
				tail_linked(index, state, pending_pages, filled);
			return false;
		}
		RecordPageWithFreeSpace(index, blkno, 0);
	}

	/* The tail, else a new page linked behind it. */
	if (append_to_tail(index, state, &entry, cache))
		return false;
	blkno = link_new_tail(index, bloomidx_extend_buffer(index), state, &entry, &pending_pages,
						  &filled);
	cache->last_block = blkno;
	tail_linked(index, state, pending_pages, filled);
	return false;
}
