/*
 * seal.cpp: sealing pending rows into a segment (README.md, "Writing"),
 * when an insert has filled enough pending pages, at VACUUM, at the end
 * of a parallel build, and for bloomidx_seal() (functions/seal.cpp).
 *
 * One sealer at a time: the seal lock is a heavyweight lock on the
 * metapage's block, as GIN's pending-list cleanup takes; VACUUM holds it
 * too.  The pages sealed are a prefix of the pending list (from its head;
 * its tail, where the list grows, only when VACUUM empties the list of a
 * large index, as GIN's VACUUM does), each first marked as being
 * sealed, so that no insert adds a row to it after the seal read it (an
 * insert that finds the tail marked links a new one behind it).  The
 * segment's pages are written where nothing points at them; one WAL record
 * of the metapage then publishes the segment's directory entry and moves
 * the list's head past the sealed pages (past the tail: the page linked
 * behind it since, else none), bumping the directory's generation; last,
 * the sealed pages are freed, stamped with that generation, so that a scan
 * still holding an older directory copy that meets one starts again.
 */
#include "storage/storage.h"

/*
 * Marks pending page blkno as being sealed (no more inserts) and copies its
 * rows, when they fit: within cap rows, or, while fewer than min_rows are
 * taken, within the room of `rows`; returns its next.
 */
static BlockNumber
mark_sealing(Relation index, BlockNumber blkno, const BloomidxState *state, SegmentRows *rows,
			 uint32 cap, uint32 min_rows, bool *fits)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	uint8	   *page = (uint8 *) BufferGetPage(buffer);
	const bloomidx::RowPageGeometry *g = &state->geometry;

	bloomidx_check_data_page(index, blkno, (Page) page, g);

	uint32		count = bloomidx::page_opaque(page)->count;
	BlockNumber next = bloomidx::pending_next(page);

	*fits = rows->nrows + count <= cap ||
		(rows->nrows < min_rows && rows->nrows + count <= rows->capacity);
	if (*fits)
	{
		if (bloomidx::page_opaque(page)->flags != bloomidx::kPageSealing)
		{
			GenericXLogState *xlog = GenericXLogStart(index);
			uint8	   *logged = (uint8 *) GenericXLogRegisterBuffer(xlog, buffer, 0);

			bloomidx::page_opaque(logged)->flags = bloomidx::kPageSealing;
			GenericXLogFinish(xlog);
		}
		/* Its rows cannot change now: inserts skip it, VACUUM waits for the seal lock. */
		for (uint32 i = 0; i < count; i++)
		{
			const uint8 *tail = bloomidx::row_tid(page, *g, i);

			memcpy(rows->signatures + (Size) rows->nrows * g->signature_bytes,
				   bloomidx::row_signature(page, *g, i), g->signature_bytes);
			memcpy(&rows->tids[rows->nrows], tail, sizeof(ItemPointerData));
			if (rows->keys != NULL)
				memcpy(rows->keys + (Size) rows->nrows * g->keys, tail + bloomidx::kTidSize,
					   g->keys * bloomidx::kFilterKeySize);
			rows->nrows++;
		}
	}
	UnlockReleaseBuffer(buffer);
	return next;
}

/*
 * The rows of the pending pages a seal would take, up to cap (the tail's
 * too with through_tail): a pass of share locks, so that pages are not
 * marked for a seal that will not happen.  (Rows only come in meanwhile:
 * VACUUM waits for the seal lock.)
 */
static uint32
count_sealable_rows(Relation index, const DirectoryCopy *dir, uint32 cap, BlockNumber nblocks,
					bool through_tail)
{
	PendingWalk walk;
	uint32		rows = 0;

	bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
	while ((through_tail || walk.blkno != dir->header.pending_tail) && rows < cap &&
		   bloomidx_pending_walk_more(&walk))
	{
		CHECK_FOR_INTERRUPTS();
		Buffer		buffer = ReadBuffer(index, walk.blkno);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);

		if (!bloomidx::is_pending_kind(bloomidx::page_opaque(page)->flags))
			bloomidx_report_corrupted_page(index, walk.blkno, "The pending list leads to a page that is not a pending page.");
		rows += bloomidx::page_opaque(page)->count;
		bloomidx_pending_walk_follow(&walk, bloomidx::pending_next(page));
		UnlockReleaseBuffer(buffer);
	}
	return rows;
}

/*
 * Seals pending pages from the head of the list, not its tail unless
 * through_tail, into one segment of bloomidx.segment_rows rows at most (a
 * page's rows more, to reach min_rows, see below); only when they hold at
 * least min_rows rows (and at least one), with its segment filters
 * made from the filter keys the rows keep.  The caller holds the seal
 * lock; memory is the caller's context, which bloomidx_seal_once drops.
 * Returns the rows sealed (0: nothing to do).
 */
