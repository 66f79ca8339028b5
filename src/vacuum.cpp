/*
 * vacuum.cpp: removing the entries of dead heap tuples.  A page is
 * compacted in place (live entries moved down, both arrays) under Generic
 * WAL, and its free space goes to the free space map, where inserts find
 * it.
 *
 * A damaged data page is skipped with a WARNING (ERRCODE_INDEX_CORRUPTED,
 * naming the index and the block, hint REINDEX), not an ERROR: an ERROR
 * would stop every VACUUM of the table, autovacuum's included, until
 * someone runs REINDEX, and with it the table's freezing, on the way to a
 * wraparound shutdown.  Skipping is safe: the page keeps its entries, and
 * it is recorded as full so that no insert is sent to it.  Entries of dead
 * tuples left behind point at TIDs the heap's VACUUM frees, which a later
 * row may reuse; but bloomidx answers bitmap scans only, and marks every
 * TID for recheck, so the bitmap heap scan always fetches the tuple now at
 * that TID (none if the slot is unused, even on an all-visible page) and
 * drops it unless it satisfies the query: a stale entry costs a fetch,
 * never a wrong answer.  The damage does not go unnoticed:
 * every scan that reads the page and bloomidx_verify still raise it as an
 * ERROR, as before, until REINDEX rebuilds the index.  A damaged metapage
 * still stops VACUUM: no data page can be read without it, and every scan
 * and insert fails as well.
 */
#include "bloomidx.h"

/* Whether a data page is sound; if not, says so (see above). */
static bool
page_is_sound(Relation index, BlockNumber blkno, Page page, const bloomidx::RowPageGeometry *g)
{
	bloomidx::PageProblem problem = bloomidx::check_row_page((const uint8 *) page, *g);

	if (problem == bloomidx::PageProblem::None)
		return true;
	bloomidx_warn_corrupted_page(index, blkno,
								 psprintf("%s.  VACUUM skipped the page and keeps its entries.",
										  bloomidx::page_problem_text(problem)));
	return false;
}

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
		bloomidx_vacuum_delay_point();
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												info->strategy);

		LockBuffer(buffer, callback ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);
		uint32		count = 0;

		if (!PageIsNew(page))
		{
			if (!page_is_sound(index, blkno, page, &g))
			{
				/* Its count cannot be trusted: nothing counted, no room. */
				UnlockReleaseBuffer(buffer);
				RecordPageWithFreeSpace(index, blkno, 0);
				continue;
			}
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
