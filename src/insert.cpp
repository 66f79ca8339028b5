/*
 * insert.cpp: one row into an existing index.  The row goes to the page
 * the metapage points at, else to a page the free space map knows has
 * room (space vacuum freed), else to a new page at the end of the file.
 * No buffer lock is held while another is taken, and the metapage is
 * never locked while the file is extended.
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
		bloomidx_init_data_page(page, &state->geometry);
	bloomidx::row_page_append((uint8 *) page, state->geometry, entry->signature,
							  (const uint8 *) &entry->tid);
	GenericXLogFinish(xlog);
}

/*
 * Tries to add the entry to block blkno.  When the page is full, tells the
 * free space map so and returns false.
 */
static bool
try_block(Relation index, BlockNumber blkno, const BloomidxState *state,
		  const NewEntry *entry)
{
	if (blkno == bloomidx::kMetaBlock || blkno >= RelationGetNumberOfBlocks(index))
		return false;

	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	Page		page = BufferGetPage(buffer);
	bool		fresh = PageIsNew(page);	/* extended, then a crash before use */
	uint32		count = 0;

	if (!fresh)
	{
		bloomidx_check_data_page(index, blkno, page, &state->geometry);
		count = bloomidx::page_opaque((uint8 *) page)->count;
	}
	if (count < state->geometry.capacity)
	{
		append_logged(index, buffer, state, entry, fresh);
		UnlockReleaseBuffer(buffer);
		return true;
	}
	UnlockReleaseBuffer(buffer);
	RecordPageWithFreeSpace(index, blkno, 0);
	return false;
}

/* Adds the entry to a new page at the end of the index; returns its block. */
static BlockNumber
extend_with(Relation index, const BloomidxState *state, const NewEntry *entry)
{
	bool		need_lock = !RELATION_IS_LOCAL(index);

	if (need_lock)
		LockRelationForExtension(index, ExclusiveLock);
	Buffer		buffer = ReadBuffer(index, P_NEW);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (need_lock)
		UnlockRelationForExtension(index, ExclusiveLock);

	append_logged(index, buffer, state, entry, true);
	BlockNumber blkno = BufferGetBlockNumber(buffer);

	UnlockReleaseBuffer(buffer);

	/* Should the metapage update be lost to a race, the FSM still knows. */
	RecordPageWithFreeSpace(index, blkno,
							bloomidx::row_page_free_bytes(state->geometry, 1));
	return blkno;
}

bool
bloomidx_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
				Relation heapRel, IndexUniqueCheck checkUnique, bool indexUnchanged,
				IndexInfo *indexInfo)
{
	BloomidxState *state = (BloomidxState *) indexInfo->ii_AmCache;

	if (state == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(indexInfo->ii_Context);

		state = (BloomidxState *) palloc(sizeof(BloomidxState));
		bloomidx_init_state(state, index);
		MemoryContextSwitchTo(old);
		indexInfo->ii_AmCache = state;
	}

	NewEntry	entry;

	memset(entry.signature, 0, state->geometry.signature_bytes);
	bloomidx_form_signature(state, values, isnull, entry.signature);
	entry.tid = *ht_ctid;
	entry.size = state->geometry.signature_bytes + sizeof(ItemPointerData);

	BlockNumber blkno = bloomidx_insert_block(index);

	if (blkno != InvalidBlockNumber && try_block(index, blkno, state, &entry))
		return false;

	for (int tries = 0; tries < MAX_FSM_TRIES; tries++)
	{
		blkno = GetPageWithFreeSpace(index, entry.size);
		if (blkno == InvalidBlockNumber)
			break;
		if (try_block(index, blkno, state, &entry))
		{
			bloomidx_set_insert_block(index, blkno);
			return false;
		}
	}

	blkno = extend_with(index, state, &entry);
	bloomidx_set_insert_block(index, blkno);
	return false;
}
