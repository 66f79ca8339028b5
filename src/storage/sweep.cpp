/*
 * sweep.cpp: VACUUM's sweep of pages nothing points at (storage/README.md,
 * "Crashes").
 *
 * A crash between writing a segment (or directory pages) and publishing it
 * leaves those pages unreferenced; one between publishing and freeing leaves
 * the sealed pending pages (marked as being sealed) or a merged segment's
 * header, live and TID pages so.  They cost space, never rows.  Holding
 * the seal lock (no seal or merge writes meanwhile), VACUUM marks every
 * block something points at (the metapage, the directory pages, each listed
 * segment's header, live page, TID pages and slices and its filter group,
 * the free list, the pending list, the pending groups), then
 * reads the others: a segment or filter group page or a page marked as
 * being sealed there is an orphan and is freed (a group whose segments a
 * merge removed, too); free and new pages go back to the free space
 * map (which is not crash-safe).  Pending pages outside the list are left
 * alone: an insert may have linked one at the tail since the walk, and a
 * pending page is never orphaned (it is linked in the record that makes
 * it).  A damaged page is left too: VACUUM warns elsewhere.
 */
#include "storage/storage.h"

typedef struct UsedBlocks
{
	uint8	   *bits;
	BlockNumber nblocks;
} UsedBlocks;

static void
mark_used(UsedBlocks *used, BlockNumber first, BlockNumber n)
{
	for (BlockNumber b = first; b < first + n && b < used->nblocks; b++)
		used->bits[b / 8] |= (uint8) (1 << (b % 8));
}

static void
mark_unused(UsedBlocks *used, BlockNumber first, BlockNumber n)
{
	for (BlockNumber b = first; b < first + n && b < used->nblocks; b++)
		used->bits[b / 8] &= (uint8) ~(1 << (b % 8));
}

static bool
is_used(const UsedBlocks *used, BlockNumber b)
{
	return (used->bits[b / 8] >> (b % 8)) & 1;
}

/*
 * Marks a listed segment's blocks: its slices and header from the entry,
 * its live and TID pages from the header (if sound: else nothing is freed
 * on its account, as its pages cannot be told).  False if the header is
 * damaged.
 */
static bool
mark_filter_group(Relation index, const bloomidx::SegmentEntry *e, UsedBlocks *used,
				  BufferAccessStrategy strategy)
{
	if (e->filter_block == 0 || is_used(used, e->filter_block))
		return true;			/* none, or marked for another of its segments */

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, e->filter_block, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		sound = bloomidx::check_filter_group_page(page, e->filter_group,
														  (uint32) RelationGetNumberOfAttributes(index),
														  e->filter_block, used->nblocks) ==
		bloomidx::PageProblem::None;

	if (sound)
	{
		mark_used(used, e->filter_block, 1);
		for (uint32 i = 0; i < bloomidx::filter_group_header(page)->region_pages; i++)
			mark_used(used, bloomidx::group_region_block(page, e->filter_block, i), 1);
	}
	UnlockReleaseBuffer(buffer);
	return sound;
}

static bool
mark_segment(Relation index, const bloomidx::SegmentEntry *e, uint32 nslices, UsedBlocks *used,
			 BufferAccessStrategy strategy)
{
	mark_used(used, e->first_slice, bloomidx::slice_page_count(nslices, e->slices_per_page));
	mark_used(used, e->header_block, 1);

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, e->header_block, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		sound = bloomidx::check_segment_page(page, e->segment_id, e->rows, e->first_slice,
													 nslices, e->slices_per_page,
													 RelationGetNumberOfAttributes(index),
													 e->header_block, used->nblocks) ==
		bloomidx::PageProblem::None;

	if (sound)
	{
		const bloomidx::SegmentHeader *h = bloomidx::segment_header(page);

		mark_used(used, h->live_block, 1);
		for (uint32 p = 0; p < h->ntid_pages; p++)
			mark_used(used, h->tid_blocks[p], 1);
		/* Key pages (format 16) lie between the TID pages and the header. */
		if (h->key_pages > 0 && (uint64) h->live_block + 1 + h->ntid_pages + h->key_pages <= used->nblocks)
			mark_used(used, h->live_block + 1 + h->ntid_pages, h->key_pages);
	}
	UnlockReleaseBuffer(buffer);
	return sound && mark_filter_group(index, e, used, strategy);
}

