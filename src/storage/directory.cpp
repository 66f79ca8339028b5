/*
 * directory.cpp: the metapage's second and third parts
 * (core/page_layout.hpp, DirectoryHeader and FreeList): the list of sealed
 * segments, the list of pending pages and the extents of free blocks,
 * as readers copy them (storage/README.md says why a copy is enough), and as
 * the seal lock's holder changes them.
 */
#include "storage/storage.h"

/*
 * The first block a directory copy names past nblocks (an entry's, the
 * pending head's or tail's), as "entry i" in *what; none: false.
 */
static bool
names_block_past(const DirectoryCopy *copy, uint32 nslices, BlockNumber nblocks, int *entry)
{
	for (uint32 i = 0; i < copy->header.nsegments; i++)
		if (!bloomidx::segment_entry_ok(copy->entries[i], nslices, nblocks))
		{
			*entry = (int) i;
			return true;
		}
	*entry = -1;
	return copy->header.pending_head >= nblocks || copy->header.pending_tail >= nblocks;
}

/*
 * Copies the directory as it is now (the metapage under a short share
 * lock, then its directory pages one at a time, all again if a publish
 * replaced one meanwhile) and checks it: the metapage whole, each
 * directory page, then each entry and the pending list's ends against the
 * index's length, so that a damaged entry is an error and never sends a
 * scan elsewhere.  *nblocks: the length the caller read before; read again
 * when the copy names a block past it (a page added and linked meanwhile:
 * pages are added before the metapage names them), so it covers every
 * block the copy names.
 */
static void
read_directory(Relation index, BlockNumber *nblocks, DirectoryCopy *copy, bool kept)
{
	uint32		nslices;
	bool		from_cache = false;

	do
	{
		Buffer		buffer = bloomidx_lock_metapage(index, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);

		copy->header = *bloomidx::directory_header(page);
		bloomidx_directory_copy_room(copy, copy->header.nsegments);
		memcpy(copy->entries, bloomidx::directory_entries(page),
			   Min(copy->header.nsegments, bloomidx::kInlineSegments) *
			   sizeof(bloomidx::SegmentEntry));
		copy->pages = *bloomidx::directory_page_list(page);
		copy->free = *bloomidx::free_list(page);
		copy->pending_filters = *bloomidx::pending_filters(page);
		nslices = bloomidx::meta_data(page)->signature_bits;
		UnlockReleaseBuffer(buffer);
		if (copy->pages.count > 0)
			bloomidx_debug_pause(PAUSE_DIRECTORY_PAGES);
		from_cache = kept && copy->pages.count > 0 && bloomidx_cached_directory_pages(index, copy);
	} while (!from_cache && !bloomidx_read_directory_pages(index, nblocks, copy));

	/*
	 * Blocks the copy names are below the length now: the index shrinks only
	 * under its AccessExclusiveLock (truncate.cpp), so never under a reader.
	 */
	int			entry;

	if (names_block_past(copy, nslices, *nblocks, &entry))
	{
		*nblocks = RelationGetNumberOfBlocks(index);
		if (names_block_past(copy, nslices, *nblocks, &entry))
		{
			if (entry >= 0)
			{
				uint32		place;	/* the page that holds it is named */
				BlockNumber blkno = bloomidx_directory_entry_block(copy, (uint32) entry, &place);

				bloomidx_report_corrupted_page(index, blkno,
											   psprintf("Segment directory entry %d is damaged.", entry));
			}
			bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
										 bloomidx::PageProblem::BadDirectory);
		}
	}
}

/*
 * The directory as it is now (a publish reads it so, and so does every
 * caller that acts on its live counts).
 */
void
bloomidx_read_directory(Relation index, BlockNumber *nblocks, DirectoryCopy *copy)
{
	read_directory(index, nblocks, copy, false);
}

