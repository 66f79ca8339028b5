/*
 * pending_filters.cpp: filters over the pending pages that have filled
 * (storage/README.md, *Pending filters*; format 17).
 *
 * Every query reads every pending page, row by row, and a pending list
 * holds up to a segment's worth of rows (about 350 pages) before a seal:
 * 1 % more rows on a table of 2 M took a 2-column miss from 9 index
 * buffers to 117.  As RocksDB keeps a Bloom filter over its memtable, a
 * pending page that has filled and has a successor gets a slot in a
 * pending group: a filter group whose slots are pending pages, each
 * column's filter of the page's rows made from the filter keys they keep.
 * A scan then reads, per 127 pages, the group's header and a region page
 * a key, and only the pages whose filters may hold its keys.
 *
 * The groups cover a run of the list: from the page in the first group's
 * first slot, page after page as the list links them, to the page the last
 * group's links name as `after` (the page that followed its last slot's);
 * the scan walks the pages before the run and after it.  So the run must
 * stay a run of the list, and a slot's filters must hold every row of its
 * page:
 *  - A slot is written only for a page that is full and has a successor,
 *    under the seal lock.  A full page takes no row until VACUUM removes
 *    some, and a page's successor changes only by a seal (which moves the
 *    head), VACUUM's moves of pending pages, or a crash-free insert at the
 *    tail (a page with a successor is no tail).
 *  - Each of those holds the seal lock and drops the groups first: a
 *    publish that moves the pending head drops them in its record; VACUUM
 *    drops them before it removes pending rows (bloomidx_pending_filters_drop).
 *    A new run starts at the list's head after a seal (the sealer writes
 *    it: bloomidx_pending_filters_after_seal), at the first full page near
 *    the head where the directory is full (bloomidx_pending_filters_if_full),
 *    else at the next page that fills.
 *  - A slot's region blocks are written (whole blocks, not ORed: a crash
 *    may have left another page's there) before its header names it, so a
 *    scan that sees the slot sees its filters; a scan that copied the
 *    header before walks the page instead.
 * Dropped groups' pages are freed with the publish's generation, and every
 * group page carries its group's id (never reused), so a scan holding a
 * dropped group's header that meets a recycled page starts again
 * (bloomidx_page_was_recycled), as for segments' groups.
 *
 * The work falls on the insert that links a new tail: it summarizes the
 * pages that filled since the last slot, PENDING_FILTERS_BATCH at most,
 * when the seal lock is free (else the next one does): a page's filters
 * cost about half a page's WAL, a group's pages (about 40 for six
 * columns) once per 127 pages.  And on a seal, which dropped the groups:
 * it gives the pages it left theirs again before it lets go of the lock.
 */
#include "storage/storage.h"

/*
 * Pages one insert summarizes at most (a backlog waits for the next): the
 * run's start catches up the list's first 40 or so pages in two inserts.
 */
#define PENDING_FILTERS_BATCH 32

/*
 * The inserts that link every PENDING_FILTERS_EVERY-th (storage.h) pending
 * page write the slots due: a slot writes a block in every block row, 8 a
 * region page (about 40 pages for six columns), and a batch of pages
 * writes each region page once.  Four pages at a time cost a bulk INSERT a
 * quarter of what a page at a time did while generic_xlog.c compared each
 * region page whole (60,000 rows of data set A: 0.31 s against 0.26 and
 * 0.22 without pending filters), a third of its time in perf; logged as
 * the slots' blocks (write_slots), a page at a time at twice the bits
 * costs what four at a time did on data set A (the backend's CPU for
 * 40,000 rows into 2 M: 73 to 75 ms against 71 to 80 for four at a time at
 * the segments' bits before; an index of many columns, whose group has
 * more region pages for fewer rows a page, was not measured), and a query
 * walks no filled page past the run.
 */

/*
 * Pending filters take twice the bits a key of the segments' (18 where
 * those take 9: a rate of 0.24 % a slot, against 2.3 %).  A query asks a
 * group's 127 slots one key at a time and reads its next key's region page
 * only where a slot passed: at 2.3 % a slot, 95 % of the 2-column misses
 * over a full group read both pages, at 0.24 % a quarter.  The pages cost
 * little room (a group's 21 region pages become 40, for up to a segment's
 * worth of pending rows, until the next seal frees them) and their writes
 * log only the slots' blocks (wal.cpp).  Measured on 2 M rows of data set A
 * after 1 % more rows, with every filled page summarized: a 2-column miss
 * 4.9 index buffers, the mean of 200, against 5.7 at the segments' bits.
 */
#define PENDING_BITS_FACTOR 2