/*
 * Makes free page blkno a listed one, if it is still free or new (an
 * insert may have taken it from the free space map since it was read).
 */
static bool
claim_page(Relation index, BlockNumber blkno, BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	Page		page = BufferGetPage(buffer);
	bool		is_new = PageIsNew(page);

	if (!is_new && bloomidx::check_free_page((const uint8 *) page) != bloomidx::PageProblem::None)
	{
		UnlockReleaseBuffer(buffer);
		return false;
	}
	GenericXLogState *xlog = GenericXLogStart(index);
	Page		logged = GenericXLogRegisterBuffer(xlog, buffer, is_new ? GENERIC_XLOG_FULL_IMAGE : 0);

	if (is_new)
		PageInit(logged, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::listed_page_fill((uint8 *) logged);
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(buffer);
	/* No longer offered to inserts, which would turn it down (a stale hint each time). */
	RecordUsedIndexPage(index, blkno);
	return true;
}

typedef struct FreeRun
{
	BlockNumber first;
	BlockNumber nblocks;
} FreeRun;

static int
longer_first(const void *a, const void *b)
{
	BlockNumber la = ((const FreeRun *) a)->nblocks, lb = ((const FreeRun *) b)->nblocks;

	return la > lb ? -1 : la < lb ? 1 : 0;
}

/*
 * Puts the longest runs of free pages (a segment's worth or more), or the
 * first pages of one longer than the budget below, back on the
 * metapage's free list, where segments can take them: blocks that
 * removed segments gave back when the list had no room, or pages sealed
 * pending pages left.  Extents on the list too short for any segment go
 * the other way, to the free space map, where pending pages take them.
 * Without this, removals scattered over more places than the list has
 * slots would grow the index round after round.  But pending pages come
 * from the free space map alone: as many free pages as the pending list
 * holds and a segment's worth of rows takes stay there, so that a table
 * deleted and loaded again finds its pending pages there, not at the
 * index's end (gathering them grew the index by a load's pending pages
 * every cycle, while the list held blocks no segment needed), and none is
 * gathered while the list has blocks for a few full segments already.
 * Claimed pages become
 * "listed" first, which no insert takes; a crash before the publish
 * leaves them unreferenced, and the next sweep frees them.  The caller
 * holds the seal lock: the list is the copy's.  Claimed blocks leave
 * *free_blocks.
 */
/* Runs are gathered only while the list has blocks for fewer full segments than this. */
#define GATHER_BELOW_SEGMENTS 4

static void
gather_free_runs(Relation index, const DirectoryCopy *dir, UsedBlocks *free_blocks,
				 BufferAccessStrategy strategy)
{
	uint32		min_run = bloomidx_segment_min_blocks(bloomidx_cached_meta(index));
	bloomidx::FreeExtent short_extents[bloomidx::kMaxFreeExtents];
	/* Gaps joined to listed extents (two an extent at most), then runs. */
	bloomidx::FreeExtent new_extents[3 * bloomidx::kMaxFreeExtents];
	uint32		nshort_extents = 0,
				nnew_extents = 0,
				nnew_runs = 0;	/* of them, runs: each takes a slot of the list */

	/*
	 * Full segments the list has blocks for, in blocks (whatever
	 * bloomidx.segment_rows this session has): extents for many small
	 * segments are not blocks for a few full ones, and a load of a few
	 * full segments' rows seals many small ones.
	 */
	const uint32 full_run =
		bloomidx_segment_blocks_for_rows(bloomidx_cached_meta(index), bloomidx::kSegmentRows);
	uint64		listed_blocks = 0;

	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents; i++)
	{
		/* (Short extents leave the list below: not blocks for segments.) */
		if (dir->free.extents[i].nblocks < min_run)
			short_extents[nshort_extents++] = dir->free.extents[i];
		else
			listed_blocks += dir->free.extents[i].nblocks;
	}

	uint32		room = bloomidx::kMaxFreeExtents - dir->free.count + nshort_extents;

	/* Free pages kept for pending pages: the list's and a segment's worth of rows'. */
	uint64		nfree = 0;

	for (BlockNumber b = 1; b < free_blocks->nblocks; b++)
		nfree += is_used(free_blocks, b);

	uint32		page_capacity = bloomidx_cached_meta(index)->capacity;
	uint64		reserve = (uint64) dir->header.pending_pages +
		(bloomidx_segment_capacity(page_capacity) + page_capacity - 1) / page_capacity;
	uint64		budget = nfree > reserve ? nfree - reserve : 0;

	/*
	 * A gap of free pages shorter than a segment right before or after a
	 * listed extent long enough to keep joins it (free_list_push joins
	 * adjacent blocks, taking no slot), within the budget: the blocks a
	 * sealed segment's own filter group took after its header, freed page
	 * by page when VACUUM gathered the group (filter_gather.cpp), would
	 * otherwise split the extent its removal gives back from the next one,
	 * and the index would grow for want of runs.  Longer runs are gathered
	 * below, by the rules for runs, each in a slot of the list (`room`);
	 * the gaps take none, so they must not count against it: with small
	 * segments (bloomidx.segment_rows 1,000) they filled it, no run was
	 * listed again, and a table deleted and loaded again grew by 540 pages
	 * a cycle.
	 */
	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents &&
		 nnew_extents + 2 <= 2 * bloomidx::kMaxFreeExtents; i++)
	{
		const bloomidx::FreeExtent x = dir->free.extents[i];

		if (x.nblocks < min_run)
			continue;
		for (int side = 0; side < 2; side++)
		{
			/* The gap: [first, first + n), after the extent or before it. */
			BlockNumber first = x.first + x.nblocks;
			BlockNumber n = 0;

			if (side == 0)
				while (first + n < free_blocks->nblocks && is_used(free_blocks, first + n))
					n++;
			else
			{
				first = x.first;
				while (first > 1 && is_used(free_blocks, first - 1))
				{
					first--;
					n++;
				}
			}
			if (n == 0 || n >= min_run || n > budget)
				continue;

			/* Page by page, from the extent out; an insert may have taken one since. */
			BlockNumber claimed = 0;

			while (claimed < n)
			{
				bloomidx_vacuum_delay_point();
				if (!claim_page(index, side == 0 ? first + claimed : first + n - 1 - claimed,
								strategy))
					break;
				claimed++;
			}
			if (claimed == 0)
				continue;
			budget -= claimed;
			new_extents[nnew_extents++] = side == 0
				? bloomidx::FreeExtent{first, claimed}
				: bloomidx::FreeExtent{first + n - claimed, claimed};
			mark_unused(free_blocks, new_extents[nnew_extents - 1].first, claimed);
		}
	}

	FreeRun    *runs = (FreeRun *) palloc(sizeof(FreeRun) * (free_blocks->nblocks / min_run + 1));
	uint32		nruns = 0;

	for (BlockNumber b = 1; b < free_blocks->nblocks;)
	{
		BlockNumber end = b;

		while (end < free_blocks->nblocks && is_used(free_blocks, end))
			end++;
		if (end - b >= min_run)
			runs[nruns++] = FreeRun{b, end - b};
		b = end + 1;
	}
	qsort(runs, nruns, sizeof(FreeRun), longer_first);

	/* The list holds blocks for the next segments already: nothing more to gather. */
	if (listed_blocks >= (uint64) GATHER_BELOW_SEGMENTS * full_run)
		budget = 0;

	for (uint32 r = 0; r < nruns && nnew_runs < room; r++)
	{
		/*
		 * A run longer than the budget left gives its first blocks, if a
		 * segment's worth: its end stays free, for pending pages or the
		 * truncation.  Skipping it instead left the merges of small
		 * segments (a trickle of rows, VACUUM after each) no extent, so
		 * each wrote its segment past the end while the last one's blocks
		 * joined the run: the run and the file grew by a segment a VACUUM,
		 * without end.  Runs come longest first, so the longest takes the
		 * budget where a shorter one would have fitted whole before.  (The
		 * budget is spent on the run even where an insert took a page of
		 * it meanwhile and less is claimed.)
		 */
		BlockNumber take = (BlockNumber) Min((uint64) runs[r].nblocks, budget);

		if (take < min_run)
			continue;
		budget -= take;
		/* Page by page; an insert may have taken one since: the run splits there. */
		BlockNumber start = runs[r].first;
		BlockNumber end = runs[r].first + take;

		for (BlockNumber b = start; b <= end; b++)
		{
			bloomidx_vacuum_delay_point();
			if (b < end && nnew_runs < room && claim_page(index, b, strategy))
				continue;
			/* [start, b) claimed: listed if long enough, else free again. */
			if (b - start >= min_run && nnew_runs < room)
			{
				new_extents[nnew_extents++] = bloomidx::FreeExtent{start, b - start};
				nnew_runs++;
			}
			else
				for (BlockNumber u = start; u < b; u++)
					bloomidx_free_page(index, u, dir->header.generation);
			start = b + 1;
		}
	}
	pfree(runs);
	if (nnew_extents == 0 && nshort_extents == 0)
		return;

	uint32		generation = bloomidx_publish_free_extents(index, new_extents, nnew_extents,
														   short_extents, nshort_extents);

	for (uint32 i = 0; i < nnew_extents; i++)
		mark_unused(free_blocks, new_extents[i].first, new_extents[i].nblocks);
	/* The unlisted extents' pages, free for pending pages now (bloomidx_free_page records them). */
	for (uint32 i = 0; i < nshort_extents; i++)
		for (BlockNumber b = short_extents[i].first; b < short_extents[i].first + short_extents[i].nblocks; b++)
			bloomidx_free_page(index, b, generation);
}