/*
 * The directory for a scan: the directory pages' entries from what this
 * backend kept of the same generation (header_cache.cpp), else read and
 * then kept.  A kept live count may be a running VACUUM's removals behind
 * (as a copy taken before that VACUUM would be): VACUUM moves the
 * generation on when it is done, before the table's truncation could
 * leave a dead row's TID past its end.
 */
void
bloomidx_read_directory_for_scan(Relation index, BlockNumber *nblocks, DirectoryCopy *copy)
{
	read_directory(index, nblocks, copy, true);
	if (copy->pages.count > 0)
		bloomidx_keep_directory_pages(index, copy);
}

/* One directory entry's share of DirectoryStats. */
static void
add_entry_stats(DirectoryStats *stats, const bloomidx::SegmentEntry *e)
{
	stats->segments++;
	stats->filtered_segments += e->filter_block != 0;
	stats->filter_groups += e->filter_block != 0 && e->filter_offset == 0;
	stats->segment_rows += e->rows;
	stats->live_rows += e->live_rows;
}

/*
 * What the planner needs of the directory (src/cost.cpp): segments (and those
 * with filters), their rows and live rows, and pending pages, read under a
 * short share lock of the metapage, as GIN's cost estimate reads its
 * metapage, then from the directory pages' entries this backend's scans
 * kept for the metapage's generation (header_cache.cpp), else from the
 * pages (one share lock at a time): once this backend has scanned the
 * generation, planning does not read more pages as the index grows.  Little is checked here: a damaged or replaced
 * directory only skews an estimate, and the scan that follows reports
 * damage.
 */
void
bloomidx_directory_stats(Relation index, DirectoryStats *stats)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	const bloomidx::DirectoryHeader *d = bloomidx::directory_header(page);
	bloomidx::DirectoryPageList pages = *bloomidx::directory_page_list(page);
	uint32		n = Min((uint32) d->nsegments, bloomidx::kInlineSegments);

	stats->segments = 0;
	stats->filtered_segments = 0;
	stats->filter_groups = 0;
	stats->segment_rows = 0;
	stats->live_rows = 0;
	for (uint32 i = 0; i < n; i++)
		add_entry_stats(stats, &bloomidx::directory_entries(page)[i]);
	stats->pending_pages = d->pending_pages;
	stats->pending_groups = bloomidx::pending_filters(page)->first_group != bloomidx::kMetaBlock;

	uint32		generation = d->generation,
				nsegments = d->nsegments;

	UnlockReleaseBuffer(buffer);

	const bloomidx::SegmentEntry *kept = bloomidx_kept_directory_entries(index, generation, nsegments);

	if (kept != NULL)
	{
		for (uint32 i = 0; i < nsegments - bloomidx::kInlineSegments; i++)
			add_entry_stats(stats, &kept[i]);
		return;
	}

	if (pages.check != bloomidx::directory_page_list_check(pages))
		return;

	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	for (uint32 p = 0; p < Min((uint32) pages.count, bloomidx::kMaxDirectoryPages); p++)
	{
		if (pages.blocks[p] == bloomidx::kMetaBlock || pages.blocks[p] >= nblocks)
			break;

		Buffer		dbuf = ReadBuffer(index, pages.blocks[p]);

		LockBuffer(dbuf, BUFFER_LOCK_SHARE);
		const uint8 *dpage = (const uint8 *) BufferGetPage(dbuf);
		const bloomidx::PageOpaque *op = bloomidx::page_opaque(dpage);

		if (!PageIsNew((Page) dpage) && op->page_id == bloomidx::kPageId &&
			op->flags == bloomidx::kPageDirectory)
		{
			uint32		count = Min((uint32) op->count, bloomidx::kDirectoryPageEntries);

			for (uint32 i = 0; i < count; i++)
				add_entry_stats(stats, &bloomidx::directory_page_entries(dpage)[i]);
		}
		UnlockReleaseBuffer(dbuf);
	}
}