/*
 * The fewest pending pages a run of groups starts at, in an index of at
 * least START_EARLY_GROUPS groups' pages (below, twice a group's pages:
 * pending_run_due).
 */
#define PENDING_FILTERS_START 8
#define START_EARLY_GROUPS 16

/*
 * Pages a seal summarizes at most after it (bloomidx_pending_filters_after_seal):
 * a worker's, more than a segment's worth of pending pages of six int4
 * columns (350); an INSERT's own, about 10 ms of it.
 */
#define PENDING_FILTERS_AFTER_SEAL 512
#define PENDING_FILTERS_AFTER_INSERT_SEAL 128

/*
 * Partly filled pages a full directory's run may start after: a build's
 * list starts with the one it filled last (a parallel build's leader's).
 */
#define FULL_START_SKIP 8

/* Region pages one Generic WAL record takes (MAX_GENERIC_XLOG_PAGES). */
#define PAGES_A_RECORD 4
StaticAssertDecl(PAGES_A_RECORD <= MAX_GENERIC_XLOG_PAGES, "a record's pages fit generic_redo");

/* The metapage's pending filters and directory header, copied under a share lock. */
static void
read_pending_filters(Relation index, bloomidx::PendingFilters *pf, bloomidx::DirectoryHeader *d)
{
	Buffer		meta = bloomidx_lock_metapage(index, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(meta);

	*pf = *bloomidx::pending_filters(page);
	if (d != NULL)
		*d = *bloomidx::directory_header(page);
	UnlockReleaseBuffer(meta);
}

/*
 * Copies pending group `id`'s header page at blkno into copy and checks
 * it: the problem found, quietly.
 */
bloomidx::PageProblem
bloomidx_pending_group_copy(Relation index, BlockNumber blkno, uint32 id, BlockNumber *nblocks,
							BufferAccessStrategy strategy, char *copy)
{
	if (blkno >= *nblocks)
		*nblocks = RelationGetNumberOfBlocks(index);
	if (blkno == bloomidx::kMetaBlock || blkno >= *nblocks)
		return bloomidx::PageProblem::BadFilter;

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);

	uint32		ncolumns = (uint32) RelationGetNumberOfAttributes(index);
	bloomidx::PageProblem problem =
		bloomidx::check_pending_group_page((const uint8 *) copy, id, ncolumns, blkno, *nblocks);

	/*
	 * Its region pages, and the pages its slots name, may have been added
	 * to the file after the caller read its length: checked again against
	 * the length now before the page is called damaged.
	 */
	if (problem == bloomidx::PageProblem::BadFilter)
	{
		BlockNumber now = RelationGetNumberOfBlocks(index);

		if (now > *nblocks)
		{
			*nblocks = now;
			problem = bloomidx::check_pending_group_page((const uint8 *) copy, id, ncolumns, blkno,
														 now);
		}
	}
	return problem;
}

/*
 * The pages of the chain of pending groups (headers and region pages), for
 * the caller, which holds the seal lock, to free once no one names them;
 * *n of them, palloc'd.  A damaged header ends the list (warned): its
 * pages are left to VACUUM's sweep.
 */
static BlockNumber *
pending_group_pages(Relation index, const bloomidx::PendingFilters *pf, uint32 *n)
{
	uint32		room = 64;
	BlockNumber *blocks = (BlockNumber *) palloc(room * sizeof(BlockNumber));
	char	   *copy = (char *) palloc(BLCKSZ);
	BlockNumber blkno = pf->first_group;
	uint32		id = pf->first_group_id;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	*n = 0;
	for (BlockNumber walked = 0; blkno != bloomidx::kMetaBlock && walked < nblocks; walked++)
	{
		bloomidx::PageProblem problem = bloomidx_pending_group_copy(index, blkno, id, &nblocks,
																	NULL, copy);

		if (problem != bloomidx::PageProblem::None)
		{
			bloomidx_warn_corrupted_page(index, blkno,
										 psprintf("A pending group's header is damaged (%s): its pages are left to the sweep.",
												  bloomidx::page_problem_text(problem)));
			break;
		}

		const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header((const uint8 *) copy);
		bloomidx::PendingGroupLinks links = bloomidx::pending_group_links((const uint8 *) copy);

		if (*n + 1 + h->region_pages > room)
		{
			room = 2 * (*n + 1 + h->region_pages);
			blocks = (BlockNumber *) repalloc(blocks, room * sizeof(BlockNumber));
		}
		blocks[(*n)++] = blkno;
		for (uint32 i = 0; i < h->region_pages; i++)
			blocks[(*n)++] = bloomidx::group_region_block((const uint8 *) copy, blkno, i);
		blkno = links.next_group;
		id = links.next_group_id;
	}
	pfree(copy);
	return blocks;
}