static int64
seal_rows(Relation index, uint32 min_rows, bool through_tail)
{
	BloomidxState *state = (BloomidxState *) palloc(sizeof(BloomidxState));
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	bloomidx_init_state(state, index);
	bloomidx_state_filters(state, index);
	bloomidx_read_directory(index, &nblocks, dir);

	/* No room in the directory (2 billion rows in segments): the rows stay pending. */
	if (dir->header.nsegments >= bloomidx_max_segments() ||
		dir->header.pending_head == (through_tail ? bloomidx::kMetaBlock : dir->header.pending_tail))
		return 0;

	/*
	 * Enough rows?  Counted first, so that a short list is not marked for
	 * nothing.  Asked for more than a segment's worth (the threshold), a
	 * seal would wait for rows it cannot take.
	 */
	uint32		page_rows = state->geometry.capacity;
	uint32		cap = bloomidx_segment_capacity(page_rows);
	uint64		available = through_tail ? (uint64) dir->header.pending_pages * page_rows
		: bloomidx_pending_rows_sealable(dir->header.pending_pages, page_rows);

	min_rows = Min(Max(min_rows, 1), bloomidx_seal_threshold(page_rows));
	if (available < min_rows ||
		count_sealable_rows(index, dir, cap, nblocks, through_tail) < min_rows)
		return 0;

	/*
	 * Pages are taken whole, while the rows fit the segment; but a page that
	 * does not is taken too while the rows are short of min_rows: a thinned
	 * page before a full one (a + c > cap with a < min_rows) would otherwise
	 * stop every seal at the same rows, below min_rows, for good, its pages
	 * marked and the list growing behind them.  (Only when cap is under two
	 * pages' rows, with a small bloomidx.segment_rows: otherwise min_rows,
	 * cap - c + 1 at most, leaves room for any page.)  So a segment takes up to a
	 * page's rows more than cap (never more than a segment can hold: cap +
	 * a page's rows is past kSegmentRows only when the threshold is within
	 * a page of cap, and then whatever is short of it fits).
	 */
	SegmentRows rows;
	PendingWalk walk;
	BlockNumber *sealed = (BlockNumber *) palloc(sizeof(BlockNumber) * dir->header.pending_pages);
	uint32		npages = 0;

	bloomidx_segment_rows_init(&rows, state->meta.signature_bytes,
							   Min(cap + page_rows, bloomidx::kSegmentRows));
	if (state->geometry.keys > 0 && state->filter_bits_per_key > 0)
		bloomidx_segment_rows_keep_keys(&rows, state->geometry.keys);
	bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
	while ((through_tail || walk.blkno != dir->header.pending_tail) &&
		   npages < dir->header.pending_pages && bloomidx_pending_walk_more(&walk))
	{
		bool		fits;

		CHECK_FOR_INTERRUPTS();
		BlockNumber next = mark_sealing(index, walk.blkno, state, &rows, cap, min_rows, &fits);

		if (!fits)
			break;
		sealed[npages++] = walk.blkno;
		bloomidx_pending_walk_follow(&walk, next);
	}

	int64		nrows = rows.nrows;

	/*
	 * The walk stops short of min_rows only at the tail, or the list's end
	 * (rows are never removed under the seal lock, which VACUUM takes
	 * too).  Pages marked
	 * are sealed whatever they hold, never left marked: marked pages take
	 * no more rows, so a seal that gave up on them would leave them so.
	 */
	Assert(nrows >= (int64) min_rows);
	if (nrows == 0)
		return 0;

	bloomidx::SegmentEntry entry;
	DirectoryChange change;

	bloomidx_seal_step(SEAL_STEP_MARKED);
	bloomidx_debug_pause(PAUSE_SEAL_MARKED);
	memset(&change, 0, sizeof(change));

	SegmentFilters filters;
	bool		has_filters = bloomidx_segment_filters(state, &rows, &filters);

	bloomidx_write_next_segment(index, state, &rows, dir, nblocks,
								has_filters ? &filters : NULL, true, &entry, &change);
	bloomidx_seal_step(SEAL_STEP_WRITTEN);
	change.move_head = true;
	change.new_head = walk.blkno;	/* kMetaBlock: the seal took the tail */
	change.unlinked_pages = npages;
	change.unlinked_last = sealed[npages - 1];
	uint32		generation = bloomidx_publish_dropping_pending_filters(index, &change);

	bloomidx_seal_step(SEAL_STEP_PUBLISHED);
	bloomidx_debug_pause(PAUSE_SEAL_PUBLISHED);
	for (uint32 i = 0; i < npages; i++)
		bloomidx_free_page(index, sealed[i], generation);
	bloomidx_seal_step(SEAL_STEP_FREED);
	IndexFreeSpaceMapVacuum(index);

	return nrows;
}

/* seal_rows in a memory context of its own. */
int64
bloomidx_seal_once(Relation index, uint32 min_rows, bool through_tail)
{
	/* Its own context: a seal may run inside an INSERT, row after row. */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx seal",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int64		nrows = seal_rows(index, min_rows, through_tail);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return nrows;
}