/*
 * Where the pending list starts once the pages a seal took leave it: the
 * page its walk stopped at, else (it took the tail) the page an insert
 * linked behind that tail since (inserts skip a marked tail), or none: the
 * list is then empty (*empty).  Read under the metapage's lock, which an
 * insert holds to link a page, taking the two in its order: metapage, then
 * old tail.
 */
static BlockNumber
pending_head_after(Relation index, const uint8 *metapage, const DirectoryChange *change,
				   bool *empty)
{
	const bloomidx::DirectoryHeader *d = bloomidx::directory_header(metapage);

	*empty = false;
	if (change->new_head != bloomidx::kMetaBlock)
		return change->new_head;
	if (d->pending_tail == change->unlinked_last)
	{
		if (d->pending_pages != change->unlinked_pages)
			bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
										 bloomidx::PageProblem::BadDirectory);
		*empty = true;
		return bloomidx::kMetaBlock;
	}

	Buffer		buffer = ReadBuffer(index, change->unlinked_last);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	BlockNumber next = bloomidx::page_opaque(page)->flags == bloomidx::kPageSealing
		? bloomidx::pending_next(page) : bloomidx::kMetaBlock;

	UnlockReleaseBuffer(buffer);
	if (next == bloomidx::kMetaBlock || next >= RelationGetNumberOfBlocks(index))
		bloomidx_report_corrupted_page(index, change->unlinked_last,
									   "The pending list's tail that a seal took leads nowhere, though the metapage names another.");
	return next;
}

/*
 * Publishes a change of the directory in one WAL record of the metapage
 * and returns the directory's new generation (one more).  The added
 * segment's blocks (or a gathered group's run: taken_first) leave the free
 * list, the removed segments' blocks join
 * it (those it has no room for go to change->extents_to_free).  The directory
 * pages whose entries change are written first, to other blocks
 * (directory_pages.cpp), and the record switches to them; the ones
 * replaced are freed after it.  The caller holds the seal lock, which
 * every change of the entries, the free list and the directory pages
 * takes: they are as it read them, and are checked to be.
 */
