/*
 * insert.cpp: one row into an existing index.  The row goes to the page
 * this statement's previous row went to, else to the page the metapage
 * points at, else to a page the free space map knows has room (space
 * vacuum freed), else to a new page at the end of the file.  No buffer
 * lock is held while another is taken, and the metapage is never locked
 * while the file is extended.
 */
#include "bloomidx.h"

/* Bounds the free space map walk if its hints keep being stale. */
#define MAX_FSM_TRIES 8

typedef struct NewEntry
{
	uint8		signature[bloomidx::kMaxSignatureBytes];
	ItemPointerData tid;
	Size		size;			/* signature bytes + TID */
} NewEntry;

/* Adds the entry to page under Generic WAL; the buffer is locked. */
static void
append_logged(Relation index, Buffer buffer, const BloomidxState *state,
			  const NewEntry *entry, bool new_page)
{
	GenericXLogState *xlog = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(xlog, buffer,
												 new_page ? GENERIC_XLOG_FULL_IMAGE : 0);

	if (new_page)
		bloomidx_init_data_page(page);
	bloomidx::row_page_append((uint8 *) page, state->geometry, entry->signature,
							  (const uint8 *) &entry->tid);
	GenericXLogFinish(xlog);
}

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

/*
 * Adds the entry to the locked page of buffer (block blkno) if it has
 * room; a new page (extended, then a crash before use) is initialised.
 */
static bool
append_if_room(Relation index, Buffer buffer, BlockNumber blkno, const BloomidxState *state,
			   const NewEntry *entry)
{
	Page		page = BufferGetPage(buffer);
	bool		fresh = PageIsNew(page);
	uint32		count = 0;

	if (!fresh)
	{
		bloomidx_check_data_page(index, blkno, page, &state->geometry);
		count = bloomidx::page_opaque((uint8 *) page)->count;
	}
	if (count >= state->geometry.capacity)
		return false;
	append_logged(index, buffer, state, entry, fresh);
	return true;
}

/*
 * Tries to add the entry to block blkno, a data page of the index.  When
 * the page is full, tells the free space map so and returns false.
 */
static bool
try_block(Relation index, BlockNumber blkno, const BloomidxState *state,
		  const NewEntry *entry)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	bool		added = append_if_room(index, buffer, blkno, state, entry);

	UnlockReleaseBuffer(buffer);
	if (!added)
		RecordPageWithFreeSpace(index, blkno, 0);
	return added;
}

/*
 * Adds the entry to a new page at the end of the index; returns its block.
 * The new block is visible to others as soon as the file grows, before
 * this backend locks its buffer: VACUUM may have recorded it in the free
 * space map meanwhile, and another inserter used it.  So the page is
 * initialised only if it is still new, and a page filled meanwhile (by
 * then full, in theory) just leads to another extension.
 */
static BlockNumber
extend_with(Relation index, const BloomidxState *state, const NewEntry *entry)
{
	bool		need_lock = !RELATION_IS_LOCAL(index);

	for (;;)
	{
		if (need_lock)
			LockRelationForExtension(index, ExclusiveLock);
		Buffer		buffer = ReadBuffer(index, P_NEW);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (need_lock)
			UnlockRelationForExtension(index, ExclusiveLock);

		BlockNumber blkno = BufferGetBlockNumber(buffer);
		bool		added = append_if_room(index, buffer, blkno, state, entry);
		uint32		count = bloomidx::page_opaque((uint8 *) BufferGetPage(buffer))->count;

		UnlockReleaseBuffer(buffer);

		/* Should the metapage update be lost to a race, the FSM still knows. */
		RecordPageWithFreeSpace(index, blkno, bloomidx::row_page_free_bytes(state->geometry, count));
		if (added)
			return blkno;
	}
}

/* A block the free space map suggests, if it can be a data page. */
static bool
plausible_block(Relation index, BlockNumber blkno)
{
	return blkno != bloomidx::kMetaBlock && blkno < RelationGetNumberOfBlocks(index);
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

	memset(entry.signature, 0, state->geometry.signature_bytes);
	bloomidx_form_signature(state, values, isnull, entry.signature);
	MemoryContextSwitchTo(old);
	MemoryContextReset(cache->row_cxt);
	entry.tid = *ht_ctid;
	entry.size = state->geometry.signature_bytes + sizeof(ItemPointerData);

	/*
	 * First the page this statement used last (no metapage visit for each
	 * row of a multi-row INSERT: it exists, the index never shrinks), then
	 * the one the metapage points at, unless a damaged metapage points past
	 * the end of the file.
	 */
	BlockNumber blkno = cache->last_block;

	if (blkno != InvalidBlockNumber && try_block(index, blkno, state, &entry))
		return false;
	BlockNumber hint = bloomidx_insert_block(index);

	if (hint != InvalidBlockNumber && hint != blkno && plausible_block(index, hint) &&
		try_block(index, hint, state, &entry))
	{
		cache->last_block = hint;
		return false;
	}

	for (int tries = 0; tries < MAX_FSM_TRIES; tries++)
	{
		blkno = GetPageWithFreeSpace(index, entry.size);
		if (blkno == InvalidBlockNumber)
			break;
		if (!plausible_block(index, blkno))
		{
			RecordPageWithFreeSpace(index, blkno, 0);	/* a stale hint */
			continue;
		}
		if (try_block(index, blkno, state, &entry))	/* records 0 when full */
		{
			bloomidx_set_insert_block(index, blkno);
			cache->last_block = blkno;
			return false;
		}
	}

	blkno = extend_with(index, state, &entry);
	bloomidx_set_insert_block(index, blkno);
	cache->last_block = blkno;
	return false;
}