/* The pending groups' pages (the sweep marks them used); NULL when there are none. */
BlockNumber *
bloomidx_pending_filters_pages(Relation index, uint32 *n)
{
	bloomidx::PendingFilters pf;

	*n = 0;
	read_pending_filters(index, &pf, NULL);
	if (pf.first_group == bloomidx::kMetaBlock)
		return NULL;
	return pending_group_pages(index, &pf, n);
}

/*
 * Publishes change with the pending groups dropped (a seal that moves the
 * pending list's head must drop them), then frees their pages, stamped
 * with the publish's generation, which it returns.  The caller holds the
 * seal lock, under which alone groups are added.
 */
uint32
bloomidx_publish_dropping_pending_filters(Relation index, DirectoryChange *change)
{
	uint32		n;
	BlockNumber *blocks = bloomidx_pending_filters_pages(index, &n);

	change->drop_pending_filters = true;

	uint32		generation = bloomidx_publish(index, change);

	for (uint32 i = 0; i < n; i++)
		bloomidx_free_page(index, blocks[i], generation);
	if (blocks != NULL)
		pfree(blocks);
	return generation;
}

/*
 * Drops the pending groups, if any, in a publish of their own; the caller
 * holds the seal lock (VACUUM, before it changes pending pages).
 */
void
bloomidx_pending_filters_drop(Relation index)
{
	bloomidx::PendingFilters pf;

	read_pending_filters(index, &pf, NULL);
	if (pf.first_group == bloomidx::kMetaBlock)
		return;

	DirectoryChange change;

	memset(&change, 0, sizeof(change));
	(void) bloomidx_publish_dropping_pending_filters(index, &change);
}

/*
 * Makes a pending group (h) in free or new pages, and links it behind the
 * chain's last group (last_block; kMetaBlock: the chain is empty) in one
 * record with the metapage, which spends its id.  Its header block; the
 * header's copy (a page) in `copy`.  Each region page (zero) is taken and
 * logged whole alone, so that no buffer is locked while the next is taken
 * (bloomidx_free_buffer_before).
 */
static BlockNumber
new_pending_group(Relation index, bloomidx::FilterGroupHeader *h, BlockNumber last_block,
				  char *copy)
{
	uint32	   *regions = (uint32 *) palloc(h->region_pages * sizeof(uint32));

	for (uint32 i = 0; i < h->region_pages; i++)
	{
		Buffer		buffer = bloomidx_free_or_new_buffer(index);
		GenericXLogState *xlog = GenericXLogStart(index);
		uint8	   *page = (uint8 *) GenericXLogRegisterBuffer(xlog, buffer, GENERIC_XLOG_FULL_IMAGE);

		regions[i] = BufferGetBlockNumber(buffer);
		PageInit((Page) page, BLCKSZ, sizeof(bloomidx::PageOpaque));
		bloomidx::filter_page_fill(page, *h, page, 0, i);	/* no rows: zeros */
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(buffer);
	}

	/* The header, then the metapage and the last group in one record. */
	Buffer		header = bloomidx_free_or_new_buffer(index);
	BlockNumber blkno = BufferGetBlockNumber(header);
	Buffer		meta = bloomidx_lock_metapage(index, BUFFER_LOCK_EXCLUSIVE);
	Buffer		last = InvalidBuffer;

	if (last_block != bloomidx::kMetaBlock)
	{
		last = ReadBuffer(index, last_block);
		LockBuffer(last, BUFFER_LOCK_EXCLUSIVE);
	}

	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *hp = (uint8 *) GenericXLogRegisterBuffer(xlog, header, GENERIC_XLOG_FULL_IMAGE);
	uint8	   *mp = (uint8 *) GenericXLogRegisterBuffer(xlog, meta, 0);
	bloomidx::DirectoryHeader *d = bloomidx::directory_header(mp);
	bloomidx::PendingGroupLinks links;

	if (d->next_group_id != h->group_id)
		elog(ERROR, "bloomidx: the group ids of index \"%s\" changed under its seal lock",
			 RelationGetRelationName(index));
	if (d->next_group_id == PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" has used up its filter group ids",
						RelationGetRelationName(index)),
				 errhint("REINDEX the index.")));
	memset(&links, 0, sizeof(links));
	PageInit((Page) hp, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::pending_group_page_fill(hp, *h, regions, links);
	memcpy(copy, hp, BLCKSZ);
	d->next_group_id++;
	d->check = bloomidx::directory_check(*d);
	if (!BufferIsValid(last))
		bloomidx::pending_filters_set(bloomidx::pending_filters(mp), blkno, h->group_id);
	else
	{
		uint8	   *lp = (uint8 *) GenericXLogRegisterBuffer(xlog, last, 0);
		bloomidx::FilterGroupHeader lh = *bloomidx::filter_group_header(lp);
		bloomidx::PendingGroupLinks ll = bloomidx::pending_group_links(lp);

		ll.next_group = blkno;
		ll.next_group_id = h->group_id;
		bloomidx::pending_group_page_fill(lp, lh, NULL, ll);
	}
	GenericXLogFinish(xlog);
	if (BufferIsValid(last))
		UnlockReleaseBuffer(last);
	UnlockReleaseBuffer(meta);
	UnlockReleaseBuffer(header);
	pfree(regions);
	return blkno;
}