uint32
bloomidx_publish(Relation index, DirectoryChange *change)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	DirectoryCopy *cur = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, cur);

	/*
	 * The entries after the change: the added one in the first hole, the
	 * last ones moved into the others (few directory pages change).
	 */
	uint32		n = cur->header.nsegments;
	bloomidx::SegmentEntry *after = (bloomidx::SegmentEntry *)
		palloc((n + 1) * sizeof(bloomidx::SegmentEntry));

	memcpy(after, cur->entries, n * sizeof(bloomidx::SegmentEntry));

	uint32		nafter = bloomidx::directory_apply(after, n, change->removed, change->nremoved,
												   change->added);

	if (nafter == UINT32_MAX || nafter > bloomidx::kMaxSegments ||
		(change->added != NULL &&
		 change->added->segment_id != cur->header.next_segment_id) ||
		(change->move_head && change->unlinked_pages > cur->header.pending_pages))
		elog(ERROR, "bloomidx: the directory of index \"%s\" changed under its seal lock",
			 RelationGetRelationName(index));

	/* Refiled entries name groups whose ids this change takes. */
	uint64		group_end = (uint64) cur->header.next_group_id + change->new_groups;

	if (group_end > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" has used up its filter group ids",
						RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	for (uint32 i = 0; i < change->nrefiled; i++)
		if (change->refiled[i].filter_group < cur->header.next_group_id ||
			change->refiled[i].filter_group >= group_end)
			elog(ERROR, "bloomidx: a filter group of index \"%s\" does not take the next group id",
				 RelationGetRelationName(index));
	if (change->nrefiled > 0 &&
		!bloomidx::directory_refile(after, nafter, change->refiled, change->nrefiled))
		elog(ERROR, "bloomidx: the directory of index \"%s\" changed under its seal lock",
			 RelationGetRelationName(index));

	/* Segment ids stay below the ids of filter groups of many segments. */
	if (change->added != NULL && cur->header.next_segment_id >= bloomidx::kFirstGroupId)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" has used up its segment ids",
						RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));

	/* The free list after the change. */
	bloomidx::FreeList list = cur->free;

	BlockNumber taken_at = change->added != NULL ? change->added->first_slice : change->taken_first;

	if (change->taken_blocks > 0 &&
		(taken_at == 0 || bloomidx::free_list_take(&list, change->taken_blocks) != taken_at))
		elog(ERROR, "bloomidx: the free list of index \"%s\" changed under its seal lock",
			 RelationGetRelationName(index));
	for (uint32 i = 0; i < change->nextents_to_unlist; i++)
		if (!bloomidx::free_list_drop(&list, change->extents_to_unlist[i].first, change->extents_to_unlist[i].nblocks))
			elog(ERROR, "bloomidx: the free list of index \"%s\" changed under its seal lock",
				 RelationGetRelationName(index));
	for (uint32 i = 0; i < change->nextents_to_list; i++)
		if (!bloomidx::free_list_push(&list, change->extents_to_list[i].first, change->extents_to_list[i].nblocks))
			elog(ERROR, "bloomidx: the free list of index \"%s\" changed under its seal lock",
				 RelationGetRelationName(index));

	/* The removed segments' blocks, one extent each if written in one piece. */
	change->nextents_to_free = 0;
	for (uint32 i = 0; i < n; i++)
	{
		const bloomidx::SegmentEntry *e = &cur->entries[i];
		bloomidx::FreeExtent extents[bloomidx::kMaxSegmentExtents];
		uint32		k = 0;

		while (k < change->nremoved && change->removed[k] != e->segment_id)
			k++;
		if (k == change->nremoved)
			continue;
		uint32		nx = bloomidx::segment_extents(change->removed_headers[k], e->header_block,
												   change->removed_group_blocks[k], extents);

		if (nx == 0)
			bloomidx_report_corrupted_page(index, e->header_block,
										   psprintf("The header of segment %u names a block twice.",
													e->segment_id));
		for (uint32 x = 0; x < nx; x++)
		{
			if (bloomidx::free_list_push(&list, extents[x].first, extents[x].nblocks))
				continue;
			/* Refused: no room, or blocks already listed, which is damage. */
			if (bloomidx::free_list_overlaps(list, extents[x].first, extents[x].nblocks))
				bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
											   psprintf("Blocks %u to %u of segment %u are on the free list already.",
														extents[x].first,
														extents[x].first + extents[x].nblocks - 1,
														e->segment_id));
			change->extents_to_free[change->nextents_to_free++] = extents[x];
		}
	}

	/*
	 * The pending groups, dropped where the pending list's head moves (a
	 * seal: their run must stay a run of the list) or the caller asks
	 * (VACUUM); the caller frees their pages after the record
	 * (bloomidx_publish_dropping_pending_filters).
	 */
	if (change->move_head && !change->drop_pending_filters)
		elog(ERROR, "bloomidx: a change of index \"%s\" moves the pending list's head but keeps its pending groups",
			 RelationGetRelationName(index));

	/* Everything checked: the directory pages that change, to other blocks. */
	bloomidx::DirectoryPageList pages;

	bloomidx_write_directory_pages(index, after, nafter, cur->entries, n, &cur->pages,
								   cur->header.generation + 1, &pages);
	if (pages.count > 0)
		bloomidx_seal_step(SEAL_STEP_DIRECTORY_WRITTEN);

	Buffer		meta = bloomidx_lock_metapage(index, BUFFER_LOCK_EXCLUSIVE);
	const uint8 *current = (const uint8 *) BufferGetPage(meta);

	if (bloomidx::directory_header(current)->nsegments != n ||
		memcmp(bloomidx::directory_entries(current), cur->entries,
			   Min(n, bloomidx::kInlineSegments) * sizeof(bloomidx::SegmentEntry)) != 0 ||
		memcmp(bloomidx::directory_page_list(current), &cur->pages, sizeof(cur->pages)) != 0 ||
		memcmp(bloomidx::free_list(current), &cur->free, sizeof(cur->free)) != 0)
		elog(ERROR, "bloomidx: the directory of index \"%s\" changed under its seal lock",
			 RelationGetRelationName(index));

	bool		list_emptied = false;
	BlockNumber new_head = change->move_head
		? pending_head_after(index, current, change, &list_emptied) : bloomidx::kMetaBlock;

	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *page = (uint8 *) GenericXLogRegisterBuffer(xlog, meta, 0);
	bloomidx::DirectoryHeader *d = bloomidx::directory_header(page);
	uint32		inline_after = Min(nafter, bloomidx::kInlineSegments);

	memcpy(bloomidx::directory_entries(page), after,
		   inline_after * sizeof(bloomidx::SegmentEntry));
	memset(&bloomidx::directory_entries(page)[inline_after], 0,
		   (bloomidx::kInlineSegments - inline_after) * sizeof(bloomidx::SegmentEntry));
	d->nsegments = (uint16) nafter;
	if (change->added != NULL)
		d->next_segment_id++;
	d->next_group_id += change->new_groups;
	if (change->move_head)
	{
		d->pending_head = new_head;
		d->pending_pages -= change->unlinked_pages;
		if (list_emptied)
			d->pending_tail = bloomidx::kMetaBlock;
	}
	d->generation++;
	d->check = bloomidx::directory_check(*d);
	*bloomidx::directory_page_list(page) = pages;
	*bloomidx::free_list(page) = list;
	if (change->drop_pending_filters)
		bloomidx::pending_filters_set(bloomidx::pending_filters(page), bloomidx::kMetaBlock, 0);

	uint32		generation = d->generation;

	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(meta);
	if (cur->pages.count > 0)
		bloomidx_seal_step(SEAL_STEP_DIRECTORY_SWITCHED);
	bloomidx_free_directory_pages(index, &cur->pages, &pages, generation);
	pfree(after);
	bloomidx_directory_copy_free(cur);
	return generation;
}

