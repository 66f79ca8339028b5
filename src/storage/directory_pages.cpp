/*
 * directory_pages.cpp: the segment directory past the metapage's inline
 * entries (core/page_layout.hpp, "Directory pages"): reading them into a
 * copy, and writing them copy-on-write for a publish or a build.
 *
 * Why copy-on-write: a publish that removes segments moves every entry
 * after them, which may change many directory pages, and one WAL record
 * covers at most four pages.  So the changed pages are written to other
 * blocks first (nothing points at them yet: a crash leaves orphans that
 * VACUUM's sweep frees), and the publish's one metapage record switches
 * the list of pages.  Readers copy the pages while they hold the
 * metapage's share lock, which a publish's exclusive lock waits for, so
 * no reader ever meets a page the switch replaced, and the replaced pages
 * can be freed right after it.
 */
#include "storage/storage.h"

/* A copy to fill, its entries made in the current memory context when needed. */
void
bloomidx_directory_copy_init(DirectoryCopy *copy)
{
	memset(copy, 0, sizeof(*copy));
	copy->cxt = CurrentMemoryContext;
}

/*
 * A scan's copy: its entries in the backend's scan scratch (support.h),
 * so valid until the scan's amgetbitmap call returns, and never freed.
 */
void
bloomidx_directory_copy_init_scratch(DirectoryCopy *copy)
{
	bloomidx_directory_copy_init(copy);
	copy->scratch = true;
}

DirectoryCopy *
bloomidx_directory_copy_new(void)
{
	DirectoryCopy *copy = (DirectoryCopy *) palloc(sizeof(DirectoryCopy));

	bloomidx_directory_copy_init(copy);
	return copy;
}

void
bloomidx_directory_copy_free(DirectoryCopy *copy)
{
	if (copy->entries != NULL && !copy->scratch)
		pfree(copy->entries);
	pfree(copy);
}

/* Room for n entries in the copy (its memory is reused when large enough). */
void
bloomidx_directory_copy_room(DirectoryCopy *copy, uint32 n)
{
	uint32		room = Max(n, bloomidx::kInlineSegments);

	/* Asked each time: another scan may have grown the scratch since. */
	if (copy->scratch)
	{
		copy->entries = (bloomidx::SegmentEntry *)
			bloomidx_scan_scratch(SCRATCH_DIRECTORY, room * sizeof(bloomidx::SegmentEntry));
		copy->capacity = room;
		return;
	}
	if (copy->capacity >= n && copy->entries != NULL)
		return;
	if (copy->entries != NULL)
		pfree(copy->entries);
	copy->entries = NULL;
	copy->capacity = 0;
	copy->entries = (bloomidx::SegmentEntry *)
		MemoryContextAlloc(copy->cxt, room * sizeof(bloomidx::SegmentEntry));
	copy->capacity = room;
}

/*
 * Copies the entries of the directory pages copy->pages lists into
 * copy->entries from kInlineSegments on, each page checked.  The metapage
 * is not locked meanwhile: a page replaced since the copy of the metapage
 * was taken is told by its kind or its stamp (a directory page is stamped
 * with the generation that listed it first, a freed page with a later
 * one), and then the directory's generation has moved: false, the caller
 * copies again.  Otherwise a page that fails is damage, an error, never a
 * segment left out.
 */
bool
bloomidx_read_directory_pages(Relation index, BlockNumber *nblocks, DirectoryCopy *copy)
{
	uint32		n = copy->header.nsegments;

	for (uint32 p = 0; p < copy->pages.count; p++)
	{
		BlockNumber blkno = copy->pages.blocks[p];

		if (blkno >= *nblocks)
			*nblocks = RelationGetNumberOfBlocks(index);
		if (blkno >= *nblocks)
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
										   psprintf("Directory page %u lies past the index's end.", p));

		Buffer		buffer = ReadBuffer(index, blkno);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		uint32		count = bloomidx::directory_page_count(n, p);
		bloomidx::PageProblem problem =
			bloomidx::check_directory_page(page, (uint16) count, (uint16) p);
		bool		later = bloomidx::page_stamp(page) > copy->header.generation;

		if (problem == bloomidx::PageProblem::None && !later)
			memcpy(&copy->entries[bloomidx::kInlineSegments + p * bloomidx::kDirectoryPageEntries],
				   bloomidx::directory_page_entries(page), count * sizeof(bloomidx::SegmentEntry));
		UnlockReleaseBuffer(buffer);
		if (problem == bloomidx::PageProblem::None && !later)
			continue;
		if (bloomidx_directory_generation(index) != copy->header.generation)
		{
			ereport(DEBUG1,
					(errmsg_internal("bloomidx: copy of the directory of index \"%s\" starts again: a publish replaced directory page %u",
									 RelationGetRelationName(index), p)));
			return false;
		}
		if (problem != bloomidx::PageProblem::None)
			bloomidx_report_page_problem(index, blkno, problem);
		bloomidx_report_corrupted_page(index, blkno,
									   "A directory page is stamped with a later generation than the directory's.");
	}
	return true;
}