/*
 * Reads pending page blkno for a slot: its rows' filter keys into keys
 * (room for a page's), their count, and its successor.  False when it is
 * no full pending page with a successor (the run stops there for now).
 */
static bool
read_filled_page(Relation index, BlockNumber blkno, const bloomidx::RowPageGeometry *g,
				 uint32 *keys, uint32 *count, BlockNumber *next)
{
	if (blkno == bloomidx::kMetaBlock || blkno >= RelationGetNumberOfBlocks(index))
		return false;

	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		ok = !PageIsNew((Page) page) &&
		bloomidx::page_opaque(page)->flags == bloomidx::kPageData &&
		bloomidx::page_opaque(page)->page_id == bloomidx::kPageId;

	if (ok)
	{
		bloomidx_check_data_page(index, blkno, (Page) page, g, bloomidx::EntryChecks::None);
		*count = bloomidx::page_opaque(page)->count;
		*next = bloomidx::pending_next(page);
		ok = *count == g->capacity && *next != bloomidx::kMetaBlock;
	}
	for (uint32 i = 0; ok && i < *count; i++)
		memcpy(keys + (Size) i * g->keys, bloomidx::row_tid(page, *g, i) + bloomidx::kTidSize,
			   g->keys * bloomidx::kFilterKeySize);
	UnlockReleaseBuffer(buffer);
	return ok;
}

/* Pages whose slots one pass writes together (each region page once). */
typedef struct SlotBatch
{
	uint32		n;
	BlockNumber pages[PENDING_FILTERS_BATCH];
	BlockNumber after;			/* the successor of the last one's page */
	/* Slot j's filter of column c: blocks[j * kMaxColumns + c] (NULL: none). */
	const uint8 *blocks[PENDING_FILTERS_BATCH * bloomidx::kMaxColumns];
} SlotBatch;

/*
 * Adds the filters of page blkno's rows (keys, count of them) to the batch,
 * in the group's shape (h), from `scratch` (room for a slot's filters).
 */
static void
batch_add(SlotBatch *b, const bloomidx::FilterGroupHeader *h, BlockNumber blkno,
		  const uint32 *keys, uint32 count, uint32 nkeys, uint8 *scratch)
{
	uint8	   *at = scratch;

	for (uint32 c = 0; c < bloomidx::kMaxColumns; c++)
	{
		const bloomidx::FilterColumn *fc = &h->columns[c];

		b->blocks[b->n * bloomidx::kMaxColumns + c] = NULL;
		if (c >= h->ncolumns || c >= nkeys || fc->blocks == 0)
			continue;
		memset(at, 0, (Size) fc->blocks * bloomidx::kFilterBlockBytes);
		bloomidx::filter_add_many(at, bloomidx::kFilterBlockBytes, fc->blocks, fc->probes,
								  keys + c, count, nkeys);
		b->blocks[b->n * bloomidx::kMaxColumns + c] = at;
		at += (Size) fc->blocks * bloomidx::kFilterBlockBytes;
	}
	b->pages[b->n++] = blkno;
}

/*
 * Writes the batch's slots, from the group's first free one, into the group
 * whose header is `header_block` (copy in hcopy, updated): each region page
 * once, whole blocks (a crash may have left another page's there), in
 * records before the one that names the slots in the header (their pages,
 * slots_taken, the links' `after`): a scan that copied the header before
 * walks those pages instead.
 */