/*
 * Frees the orphans and records the free pages; the caller holds the seal
 * lock.  Counts the orphans freed in stats->pages_newly_deleted, and every
 * free page in pages_deleted and pages_free (VACUUM VERBOSE shows them).
 */
void
bloomidx_sweep(Relation index, BufferAccessStrategy strategy, IndexBulkDeleteResult *stats)
{
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	uint32		nslices = bloomidx_cached_meta(index)->signature_bits;
	UsedBlocks	used;
	bool		all_sound = true;
	BlockNumber nblocks;

	/*
	 * The length under the extension lock, as btvacuumscan reads it: an
	 * insert extends the index and locks its new page before it lets go of
	 * that lock, so every page below this length that is still new is
	 * locked by its extender until linked, and reading it waits for that.
	 * A segment writer leaves its new blocks unlocked until it writes them,
	 * but writers hold the seal lock, as this sweep does (and CREATE INDEX
	 * keeps VACUUM out), so none is at work now.
	 */
	if (!RELATION_IS_LOCAL(index))
		LockRelationForExtension(index, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(index);
	if (!RELATION_IS_LOCAL(index))
		UnlockRelationForExtension(index, ExclusiveLock);

	bloomidx_read_directory(index, &nblocks, dir);
	used.nblocks = nblocks;
	used.bits = (uint8 *) palloc0(nblocks / 8 + 1);
	mark_used(&used, bloomidx::kMetaBlock, 1);
	for (uint32 i = 0; i < dir->header.nsegments; i++)
		all_sound &= mark_segment(index, &dir->entries[i], nslices, &used, strategy);
	for (uint32 i = 0; i < dir->pages.count; i++)
		mark_used(&used, dir->pages.blocks[i], 1);
	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents; i++)
		mark_used(&used, dir->free.extents[i].first, dir->free.extents[i].nblocks);

	/*
	 * The pending groups' pages: VACUUM drops the groups before it sweeps,
	 * under the same seal lock, so there are none here today.  Were there
	 * any, nothing would be freed: a damaged header would leave the rest of
	 * the chain unmarked, and a later drop would free its pages again.
	 */
	uint32		ngroup_pages;
	BlockNumber *group_pages = bloomidx_pending_filters_pages(index, &ngroup_pages);

	for (uint32 i = 0; i < ngroup_pages; i++)
		mark_used(&used, group_pages[i], 1);
	if (group_pages != NULL)
	{
		all_sound = false;
		pfree(group_pages);
	}

	/* The pending list, as the copy has it (pages linked since are pending pages, left alone). */
	PendingWalk walk;

	bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
	while (bloomidx_pending_walk_more(&walk))
	{
		bloomidx_vacuum_delay_point();
		mark_used(&used, walk.blkno, 1);
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, walk.blkno, RBM_NORMAL,
												strategy);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		bool		pending = !PageIsNew((Page) page) &&
			bloomidx::page_opaque(page)->page_id == bloomidx::kPageId &&
			bloomidx::is_pending_kind(bloomidx::page_opaque(page)->flags);

		bloomidx_pending_walk_follow(&walk, pending ? bloomidx::pending_next(page) : bloomidx::kMetaBlock);
		UnlockReleaseBuffer(buffer);
		if (!pending)
		{
			all_sound = false;	/* a damaged list: where the rest is cannot be told */
			break;
		}
	}

	/* With a damaged segment or list, orphans cannot be told: only free pages are recorded. */
	UsedBlocks	free_blocks;

	free_blocks.nblocks = used.nblocks;
	free_blocks.bits = (uint8 *) palloc0(used.nblocks / 8 + 1);
	for (BlockNumber b = 1; b < used.nblocks; b++)
	{
		if (is_used(&used, b))
			continue;
		bloomidx_vacuum_delay_point();
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, b, RBM_NORMAL, strategy);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		bool		free_page = PageIsNew((Page) page) ||
			bloomidx::check_free_page(page) == bloomidx::PageProblem::None;
		uint16		kind = PageIsNew((Page) page) ? 0 : bloomidx::page_opaque(page)->flags;
		bool		orphan = !free_page && all_sound &&
			bloomidx::page_opaque(page)->page_id == bloomidx::kPageId &&
			(kind == bloomidx::kPageSealing || kind == bloomidx::kPageSegment ||
			 kind == bloomidx::kPageSlice || kind == bloomidx::kPageTids ||
			 kind == bloomidx::kPageLive || kind == bloomidx::kPageKeys ||
			 kind == bloomidx::kPageListed ||
			 kind == bloomidx::kPageDirectory || kind == bloomidx::kPageFilterGroup ||
			 kind == bloomidx::kPageFilter);

		UnlockReleaseBuffer(buffer);
		if (orphan)
		{
			bloomidx_free_page(index, b, dir->header.generation);
			stats->pages_newly_deleted++;
		}
		/* As nbtree counts its recyclable pages: deleted, and free. */
		if (orphan || free_page)
		{
			mark_used(&free_blocks, b, 1);
			stats->pages_deleted++;
			stats->pages_free++;
		}
	}
	if (all_sound)
		gather_free_runs(index, dir, &free_blocks, strategy);
	for (BlockNumber b = 1; b < free_blocks.nblocks; b++)
		if (is_used(&free_blocks, b))
			RecordFreeIndexPage(index, b);
	if (stats->pages_free > 0)
		IndexFreeSpaceMapVacuum(index);
	pfree(free_blocks.bits);
	pfree(used.bits);
	bloomidx_directory_copy_free(dir);
}
