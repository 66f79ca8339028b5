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

/* Entry `place` of the page holding it: the metapage, or a directory page. */
static bloomidx::SegmentEntry *
entry_on_page(BlockNumber eblock, uint32 place, uint8 *page)
{
	return eblock == bloomidx::kMetaBlock ? &bloomidx::directory_entries(page)[place]
		: &bloomidx::directory_page_entries(page)[place];
}

/*
 * Whether entry `slot`'s page (locked, at eblock) and the entry are sound:
 * a damaged one is not changed, which would give it a new check or sum
 * and hide the damage.
 */
static bool
entry_page_sound(const DirectoryCopy *dir, uint32 slot, BlockNumber eblock, uint8 *page)
{
	uint32		place;

	(void) bloomidx_directory_entry_block(dir, slot, &place);
	if (eblock == bloomidx::kMetaBlock)
	{
		if (bloomidx::check_meta_page(page) != bloomidx::PageProblem::None)
			return false;
	}
	else
	{
		uint32		p = bloomidx::directory_page_of(slot);

		if (bloomidx::check_directory_page(page,
										   (uint16) bloomidx::directory_page_count(dir->header.nsegments, p),
										   (uint16) p) != bloomidx::PageProblem::None)
			return false;
	}
	const bloomidx::SegmentEntry *e = entry_on_page(eblock, place, page);

	return e->check == bloomidx::segment_entry_check(*e);
}

/*
 * Clears the live bits of a segment's dead rows (with a callback), and
 * returns its live rows.  The live page and the directory entry's count
 * change in one WAL record.
 */
