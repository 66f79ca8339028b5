/*
 * sweep.cpp: VACUUM's sweep of pages nothing points at (src/segments.md,
 * "Crashes").
 *
 * A crash between writing a segment and publishing it leaves the
 * segment's pages unreferenced; one between publishing and freeing leaves
 * the sealed pending pages (marked as being sealed) or a merged segment's
 * header, live and TID pages so.  They cost space, never rows.  Holding
 * the seal lock (no seal or merge writes meanwhile), VACUUM marks every
 * block something points at (the metapage, each listed segment's header,
 * live page, TID pages and slices, the free list, the pending list), then
 * reads the others: a segment page or a page marked as being sealed there
 * is an orphan and is freed; free and new pages go back to the free space
 * map (which is not crash-safe).  Pending pages outside the list are left
 * alone: an insert may have linked one at the tail since the walk, and a
 * pending page is never orphaned (it is linked in the record that makes
 * it).  A damaged page is left too: VACUUM warns elsewhere.
 */
#include "bloomidx.h"

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
mark_segment(Relation index, const bloomidx::SegmentEntry *e, uint32 nslices, UsedBlocks *used,
			 BufferAccessStrategy strategy)
{
	mark_used(used, e->first_slice, nslices);
	mark_used(used, e->header_block, 1);

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, e->header_block, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		sound = bloomidx::check_segment_page(page, e->segment_id, e->rows, e->first_slice,
													 nslices, used->nblocks) ==
		bloomidx::PageProblem::None;

	if (sound)
	{
		const bloomidx::SegmentHeader *h = bloomidx::segment_header(page);

		mark_used(used, h->live_block, 1);
		for (uint32 p = 0; p < h->ntid_pages; p++)
			mark_used(used, h->tid_blocks[p], 1);
	}
	UnlockReleaseBuffer(buffer);
	return sound;
}

/*
 * Frees the orphans and records the free pages; the caller holds the seal
 * lock.  Counts the orphans freed in stats->pages_newly_deleted, and every
 * free page in pages_deleted and pages_free (VACUUM VERBOSE shows them).
 */
void
bloomidx_sweep(Relation index, BufferAccessStrategy strategy, IndexBulkDeleteResult *stats)
{
	DirectoryCopy *dir = (DirectoryCopy *) palloc(sizeof(DirectoryCopy));
	uint32		nslices = bloomidx_cached_meta(index)->signature_bits;
	UsedBlocks	used;
	bool		all_sound = true;
	BlockNumber nblocks;

	/*
	 * The length under the extension lock, as btvacuumscan reads it: an
	 * insert extends the index and locks its new page before it lets go of
	 * that lock, so every page below this length that is still new is
	 * locked by its extender until linked, and reading it waits for that.
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
	for (uint32 i = 0; i < dir->free.count && i < bloomidx::kMaxFreeExtents; i++)
		mark_used(&used, dir->free.extents[i].first, dir->free.extents[i].nblocks);

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
			 kind == bloomidx::kPageLive);

		UnlockReleaseBuffer(buffer);
		if (orphan)
		{
			bloomidx_free_page(index, b, dir->header.generation);
			stats->pages_newly_deleted++;
		}
		else if (free_page)
			RecordFreeIndexPage(index, b);
		/* As nbtree counts its recyclable pages: deleted, and free. */
		if (orphan || free_page)
		{
			stats->pages_deleted++;
			stats->pages_free++;
		}
	}
	if (stats->pages_free > 0)
		IndexFreeSpaceMapVacuum(index);
	pfree(used.bits);
	pfree(dir);
}
