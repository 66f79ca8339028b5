/*
 * vacuum.cpp: removing the entries of dead heap tuples.  A page is
 * compacted in place (live entries moved down, both arrays) under Generic
 * WAL, and its free space goes to the free space map, where inserts find
 * it.
 */
#include "bloomidx.h"


/* Removes dead entries of one locked page; returns how many. */
static uint32
compact_page(Relation index, Buffer buffer, const bloomidx::RowPageGeometry *g,
			 IndexBulkDeleteCallback callback, void *callback_state)
{
	uint8	   *raw = (uint8 *) BufferGetPage(buffer);
	uint32		count = bloomidx::page_opaque(raw)->count;
	bool		dead[bloomidx::kMaxPageEntries];
	uint32		ndead = 0;

	for (uint32 i = 0; i < count; i++)
	{
		ItemPointerData tid;

		memcpy(&tid, bloomidx::row_tid(raw, *g, i), sizeof(tid));
		dead[i] = callback(&tid, callback_state);
		ndead += dead[i];
	}
	if (ndead == 0)
		return 0;

	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *page = (uint8 *) GenericXLogRegisterBuffer(xlog, buffer, 0);
	uint32		kept = 0;

	for (uint32 i = 0; i < count; i++)
	{
		if (dead[i])
			continue;
		if (kept != i)
			bloomidx::row_page_move(page, *g, i, kept);
		kept++;
	}
	bloomidx::row_page_truncate(page, *g, kept);
	GenericXLogFinish(xlog);
	return ndead;
}

/*
 * Visits every data page: with a callback, removes dead entries; always
 * counts live entries and records each page's free space.
 */
static void
visit_pages(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	bloomidx::RowPageGeometry g =
		bloomidx::row_page_geometry(bloomidx_cached_meta(index)->signature_bytes);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	stats->num_index_tuples = 0;
	stats->pages_free = 0;
	for (BlockNumber blkno = bloomidx::kMetaBlock + 1; blkno < nblocks; blkno++)
	{
		vacuum_delay_point();
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												info->strategy);

		LockBuffer(buffer, callback ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);
		uint32		count = 0;

		if (!PageIsNew(page))
		{
			bloomidx_check_data_page(index, blkno, page, &g);
			if (callback)
				stats->tuples_removed +=
					compact_page(index, buffer, &g, callback, callback_state);
			count = bloomidx::page_opaque((uint8 *) page)->count;
		}
		UnlockReleaseBuffer(buffer);

		stats->num_index_tuples += count;
		if (count == 0)
			stats->pages_free++;
		RecordPageWithFreeSpace(index, blkno, bloomidx::row_page_free_bytes(g, count));
	}
	stats->num_pages = nblocks;
	IndexFreeSpaceMapVacuum(index);
}

IndexBulkDeleteResult *
bloomidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	visit_pages(info, stats, callback, callback_state);
	return stats;
}

IndexBulkDeleteResult *
bloomidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	/* No bulkdelete ran (nothing to remove): count and record free space. */
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		visit_pages(info, stats, NULL, NULL);
	}
	return stats;
}