static uint32
visit_segment(Relation index, const DirectoryCopy *dir, uint32 slot, uint32 nslices,
			  BlockNumber nblocks, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state,
			  BufferAccessStrategy strategy, bool *page_entry_lowered)
{
	const bloomidx::SegmentEntry *entry = &dir->entries[slot];

	if (callback == NULL)
		return entry->live_rows;

	bloomidx::SegmentHeader *h = (bloomidx::SegmentHeader *) palloc(sizeof(bloomidx::SegmentHeader));
	uint32		dead[bloomidx::kTidGroupRows];
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, entry->header_block, RBM_NORMAL,
											strategy);
	bloomidx::PageProblem problem;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	problem = bloomidx::check_segment_page((const uint8 *) BufferGetPage(buffer),
										   entry->segment_id, entry->rows, entry->first_slice,
										   nslices, entry->slices_per_page,
										   RelationGetNumberOfAttributes(index),
										   entry->header_block, nblocks);
	if (problem == bloomidx::PageProblem::None)
		memcpy(h, bloomidx::segment_header((const uint8 *) BufferGetPage(buffer)), sizeof(*h));
	UnlockReleaseBuffer(buffer);
	if (problem != bloomidx::PageProblem::None)
	{
		bloomidx_warn_corrupted_page(index, entry->header_block,
									 psprintf("%s.  VACUUM skipped segment %u and keeps its rows.",
											  bloomidx::page_problem_text(problem),
											  entry->segment_id));
		pfree(h);
		return entry->live_rows;
	}

	uint32		live = entry->live_rows;
	BlockNumber bad_block = InvalidBlockNumber; /* a damaged entry's page */

	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		bloomidx_vacuum_delay_point();
		Buffer		tids = ReadBufferExtended(index, MAIN_FORKNUM, h->tid_blocks[p], RBM_NORMAL,
											  strategy);

		LockBuffer(tids, BUFFER_LOCK_SHARE);
		const uint8 *tpage = (const uint8 *) BufferGetPage(tids);

		problem = bloomidx::check_tid_page(tpage, *h, (uint16) p);
		for (uint32 g = 0; problem == bloomidx::PageProblem::None && g < h->ngroups; g++)
		{
			if (h->groups[g].page != p)
				continue;
			bloomidx::HeapTid group[bloomidx::kTidGroupRows];
			uint32		first = g * bloomidx::kTidGroupRows;
			uint32		n = bloomidx::tid_page_group(*h, tpage, g, group);
			uint32		ndead = 0;

			if (n == 0)
			{
				problem = bloomidx::PageProblem::BadTidBytes;
				break;
			}
			for (uint32 i = 0; i < n; i++)
			{
				ItemPointerData tid;

				ItemPointerSet(&tid, group[i].block, group[i].offset);
				if (callback(&tid, callback_state))
					dead[ndead++] = first + i;
			}
			if (ndead == 0)
				continue;

			/*
			 * Live page, then the page holding the entry (the metapage or a
			 * directory page, which the seal lock keeps in place): no one
			 * locks them the other way round.
			 */
			uint32		place;
			BlockNumber eblock = bloomidx_directory_entry_block(dir, slot, &place);

			/* A header naming the entry's page as its own: damage (and a self-deadlock). */
			if (eblock == h->live_block || eblock == h->tid_blocks[p])
			{
				problem = bloomidx::PageProblem::BadSegment;
				break;
			}

			Buffer		lbuf = ReadBufferExtended(index, MAIN_FORKNUM, h->live_block,
												  RBM_NORMAL, strategy);
			Buffer		ebuf = ReadBuffer(index, eblock);

			LockBuffer(lbuf, BUFFER_LOCK_EXCLUSIVE);
			LockBuffer(ebuf, BUFFER_LOCK_EXCLUSIVE);
			bloomidx::PageProblem lp =
				bloomidx::check_live_page((const uint8 *) BufferGetPage(lbuf), entry->rows,
										  entry->segment_id);
			bool		entry_sound = entry_page_sound(dir, slot, eblock,
													   (uint8 *) BufferGetPage(ebuf)) &&
				entry_on_page(eblock, place,
							  (uint8 *) BufferGetPage(ebuf))->segment_id == entry->segment_id;

			if (lp == bloomidx::PageProblem::None && entry_sound)
			{
				GenericXLogState *xlog = GenericXLogStart(index);
				uint8	   *lpage = (uint8 *) GenericXLogRegisterBuffer(xlog, lbuf, 0);
				uint8	   *epage = (uint8 *) GenericXLogRegisterBuffer(xlog, ebuf, 0);
				bloomidx::SegmentEntry *me = entry_on_page(eblock, place, epage);
				bloomidx::SegmentEntry before = *me;
				uint32		cleared = 0;

				for (uint32 i = 0; i < ndead; i++)
					cleared += bloomidx::live_page_clear(lpage, dead[i]);
				me->live_rows = (uint16) (me->live_rows - Min(cleared, (uint32) me->live_rows));
				me->check = bloomidx::segment_entry_check(*me);
				if (eblock != bloomidx::kMetaBlock)
				{
					bloomidx::directory_page_entry_changed(epage, place, before);
					if (me->live_rows != before.live_rows)
						*page_entry_lowered = true;
				}
				/* Read before the finish, which frees the copy me points into. */
				live = me->live_rows;
				GenericXLogFinish(xlog);
				stats->tuples_removed += cleared;
			}
			else if (lp != bloomidx::PageProblem::None)
				problem = lp;
			else
			{
				problem = bloomidx::PageProblem::BadDirectory;
				bad_block = eblock;
			}
			UnlockReleaseBuffer(ebuf);
			UnlockReleaseBuffer(lbuf);
			if (problem != bloomidx::PageProblem::None)
				break;
		}
		UnlockReleaseBuffer(tids);
		if (problem != bloomidx::PageProblem::None)
		{
			bloomidx_warn_corrupted_page(index, bad_block != InvalidBlockNumber ? bad_block :
										 h->tid_blocks[p],
										 psprintf("%s.  VACUUM skipped the rest of segment %u and keeps their rows.",
												  bloomidx::page_problem_text(problem),
												  entry->segment_id));
			break;
		}
	}
	pfree(h);
	return live;
}

/*
 * Visits the segments and the pending pages: with a callback, removes the
 * entries of dead rows; always counts live ones.
 */
static void
visit_pages(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			IndexBulkDeleteCallback callback, void *callback_state, bool *page_entry_lowered)
{
	Relation	index = info->index;

	/*
	 * A copy: the relcache frees rd_amcache on any invalidation of the
	 * index, which a long walk may take in (a WARNING's schema lookup, say).
	 */
	const bloomidx::MetaPageData meta = *bloomidx_cached_meta(index);
	bloomidx::RowPageGeometry g = bloomidx::meta_row_geometry(meta);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);

	stats->num_index_tuples = 0;
	stats->pages_free = 0;
	for (uint32 i = 0; i < dir->header.nsegments; i++)
		stats->num_index_tuples += visit_segment(index, dir, i,
												 meta.signature_bits, nblocks, stats,
												 callback, callback_state, info->strategy,
												 page_entry_lowered);

	/* Pages are linked behind the tail meanwhile, never taken from the list. */
	PendingWalk walk;

	bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
	while (bloomidx_pending_walk_more(&walk))
	{
		BlockNumber blkno = walk.blkno;

		bloomidx_vacuum_delay_point();
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												info->strategy);

		LockBuffer(buffer, callback ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		Page		page = BufferGetPage(buffer);
		BlockNumber next = bloomidx::pending_next((const uint8 *) page);

		/* Without a sound page there is no trustworthy link to follow. */
		if (PageIsNew(page))
			bloomidx_report_corrupted_page(index, blkno, "The pending list leads to a new page.");
		uint32		room = 0;

		if (page_is_sound(index, blkno, page, &g))
		{
			if (callback)
				stats->tuples_removed +=
					compact_page(index, buffer, &g, callback, callback_state);
			uint32		count = bloomidx::page_opaque((uint8 *) page)->count;

			stats->num_index_tuples += count;
			room = bloomidx::row_page_free_bytes(g, count);
		}
		UnlockReleaseBuffer(buffer);
		/* Inserts find the space freed here (none in a damaged page). */
		RecordPageWithFreeSpace(index, blkno, room);
		bloomidx_pending_walk_follow(&walk, next);
	}
	/* VACUUM holds the seal lock: the list can only have grown since the copy. */
	(void) bloomidx_check_pending_count(index, dir, walk.visited);
	bloomidx_directory_copy_free(dir);
	stats->num_pages = nblocks;
	IndexFreeSpaceMapVacuum(index);
}