/*
 * Checks each extent of a directory copy's free list against its
 * segments (an index of nslices-bit signatures and nblocks blocks): a
 * damaged list is an ERROR before anything writes into, or cuts, the
 * blocks it names.
 */
void
bloomidx_check_free_list(Relation index, const DirectoryCopy *dir, uint32 nslices,
						 BlockNumber nblocks)
{
	for (uint32 i = 0; i < dir->free.count; i++)
		if (!bloomidx::free_extent_ok(dir->free, i, nslices, nblocks, dir->entries,
									  dir->header.nsegments))
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
										   psprintf("Extent %u of the metapage's free list overlaps pages in use.",
													i));
}

/*
 * Publishes no change but the generation's: VACUUM, after a pass that
 * lowered live counts on directory pages in place, so that no scan keeps
 * those pages' entries past its removals (header_cache.cpp).  Returns the
 * new generation.
 */
uint32
bloomidx_publish_generation(Relation index)
{
	return bloomidx_publish_free_extents(index, NULL, 0, NULL, 0);
}

/*
 * Publishes a change of the free list alone: extents taken off it whole,
 * then extents added; returns the new generation.
 */
uint32
bloomidx_publish_free_extents(Relation index, const bloomidx::FreeExtent *to_list, uint32 nlist,
							  const bloomidx::FreeExtent *to_unlist, uint32 nunlist)
{
	DirectoryChange change;

	memset(&change, 0, sizeof(change));
	change.extents_to_list = to_list;
	change.nextents_to_list = nlist;
	change.extents_to_unlist = to_unlist;
	change.nextents_to_unlist = nunlist;
	return bloomidx_publish(index, &change);
}
