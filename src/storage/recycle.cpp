/*
 * recycle.cpp: pages freed while readers may still hold an older copy of
 * the directory that names them (storage/README.md, "Reading").
 *
 * A reader copies the directory once and then follows the blocks it
 * names without holding a lock across them; the seal lock's holder may
 * meanwhile publish a change and free the blocks it unlinked, and an
 * insert may take such a page for the pending list.  Each freed page is
 * stamped with the generation of the publish that unlinked it, and the
 * directory's generation moves on with every publish, so a reader that
 * meets a page that fails its check asks whether the generation moved
 * since its copy: then the page was recycled and it starts again, else
 * the page is damaged.  Every writer frees through here, every reader
 * asks through here; nothing here calls the rest of storage.
 */
#include "storage/storage.h"

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

/* How a page failed its check: reused since the directory was copied, or damaged. */
bool
bloomidx_page_was_recycled(Relation index, BlockNumber blkno, uint32 generation,
						   bloomidx::PageProblem problem)
{
	if (bloomidx_directory_generation(index) != generation)
		return true;
	bloomidx_report_page_problem(index, blkno, problem);
	return false;				/* not reached */
}

/*
 * Frees a page no list or segment points at any more, stamped with the
 * generation that unlinked it (so that a scan holding an older directory
 * copy that meets it starts again), and records it in the free space map.
 */
void
bloomidx_free_page(Relation index, BlockNumber blkno, uint32 generation)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *page = (uint8 *) GenericXLogRegisterBuffer(xlog, buffer, GENERIC_XLOG_FULL_IMAGE);

	PageInit((Page) page, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::free_page_fill(page);
	bloomidx::set_page_stamp(page, generation);
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(buffer);
	RecordFreeIndexPage(index, blkno);
}