static void
write_slots(Relation index, BlockNumber header_block, char *hcopy, const SlotBatch *b)
{
	bloomidx::FilterGroupHeader h = *bloomidx::filter_group_header((const uint8 *) hcopy);
	uint32		first = h.slots_taken;
	uint8	   *room = RelationNeedsWAL(index)
		? (uint8 *) palloc((Size) PAGES_A_RECORD * BLOOMIDX_PAGE_DELTA_ROOM) : NULL;

	for (uint32 i = 0; i < h.region_pages;)
	{
		Buffer		buffers[PAGES_A_RECORD];
		bloomidx::PageRange ranges[PAGES_A_RECORD][bloomidx::kPendingSlotRanges];
		const bloomidx::PageRange *range_lists[PAGES_A_RECORD];
		uint32		nranges[PAGES_A_RECORD];
		uint32		k = 0;

		for (; k < PAGES_A_RECORD && i + k < h.region_pages; k++)
		{
			BlockNumber region = bloomidx::group_region_block((const uint8 *) hcopy, header_block,
															  i + k);

			buffers[k] = ReadBuffer(index, region);
			LockBuffer(buffers[k], BUFFER_LOCK_EXCLUSIVE);

			bloomidx::PageProblem problem =
				bloomidx::check_filter_page((const uint8 *) BufferGetPage(buffers[k]), h, i + k,
											bloomidx::Sums::Trust);

			nranges[k] = bloomidx::pending_slots_ranges(h, i + k, first, b->n, ranges[k]);
			range_lists[k] = ranges[k];
			if (problem == bloomidx::PageProblem::None && nranges[k] == 0)
				problem = bloomidx::PageProblem::BadFilter;	/* rows no pending group has */
			if (problem != bloomidx::PageProblem::None)
			{
				for (uint32 j = 0; j <= k; j++)
					UnlockReleaseBuffer(buffers[j]);
				bloomidx_report_page_problem(index, region, problem);
			}
		}

		/* Only the slots' blocks and the sum change: logged as such (wal.cpp). */
		START_CRIT_SECTION();
		for (uint32 j = 0; j < k; j++)
		{
			bloomidx::pending_slots_write((uint8 *) BufferGetPage(buffers[j]), h, i + j, first, b->n,
										  b->blocks);
			MarkBufferDirty(buffers[j]);
		}
		bloomidx_log_page_ranges(index, buffers, k, range_lists, nranges, room,
								 BLOOMIDX_PAGE_DELTA_ROOM);
		END_CRIT_SECTION();
		for (uint32 j = 0; j < k; j++)
			UnlockReleaseBuffer(buffers[j]);
		i += k;
	}
	if (room != NULL)
		pfree(room);
	bloomidx_seal_step(SEAL_STEP_PENDING_SLOTS_WRITTEN);
	bloomidx_debug_pause(PAUSE_PENDING_SLOTS);

	Buffer		header = ReadBuffer(index, header_block);

	LockBuffer(header, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *xlog = GenericXLogStart(index);
	uint8	   *hp = (uint8 *) GenericXLogRegisterBuffer(xlog, header, 0);
	bloomidx::PendingGroupLinks links = bloomidx::pending_group_links(hp);

	for (uint32 j = 0; j < b->n; j++)
		h.slot_segment[first + j] = b->pages[j];
	h.slots_taken = (uint16) (first + b->n);
	links.after = b->after;
	bloomidx::pending_group_page_fill(hp, h, NULL, links);
	memcpy(hcopy, hp, BLCKSZ);
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(header);
}

/*
 * The chain's last group (its header copied into hcopy; kMetaBlock: none)
 * and in *next the page after its last slot's (unchanged when no group has
 * a slot).  False, after a WARNING, when a header is damaged.
 */
static bool
find_last_group(Relation index, const bloomidx::PendingFilters *pf, char *hcopy,
				BlockNumber *last, BlockNumber *next)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber blkno = pf->first_group;
	uint32		id = pf->first_group_id;

	*last = bloomidx::kMetaBlock;
	for (BlockNumber walked = 0; blkno != bloomidx::kMetaBlock; walked++)
	{
		bloomidx::PageProblem problem = walked < nblocks
			? bloomidx_pending_group_copy(index, blkno, id, &nblocks, NULL, hcopy)
			: bloomidx::PageProblem::BadFilter;	/* a cycle */

		if (problem != bloomidx::PageProblem::None)
		{
			bloomidx_warn_corrupted_page(index, blkno,
										 psprintf("A pending group's header is damaged (%s): the pending groups are dropped.",
												  bloomidx::page_problem_text(problem)));
			return false;
		}

		bloomidx::PendingGroupLinks links = bloomidx::pending_group_links((const uint8 *) hcopy);

		*last = blkno;
		if (links.after != bloomidx::kMetaBlock)
			*next = links.after;
		blkno = links.next_group;
		id = links.next_group_id;
	}
	return true;
}

/*
 * The shape of a pending group of this index now, in *shape, and the pages
 * (header and region) a group of the segments' bits a key would take, in
 * *base_pages (pending_run_due); false where the index keeps no filter
 * keys or pending groups cannot be (a region too large to list).
 */