/*
 * Seals while the pending list holds at least min_rows rows beyond its
 * tail; the caller holds the seal lock.  Returns the rows sealed.  With
 * build_progress (CREATE INDEX sealing what its participants left), the
 * rows sealed so far are its progress's tuples done.
 */
int64
bloomidx_seal_all(Relation index, uint32 min_rows, bool build_progress)
{
	int64		total = 0;
	int64		n;

	while ((n = bloomidx_seal_once(index, min_rows)) > 0)
	{
		total += n;
		if (build_progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, total);
	}
	return total;
}

/*
 * The rows that make a segment's worth: a segment takes whole pages, so
 * one page short of bloomidx.segment_rows is as full as it gets; and at
 * least half a segment's rows, as pending pages VACUUM thinned out hold
 * few rows each (sealing whatever lies beyond the tail would make a
 * segment of a few rows per new tail, and a scan reads every segment).
 */
uint32
bloomidx_seal_threshold(uint32 capacity)
{
	uint32		cap = bloomidx_segment_capacity(capacity);

	return Max(cap > capacity ? cap - capacity + 1 : 1, cap / 2);
}

/*
 * VACUUM seals more than a segment's worth: what lies beyond the tail once
 * it is an eighth of a segment's rows.  Every query reads every pending
 * page, where a segment costs it its filter pages, and packed slices
 * (format 14) give a small segment about the pages its rows took pending;
 * GIN's VACUUM likewise flushes its pending list.  Nor where segments take
 * a slice page per signature bit whatever their size (format 13's layout,
 * which the tests still write): there a segment's worth.  What is left
 * below an eighth, bloomidx_vacuum_flush seals.
 */
uint32
bloomidx_vacuum_seal_threshold(const bloomidx::MetaPageData *meta)
{
	uint32		threshold = bloomidx_seal_threshold(meta->capacity);

	if (!bloomidx_packs_slices())
		return threshold;
	return Min(threshold, Max(bloomidx_segment_capacity(meta->capacity) / 8, 1));
}

/*
 * Then VACUUM seals the rest beyond the tail, a page's rows or more, as
 * one segment (once: rows that inserts add meanwhile wait for the next
 * seal, so that a VACUUM under inserts neither runs on nor writes a
 * segment for every page they link), where the index keeps filter keys
 * (format 16): the small segment keeps its rows' keys, and the next VACUUM
 * merges it with filters made from them (merge.cpp), so it lives until
 * then.  Once the segments hold a segment's worth of live rows, the tail's
 * rows count too and go with the rest: queries then read no pending page
 * until inserts link one, as GIN's VACUUM empties its pending list.  Still
 * a page's rows at least: each small segment costs its own pages and a
 * merge by the next VACUUM, which a VACUUM after every few inserts would
 * otherwise pay for a handful of rows (200,000 rows, then 5 rows and a
 * VACUUM 120 times: the index grew from 187 blocks to 1,316).  Below that
 * size the pending page is much of what a query reads either way.  Not in
 * an index of fewer than VACUUM_FLUSH_MIN_BLOCKS blocks, where pending
 * pages are most of what a query reads and a small segment with its
 * filter group would double the file, nor in one without filter keys
 * (merges of many small segments would keep no filters).
 */
#define VACUUM_FLUSH_MIN_BLOCKS 128

void
bloomidx_vacuum_flush(Relation index)
{
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);

	if (!bloomidx_packs_slices() || !meta->filter_keys ||
		RelationGetNumberOfBlocks(index) < VACUUM_FLUSH_MIN_BLOCKS)
		return;

	DirectoryStats stats;

	bloomidx_directory_stats(index, &stats);
	bloomidx_seal_once(index, Max(meta->capacity, 1),
					   stats.live_rows >= bloomidx_segment_capacity(meta->capacity));
}

/*
 * An insert that linked a new tail seals when a segment's worth has
 * gathered, unless another backend is sealing (or VACUUM runs) already:
 * one segment, however many are due (a backlog, left by inserts under a
 * larger bloomidx.segment_rows, say, would otherwise all fall on one
 * INSERT), or as many as make two pages' rows when segments are smaller
 * than that (one seal would take just the page linked, and a backlog
 * would never shrink).  So each tail linked seals more than it added, a
 * backlog shrinks by a page or more each time, and VACUUM seals all.
 * Then, still under the seal lock, the pages left get pending filters
 * again (bloomidx_pending_filters_after_seal).
 */
void
bloomidx_seal_if_due(Relation index, uint32 pending_pages, uint32 capacity)
{
	uint64		rows = bloomidx_pending_rows_sealable(pending_pages, capacity);
	uint32		threshold = bloomidx_seal_threshold(capacity);
	int64		sealed = 0,
				n;

	if (rows < threshold)
		return;
	if (!ConditionalLockPage(index, bloomidx::kMetaBlock, ExclusiveLock))
		return;
	while (sealed < 2 * (int64) capacity && (n = bloomidx_seal_once(index, threshold)) > 0)
		sealed += n;
	if (sealed > 0)
		bloomidx_pending_filters_after_seal(index, threshold, true);
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
}
