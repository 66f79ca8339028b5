/*
 * directory.cpp: the metapage's second part (core/page_layout.hpp,
 * DirectoryHeader): the list of sealed segments and the list of pending
 * pages, as readers copy them (src/segments.md says why a copy is enough).
 */
#include "bloomidx.h"

/*
 * Copies the directory of the metapage (locked by the caller) and checks
 * it: the metapage whole, then each entry against the index's length, so
 * that a damaged entry is an error and never sends a scan elsewhere.
 */
static void
bloomidx_copy_directory(Relation index, Page metapage, BlockNumber nblocks, DirectoryCopy *copy)
{
	const uint8 *page = (const uint8 *) metapage;
	bloomidx::PageProblem problem = bloomidx::check_meta_page(page);

	if (problem != bloomidx::PageProblem::None)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock, problem);
	copy->header = *bloomidx::directory_header(page);
	memcpy(copy->entries, bloomidx::directory_entries(page),
		   copy->header.nsegments * sizeof(bloomidx::SegmentEntry));

	uint32		nslices = bloomidx::meta_data(page)->signature_bits;

	for (uint32 i = 0; i < copy->header.nsegments; i++)
		if (!bloomidx::segment_entry_ok(copy->entries[i], nslices, nblocks))
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
										   psprintf("Segment directory entry %u is damaged.", i));
	if (copy->header.pending_head >= nblocks || copy->header.pending_tail >= nblocks)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
									 bloomidx::PageProblem::BadDirectory);
}

/* Copies the directory as it is now (a short share lock of the metapage). */
void
bloomidx_read_directory(Relation index, BlockNumber nblocks, DirectoryCopy *copy)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	bloomidx_copy_directory(index, BufferGetPage(buffer), nblocks, copy);
	UnlockReleaseBuffer(buffer);
}

/* The directory's generation now (a short share lock of the metapage). */
uint32
bloomidx_directory_generation(Relation index)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	uint32		generation =
		bloomidx::directory_header((const uint8 *) BufferGetPage(buffer))->generation;

	UnlockReleaseBuffer(buffer);
	return generation;
}

/*
 * Raises ERRCODE_INDEX_CORRUPTED unless page is a sound pending page whose
 * entries (those `entries` says) match its sums.
 */
void
bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
						 const bloomidx::RowPageGeometry *geometry,
						 bloomidx::EntryChecks entries)
{
	bloomidx::PageProblem problem =
		bloomidx::check_row_page((const uint8 *) page, *geometry, entries);

	if (problem != bloomidx::PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
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