static bool
pending_shape(Relation index, const bloomidx::MetaPageData *meta, uint32 next_group_id,
			  bloomidx::FilterGroupHeader *shape, uint32 *base_pages)
{
	const bloomidx::RowPageGeometry geometry = bloomidx::meta_row_geometry(*meta);
	const bloomidx::RowPageGeometry *g = &geometry;
	bloomidx::FilterGroupHeader base;
	double		bits_per_key;

	if (g->keys == 0 || !meta->filter_keys ||
		(bits_per_key = bloomidx_filter_bits_per_key(index)) <= 0)
		return false;
	bloomidx::pending_group_init(&base, next_group_id, (uint32) meta->ncolumns, g->capacity,
								 bits_per_key);
	*base_pages = 1 + base.region_pages;
	/* PENDING_BITS_FACTOR times the bits where the region can still be listed. */
	bloomidx::pending_group_init(shape, next_group_id, (uint32) meta->ncolumns, g->capacity,
								 PENDING_BITS_FACTOR * bits_per_key);
	if (shape->region_pages > bloomidx::group_listed_pages_max(shape->slot_capacity, true))
		*shape = base;
	return shape->region_pages > 0 &&
		shape->region_pages <= bloomidx::group_listed_pages_max(shape->slot_capacity, true);
}

/*
 * Whether a pending list of pending_pages pages, without groups yet, is
 * long enough for a run of them to start (groups of `shape`).  A group
 * costs a query its header and a region page a key (3 pages for a
 * 2-column query), the pages after its run walked too, and the index its
 * 1 + region_pages pages (22 for six int4 columns) until the next seal
 * frees them: in a small index, the run starts at twice a group's pages,
 * which it would otherwise double; in an index of START_EARLY_GROUPS
 * groups' pages or more, at PENDING_FILTERS_START pages, so that the
 * pages a seal leaves pending, and the first ones filled after it, are
 * not walked row by row by every query until 44 have gathered (10 M rows
 * of data set A and 29 pending pages: a 2-column hit / miss read 48 / 32
 * index buffers, now 24 / 7; 29 / 4 with none pending).
 */
static bool
pending_run_due(Relation index, uint32 pending_pages, uint32 group_pages)
{
	/*
	 * group_pages: a group's pages at the segments' bits (pending_shape's
	 * base_pages), as before pending groups took PENDING_BITS_FACTOR times
	 * them: twice the pages a group costs an index of 16 groups' pages
	 * little (a twelfth), where waiting for 82 pending pages, not 44, or for
	 * an index of 656 pages, not 352, before the first run would have every
	 * query walk them row by row.
	 */
	if (pending_pages >= 2 * group_pages)
		return true;
	return pending_pages >= PENDING_FILTERS_START &&
		RelationGetNumberOfBlocks(index) >= (BlockNumber) START_EARLY_GROUPS * group_pages;
}

/*
 * Gives the pending pages that filled since the last slot their slots,
 * max_pages at most, starting a run where there is none as
 * bloomidx_pending_filters_add says (at the list's head if that page is
 * full, else at `filled`).  The caller holds the seal lock.
 */