/*
 * Writes directory page `place` of `count` entries to a free or new block,
 * stamped with the generation that will list it.
 */
static BlockNumber
write_directory_page(Relation index, const bloomidx::SegmentEntry *entries, uint32 count,
					 uint32 place, uint32 generation)
{
	Buffer		buffer = bloomidx_free_or_new_buffer(index);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Page		page = BufferGetPage(buffer);

	START_CRIT_SECTION();
	PageInit(page, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::directory_page_fill((uint8 *) page, entries, (uint16) count, (uint16) place);
	bloomidx::set_page_stamp((uint8 *) page, generation);
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
	return blkno;
}

/*
 * The directory pages of entries[0..n) (the whole directory, inline
 * entries first) into *out: a page whose entries are those of the same
 * page of the old directory (old_entries[0..old_n), pages *old) keeps its
 * block, the others are written to free or new blocks, stamped with
 * `generation`, the one whose publish lists them.  Raises an error past
 * kMaxSegments (callers stop before).
 */
void
bloomidx_write_directory_pages(Relation index, const bloomidx::SegmentEntry *entries, uint32 n,
							   const bloomidx::SegmentEntry *old_entries, uint32 old_n,
							   const bloomidx::DirectoryPageList *old, uint32 generation,
							   bloomidx::DirectoryPageList *out)
{
	if (n > bloomidx::kMaxSegments)
		elog(ERROR, "bloomidx: index \"%s\" would have more than %u segments",
			 RelationGetRelationName(index), bloomidx::kMaxSegments);
	bloomidx::directory_page_list_init(out);
	out->count = (uint16) bloomidx::directory_pages(n);
	for (uint32 p = 0; p < out->count; p++)
	{
		uint32		first = bloomidx::kInlineSegments + p * bloomidx::kDirectoryPageEntries;
		uint32		count = bloomidx::directory_page_count(n, p);

		if (p < old->count && bloomidx::directory_page_count(old_n, p) == count &&
			memcmp(&entries[first], &old_entries[first],
				   count * sizeof(bloomidx::SegmentEntry)) == 0)
			out->blocks[p] = old->blocks[p];
		else
			out->blocks[p] = write_directory_page(index, &entries[first], count, p, generation);
	}
	out->check = bloomidx::directory_page_list_check(*out);
}

/* Frees the directory pages of *old that *now no longer lists. */
void
bloomidx_free_directory_pages(Relation index, const bloomidx::DirectoryPageList *old,
							  const bloomidx::DirectoryPageList *now, uint32 generation)
{
	for (uint32 p = 0; p < old->count; p++)
	{
		bool		kept = false;

		for (uint32 q = 0; q < now->count && !kept; q++)
			kept = now->blocks[q] == old->blocks[p];
		if (!kept)
		{
			bloomidx_free_page(index, old->blocks[p], generation);
			/* Findable at once (the map's upper levels learn of it): the next publish takes it. */
			FreeSpaceMapVacuumRange(index, old->blocks[p], old->blocks[p] + 1);
		}
	}
}

/*
 * The page holding directory entry `slot` of a copy, and the entry's place
 * on it: the metapage for inline entries.
 */
BlockNumber
bloomidx_directory_entry_block(const DirectoryCopy *copy, uint32 slot, uint32 *place)
{
	if (slot < bloomidx::kInlineSegments)
	{
		*place = slot;
		return bloomidx::kMetaBlock;
	}
	*place = (slot - bloomidx::kInlineSegments) % bloomidx::kDirectoryPageEntries;
	return copy->pages.blocks[(slot - bloomidx::kInlineSegments) / bloomidx::kDirectoryPageEntries];
}