IndexBulkDeleteResult *
bloomidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	/* The seal lock: no seal frees pending pages under the walk (storage/seal.cpp). */
	LockPage(info->index, bloomidx::kMetaBlock, ExclusiveLock);
	/* Pending pages given room must leave the pending groups first (pending_filters.cpp). */
	bloomidx_pending_filters_drop(info->index);

	/*
	 * The live counts of entries on directory pages are lowered in place,
	 * within a generation, and scans keep those pages' entries for a
	 * generation (header_cache.cpp): when this pass lowered one, the
	 * generation moves on after it, so that what scans kept before goes
	 * before the table's truncation could leave a dead row's TID past the
	 * table's end.  Enough: a scan holds the table while it runs, the
	 * truncation needs it alone, and the heap truncates no dead row's page
	 * before an index pass that ends here (a pass cut short by a crash or
	 * a cancel leaves its rows LP_DEAD, for the next one).  (A review of
	 * the change, which tried it on a primary and a standby.)
	 */
	bool		page_entry_lowered = false;

	visit_pages(info, stats, callback, callback_state, &page_entry_lowered);
	if (page_entry_lowered)
		(void) bloomidx_publish_generation(info->index);
	UnlockPage(info->index, bloomidx::kMetaBlock, ExclusiveLock);
	return stats;
}

IndexBulkDeleteResult *
bloomidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	LockPage(info->index, bloomidx::kMetaBlock, ExclusiveLock);
	/* VACUUM seals what is pending and moves pending pages: the pending groups go first. */
	bloomidx_pending_filters_drop(info->index);
	/* Segments mostly dead are merged (their runs of slices freed first, for the seals). */
	bloomidx_merge_segments(info->index, info->strategy);
	/* Pending rows become segments (beyond the tail, an eighth of a segment's or more), */
	bloomidx_seal_all(info->index, bloomidx_vacuum_seal_threshold(bloomidx_cached_meta(info->index)));
	/* and the rest one more (the tail too, in an index of a segment's worth), but in a small index. */
	bloomidx_vacuum_flush(info->index);
	/* No bulkdelete ran (nothing to remove): count and record free space. */
	if (stats == NULL)
	{
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
		visit_pages(info, stats, NULL, NULL, NULL);
	}
	/* Pages a crashed or failed seal or merge left behind are freed. */
	bloomidx_sweep(info->index, info->strategy, stats);
	/*
	 * The segments that end the index move to free blocks before them, and
	 * the free pages that then end it go back to the file system (after the
	 * seal lock: truncate.cpp).  Not in a parallel VACUUM, which cannot
	 * truncate.
	 */
	if (!IsInParallelMode())
		bloomidx_move_last_segments(info->index, info->strategy, stats->pages_free);
	/*
	 * The small filter groups seals and merges left, gathered (a query reads
	 * each group): after the sweep, which frees what a crash left (a
	 * gathered group not yet published keeps its id until then) and fills
	 * the free space map the new group's pages come from; after the moves,
	 * which take a segment's own group along but not one it shares, and
	 * which leave the last segment where the gathered group's pages are
	 * taken before (filter_gather.cpp), so as not to end the index.
	 */
	bloomidx_gather_filter_groups(info->index, info->strategy);
	/* A full directory left rows pending, whose groups went before the seals. */
	bloomidx_pending_filters_if_full(info->index);
	UnlockPage(info->index, bloomidx::kMetaBlock, ExclusiveLock);
	bloomidx_truncate_free_tail(info, stats);
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	return stats;
}