static void
summarize_filled(Relation index, const bloomidx::MetaPageData *meta, BlockNumber filled,
				 uint32 max_pages)
{
	const bloomidx::RowPageGeometry geometry = bloomidx::meta_row_geometry(*meta);
	const bloomidx::RowPageGeometry *g = &geometry;
	bloomidx::PendingFilters pf;
	bloomidx::DirectoryHeader d;
	bloomidx::FilterGroupHeader shape;
	uint32		base_pages;

	/* Under the seal lock: only its holders change the groups. */
	read_pending_filters(index, &pf, &d);
	if (!pending_shape(index, meta, d.next_group_id, &shape, &base_pages))
		return;

	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx pending filters",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	char	   *hcopy = (char *) palloc(BLCKSZ);
	BlockNumber last;
	BlockNumber next = bloomidx::kMetaBlock;
	uint32	   *keys = (uint32 *) palloc((Size) g->capacity * g->keys * sizeof(uint32));
	uint32		count;
	BlockNumber after;

	if (!find_last_group(index, &pf, hcopy, &last, &next))
	{
		bloomidx_pending_filters_drop(index);
		last = bloomidx::kMetaBlock;
		next = bloomidx::kMetaBlock;
		read_pending_filters(index, &pf, &d);
	}
	if (next == bloomidx::kMetaBlock)
	{
		next = filled;
		if (!pending_run_due(index, d.pending_pages, base_pages))
			next = bloomidx::kMetaBlock;	/* not yet: read_filled_page says no */
		else if (read_filled_page(index, d.pending_head, g, keys, &count, &after))
			next = d.pending_head;
	}

	Size		slot_bytes = (Size) (bloomidx::group_region_rows(shape) + 1) * bloomidx::kFilterBlockBytes;
	uint8	   *scratch = (uint8 *) palloc((Size) PENDING_FILTERS_BATCH * slot_bytes);
	SlotBatch  *batch = (SlotBatch *) palloc(sizeof(SlotBatch));

	for (uint32 done = 0; done < max_pages;)
	{
		if (last == bloomidx::kMetaBlock ||
			bloomidx::filter_group_header((const uint8 *) hcopy)->slots_taken ==
			bloomidx::kPendingGroupSlots)
		{
			if (!read_filled_page(index, next, g, keys, &count, &after))
				break;			/* no page for a new group yet */
			shape.group_id = d.next_group_id;
			shape.check = bloomidx::filter_group_check(shape);
			last = new_pending_group(index, &shape, last, hcopy);
			d.next_group_id++;
		}

		const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header((const uint8 *) hcopy);

		/* The group's shape is the index's now, or a slot's filters would not fit scratch. */
		if (bloomidx::group_region_rows(*h) + 1 > slot_bytes / bloomidx::kFilterBlockBytes)
			break;

		uint32		room = Min((uint32) (h->slot_capacity - h->slots_taken),
							   Min((uint32) PENDING_FILTERS_BATCH, max_pages - done));

		batch->n = 0;
		while (batch->n < room && read_filled_page(index, next, g, keys, &count, &after))
		{
			batch_add(batch, h, next, keys, count, g->keys, scratch + batch->n * slot_bytes);
			batch->after = after;
			next = after;
		}
		if (batch->n == 0)
			break;
		write_slots(index, last, hcopy, batch);
		done += batch->n;
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * Gives the pending pages that filled since the last slot their slots
 * (PENDING_FILTERS_BATCH at most), where the index keeps filter keys and
 * the seal lock is free: the insert that linked a new tail behind page
 * `filled`, the list's pending_pages-th, calls it.  Without a group yet,
 * the run starts once the list is long enough (pending_run_due): at the
 * list's head if that page is full, else at `filled`.  A damaged group is
 * warned of and the groups dropped, not an INSERT failed: queries then
 * walk the list.
 */
void
bloomidx_pending_filters_add(Relation index, const BloomidxState *state, BlockNumber filled,
							 uint32 pending_pages)
{
	bloomidx::PendingFilters pf;
	bloomidx::DirectoryHeader d;
	bloomidx::FilterGroupHeader shape;
	uint32		base_pages;

	if (pending_pages % PENDING_FILTERS_EVERY != 0 || state->geometry.keys == 0 ||
		!state->meta.filter_keys)
		return;

	/* Nothing to do yet (most inserts): no chain and a short list. */
	read_pending_filters(index, &pf, &d);
	if (!pending_shape(index, &state->meta, d.next_group_id, &shape, &base_pages) ||
		(pf.first_group == bloomidx::kMetaBlock &&
		 !pending_run_due(index, d.pending_pages, base_pages)))
		return;
	if (!ConditionalLockPage(index, bloomidx::kMetaBlock, ExclusiveLock))
		return;
	summarize_filled(index, &state->meta, filled, PENDING_FILTERS_BATCH);
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
}

/*
 * After a seal, whose publish dropped the pending groups (their run must
 * stay a run of the list): the pending pages left that are full get slots
 * again, from the head, unless another seal is due (it would drop them
 * again).  Else a query reads them row by row until inserts summarize
 * them, PENDING_FILTERS_BATCH pages every PENDING_FILTERS_EVERY linked: a
 * background seal after 100,000 rows were inserted into a table of 10 M
 * left 190 pages, and a 2-column miss read 194 buffers against 3.  A
 * worker's seal gives up to PENDING_FILTERS_AFTER_SEAL pages (about 24 ms
 * for 300 pages of data set A); an INSERT's own seal (`in_statement`)
 * PENDING_FILTERS_AFTER_INSERT_SEAL, for the INSERT already waits for its
 * seal.  The caller holds the seal lock and says what rows make a seal
 * due (seal_threshold: bloomidx_seal_threshold).
 */
void
bloomidx_pending_filters_after_seal(Relation index, uint32 seal_threshold, bool in_statement)
{
	bloomidx::PendingFilters pf;
	bloomidx::DirectoryHeader d;
	/* A copy, as a BloomidxState keeps one: nothing points into rd_amcache meanwhile. */
	const bloomidx::MetaPageData meta = *bloomidx_cached_meta(index);

	read_pending_filters(index, &pf, &d);
	if (bloomidx_pending_rows_sealable(d.pending_pages, meta.capacity) >= seal_threshold &&
		d.nsegments < bloomidx_max_segments())
		return;
	summarize_filled(index, &meta, bloomidx::kMetaBlock,
					 in_statement ? PENDING_FILTERS_AFTER_INSERT_SEAL : PENDING_FILTERS_AFTER_SEAL);
}

/*
 * Where the directory is full (kMaxSegments segments: about 2 billion rows
 * at the default segment size), no seal takes pending rows until VACUUM
 * merges segments, and the pending list grows with every insert.  So a
 * build, a VACUUM or bloomidx_seal() that leaves it so gives every full
 * pending page its slot (a build past the limit left them all to be read
 * row by row, a VACUUM had dropped their groups to seal), and warns: the
 * user learns that the table has outgrown one index.  The run stops at the
 * first page not full: after a parallel build, the next participant's last
 * page; after a VACUUM that removed pending rows, the first page it
 * thinned (inserts fill those, and the run goes on).  The caller holds the
 * seal lock.
 */
void
bloomidx_pending_filters_if_full(Relation index)
{
	bloomidx::PendingFilters pf;
	bloomidx::DirectoryHeader d;

	read_pending_filters(index, &pf, &d);
	if (d.nsegments < bloomidx_max_segments() || d.pending_pages == 0)
		return;

	/* A copy, as a BloomidxState keeps one: nothing points into rd_amcache meanwhile. */
	const bloomidx::MetaPageData meta = *bloomidx_cached_meta(index);

	/*
	 * A build's list starts with the page it filled last, partly: the run
	 * starts at the first full page (a parallel build's stops at the next
	 * participant's partly filled one, which inserts fill and extend).
	 */
	const bloomidx::RowPageGeometry g = bloomidx::meta_row_geometry(meta);
	uint32	   *keys = (uint32 *) palloc((Size) Max(g.capacity * g.keys, 1) * sizeof(uint32));
	BlockNumber start = d.pending_head;

	for (uint32 i = 0; i < FULL_START_SKIP && start != bloomidx::kMetaBlock; i++)
	{
		uint32		count;
		BlockNumber after = bloomidx::kMetaBlock;

		if (read_filled_page(index, start, &g, keys, &count, &after))
			break;
		start = after;
	}
	pfree(keys);
	summarize_filled(index, &meta, start, d.pending_pages);
	ereport(WARNING,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("index \"%s\" is full", RelationGetRelationName(index)),
			 errdetail_plural("It holds %u segments, its limit: its %u pending page cannot be sealed, and rows inserted from now on stay pending too.",
							  "It holds %u segments, its limit: its %u pending pages cannot be sealed, and rows inserted from now on stay pending too.",
							  d.pending_pages, (unsigned) d.nsegments, d.pending_pages),
			 errhint("Partition the table, or delete rows so that VACUUM can merge segments.")));
}

/*
 * The slots of the pending group whose header page (checked) is hcopy, at
 * header_block, that may hold rows the query wants: per query key, the
 * block row of each of its hashes (a region page), a slot passing when
 * every key has a hash its filters may hold.  False when a region page was
 * recycled since the directory copy of `generation` (else damage is an
 * ERROR).  Region pages are probed in place (bloomidx_lock_region).
 */
bool
bloomidx_pending_group_probe(Relation index, const bloomidx::FilterQuery *query, const char *hcopy,
							 BlockNumber header_block, uint32 generation, BufferAccessStrategy bas,
							 BufferHints *hints, bloomidx::SlotMask *passed)
{
	const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header((const uint8 *) hcopy);
	bloomidx::SlotMask mask = bloomidx::SlotMask::first(h->slots_taken);

	for (int k = 0; k < query->nkeys && mask.any(); k++)
	{
		const bloomidx::FilterKey *key = &query->keys[k];
		const bloomidx::FilterColumn *fc = &h->columns[key->column];
		bloomidx::SlotMask key_mask = bloomidx::SlotMask::none();
		int64		loaded = -1;	/* the region page locked in `region` */
		Buffer		region = InvalidBuffer;

		if (fc->blocks == 0)
			continue;			/* no filter for the column: every slot passes */
		for (uint32 i = 0; i < key->nhashes && (mask & ~key_mask).any(); i++)
		{
			uint32		fkey = bloomidx::filter_key(key->hashes[i]);
			uint32		region_page,
						offset;

			if (!bloomidx::group_row_of(*h, (uint32) key->column, fkey, &region_page, &offset))
			{
				key_mask = mask;
				break;
			}
			if (!bloomidx_lock_region(index, (const uint8 *) hcopy, header_block, region_page,
									  generation, bas, hints, &loaded, &region))
				return false;
			key_mask |= bloomidx::group_row_probe((const uint8 *) BufferGetPage(region) + offset,
												  fc->probes, h->slots_taken, fkey);
		}
		if (BufferIsValid(region))
			UnlockReleaseBuffer(region);
		mask &= key_mask;
	}
	*passed = mask;
	return true;
}
