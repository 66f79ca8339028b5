/*
 * build.cpp: CREATE INDEX and the init fork of an index on an UNLOGGED
 * table.  The heap scan gathers rows in memory; every segment's worth
 * becomes a segment (storage/segment_write.cpp), and what is left at the end, less
 * than a segment, becomes one more if it would take too many pending pages
 * (bloomidx_tail_segment_rows), else pending pages (storage/README.md).
 * Every page is written whole and WAL-logged whole as it is written.  A
 * build runs in one process, or split over parallel workers
 * (parallel_build.cpp): each participant runs bloomidx_build_part_scan
 * over its share of the table, writing segments and pending pages of its
 * own; the leader joins their pending pages into one list, publishes all
 * in the metapage, and seals the list by the same rule.
 */
#include "bloomidx.h"

/*
 * The rows from which a build's last ones become a segment rather than
 * pending pages, when the index has nsegments other segments
 * (core/page_layout.hpp's tail_segment_rows).  Every query reads every
 * pending page row by row, and of a segment only its tested slices (or
 * nothing, where its filters rule it out).  Its slices packed (format 14),
 * a segment takes about the pages its rows would take pending, so the
 * tail is a segment once it would fill more than a few pending pages
 * (kTailPendingPages), which a scan reads in less time than a segment's
 * header and slices.  A segment of format 13's layout (which the tests
 * still write) takes its m slice pages
 * whatever its rows: there the tail is a segment once its pending pages
 * would be more than m / (nsegments + 1), which costs in size at most a
 * share of the index as large as one segment's, and a query reads no more
 * than that many pending pages after a serial build (after a parallel
 * one, up to a partly filled page more per participant).
 */
uint32
bloomidx_tail_segment_rows(const BloomidxState *state, uint32 nsegments)
{
	return (uint32) bloomidx::tail_segment_rows(state->meta.signature_bits, nsegments,
												state->geometry.capacity,
												bloomidx_segment_capacity(state->geometry.capacity),
												bloomidx_packs_slices());
}

void
bloomidx_build_ids_init(BuildSegmentIds *ids)
{
	SpinLockInit(&ids->mutex);
	ids->next_id = 1;
	ids->next_group_id = bloomidx::kFirstGroupId;
	ids->room = bloomidx::kMaxSegments;
}

void
bloomidx_build_part_init(BloomidxBuildPart *part, Relation index, bool shared_extension,
						 BuildSegmentIds *ids, bloomidx::SegmentEntry *entries)
{
	bloomidx_init_state(&part->state, index);
	bloomidx_state_filters(&part->state, index);
	bloomidx_segment_rows_init(&part->rows, part->state.meta.signature_bytes,
							   (uint32) bloomidx_segment_rows);
	part->ids = ids;
	part->entries = entries;
	part->nentries = 0;
	bloomidx_init_data_page(part->page.data);
	part->pending_head = InvalidBlockNumber;
	part->pending_tail = InvalidBlockNumber;
	part->pending_pages = 0;
	part->heap_tuples = 0;
	part->index_tuples = 0;
	bloomidx_block_writer_init(&part->writer, index, shared_extension, true);
	part->tuple_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx build row",
											ALLOCSET_DEFAULT_SIZES);
	/* Each row's filter keys, for its segment's filters and pending pages. */
	if (part->state.meta.filter_keys)
		bloomidx_segment_rows_keep_keys(&part->rows, (uint32) part->state.ncolumns);
	bloomidx_filter_group_init(&part->filters);
}

void
bloomidx_build_part_end(BloomidxBuildPart *part)
{
	bloomidx_segment_rows_free(&part->rows);
	bloomidx_filter_group_free(&part->filters);
	MemoryContextDelete(part->tuple_cxt);
}

/*
 * Appends the pending page being filled to the index, linked in front of
 * this part's earlier ones, and starts a fresh one.
 */
static void
flush_page(Relation index, BloomidxBuildPart *part)
{
	uint8	   *image = (uint8 *) part->page.data;

	bloomidx::set_pending_next(image, part->pending_head == InvalidBlockNumber
							   ? bloomidx::kMetaBlock : part->pending_head);

	/*
	 * Alone, the build owns the index (no one else can see it yet); beside
	 * other participants, extending it needs the extension lock, which
	 * PostgreSQL does not share within a parallel group.
	 */
	if (part->writer.shared_extension)
		LockRelationForExtension(index, ExclusiveLock);
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	if (part->writer.shared_extension)
		UnlockRelationForExtension(index, ExclusiveLock);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), image, BLCKSZ);
	MarkBufferDirty(buffer);
	/* Final now: logged whole by whoever filled it, so that workers share the WAL work. */
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	part->pending_head = BufferGetBlockNumber(buffer);
	if (part->pending_tail == InvalidBlockNumber)
		part->pending_tail = part->pending_head;
	part->pending_pages++;
	UnlockReleaseBuffer(buffer);

	/* A last page partly filled: inserts find its room through the map. */
	uint32		count = bloomidx::page_opaque(image)->count;

	if (count < part->state.geometry.capacity)
		RecordPageWithFreeSpace(index, part->pending_head,
								bloomidx::row_page_free_bytes(part->state.geometry, count));

	bloomidx_init_data_page(part->page.data);
}

/* Adds the gathered rows to pending pages (a tail, or no directory room). */
static void
rows_to_pending_pages(Relation index, BloomidxBuildPart *part)
{
	const bloomidx::RowPageGeometry *g = &part->state.geometry;
	uint8	   *page = (uint8 *) part->page.data;
	SegmentRows *rows = &part->rows;

	for (uint32 r = 0; r < rows->nrows; r++)
	{
		uint8		tail[bloomidx::kMaxRowTailBytes];

		bloomidx_segment_rows_tail(rows, r, g, tail);
		bloomidx::row_page_append(page, *g, rows->signatures + (Size) r * g->signature_bytes,
								  tail);
		if (bloomidx::page_opaque(page)->count == g->capacity)
			flush_page(index, part);
	}
	/* Signatures are made by ORing bits into their slot: it must start at zero. */
	memset(rows->signatures, 0, (Size) rows->nrows * g->signature_bytes);
	rows->nrows = 0;
}

/*
 * Writes the part's filter groups of the segments spooled so far, if any:
 * one, or a few whose rows fill their pages (bloomidx_filter_group_flush).
 */
static void
flush_filters(Relation index, BloomidxBuildPart *part)
{
	while (part->filters.nslots > 0)
	{
		uint32		group_id;

		SpinLockAcquire(&part->ids->mutex);
		group_id = part->ids->next_group_id++;
		SpinLockRelease(&part->ids->mutex);
		bloomidx_filter_group_flush(index, &part->filters, group_id, part->entries,
									&part->writer);
	}
}

/* Writes the gathered rows as a segment, if the directory has room for it. */
static void
flush_segment(Relation index, BloomidxBuildPart *part)
{
	uint32		id = 0;

	SpinLockAcquire(&part->ids->mutex);
	if (part->ids->room > 0)
	{
		part->ids->room--;
		id = part->ids->next_id++;
	}
	SpinLockRelease(&part->ids->mutex);
	if (id == 0)
	{
		rows_to_pending_pages(index, part);
		return;
	}
	uint32		taken;

	bloomidx_write_segment(index, &part->state, &part->rows, id, &part->writer, NULL, NULL, NULL,
						   false, &taken, &part->entries[id - 1]);
	FilterSpool spooled = bloomidx_filter_group_add(&part->filters, &part->state, &part->rows,
													id - 1);

	if (spooled == FILTERS_NEED_NEW_GROUP)
	{
		flush_filters(index, part);
		spooled = bloomidx_filter_group_add(&part->filters, &part->state, &part->rows, id - 1);
	}
	if (spooled == FILTERS_GROUP_FULL)
		flush_filters(index, part);
	part->nentries++;
	/* Signatures are made by ORing bits into their slot: it must start at zero. */
	memset(part->rows.signatures, 0, (Size) part->rows.nrows * part->rows.signature_bytes);
	part->rows.nrows = 0;
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	BloomidxBuildPart *part = (BloomidxBuildPart *) arg;
	SegmentRows *rows = &part->rows;
	MemoryContext old = MemoryContextSwitchTo(part->tuple_cxt);

	/* Made in place in the next slot (zeroed), beside its TID. */
	bloomidx_form_signature(&part->state, values, isnull,
							rows->signatures + (Size) rows->nrows * rows->signature_bytes,
							rows->keys ? rows->keys + (Size) rows->nrows * part->state.ncolumns
							: NULL);
	rows->tids[rows->nrows++] = *tid;

	MemoryContextSwitchTo(old);
	MemoryContextReset(part->tuple_cxt);

	part->index_tuples += 1;
	if (rows->nrows == rows->capacity)
		flush_segment(index, part);
}

/*
 * Indexes the rows of `scan` (a parallel scan's share; NULL: the whole
 * table), writing a segment whenever a segment's worth has gathered.
 */
void
bloomidx_build_part_scan(BloomidxBuildPart *part, Relation heap, Relation index,
						 IndexInfo *indexInfo, TableScanDesc scan, bool progress)
{
	part->heap_tuples += table_index_build_scan(heap, index, indexInfo, true, progress,
												build_callback, part, scan);
}

/*
 * The rows left over (less than a segment) become this part's pending
 * pages, or one more segment (bloomidx_tail_segment_rows) when the build
 * runs in one process.  A parallel participant makes them a segment only
 * where that takes no more pages than pending pages would (the rule with
 * no segment before it), and leaves the rest pending: the leader seals
 * what all participants left, by the rule with every segment counted.
 * Sealing in the leader alone would pack the rows into fewer segments, but
 * the pending pages it frees stay in the file (up to a segment's worth a
 * participant), and its rows are written twice.
 */
void
bloomidx_build_part_finish(BloomidxBuildPart *part, Relation index, bool parallel)
{
	if (part->rows.nrows > 0 &&
		part->rows.nrows >= bloomidx_tail_segment_rows(&part->state,
														parallel ? 0 : part->nentries))
		flush_segment(index, part);
	flush_filters(index, part);
	rows_to_pending_pages(index, part);
	if (bloomidx::page_opaque((uint8 *) part->page.data)->count > 0)
		flush_page(index, part);
}

/*
 * Enters a step of the build in CREATE INDEX's progress (bloomidx.h,
 * BuildPhase), with its tuple counts.  The table's blocks count in the
 * scan alone (table_index_build_scan sets them there): they go back to
 * zero, as btree's do after its scan.
 */
void
bloomidx_build_progress(BuildPhase phase, double tuples_total, double tuples_done)
{
	const int	params[] = {
		PROGRESS_CREATEIDX_SUBPHASE,
		PROGRESS_SCAN_BLOCKS_TOTAL,
		PROGRESS_SCAN_BLOCKS_DONE,
		PROGRESS_CREATEIDX_TUPLES_TOTAL,
		PROGRESS_CREATEIDX_TUPLES_DONE
	};
	const int64 values[] = {phase, 0, 0, (int64) tuples_total, (int64) tuples_done};

	pgstat_progress_update_multi_param(lengthof(params), params, values);
}

/* Sets the pending link of a page written by the build (chains of parts joined). */
static void
link_pending_page(Relation index, BlockNumber blkno, BlockNumber next)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *xlog = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(xlog, buffer, 0);

	bloomidx::set_pending_next((uint8 *) page, next);
	GenericXLogFinish(xlog);
	UnlockReleaseBuffer(buffer);
}

/*
 * Joins another participant's pending pages (head..tail, n pages) behind
 * the leader's (its segments' entries are in the shared array already).
 */
void
bloomidx_build_join(BloomidxBuildPart *leader, Relation index, BlockNumber head,
					BlockNumber tail, uint32 npages)
{
	if (npages == 0)
		return;
	if (leader->pending_tail == InvalidBlockNumber)
		leader->pending_head = head;
	else
		link_pending_page(index, leader->pending_tail, head);
	leader->pending_tail = tail;
	leader->pending_pages += npages;
}

/*
 * The metapage of a new index: the options frozen (the sizing they give,
 * and how each column's values are hashed), an empty directory, pending
 * list and free list.  options_elevel: how options that cannot apply are
 * reported (bloomidx_options_for_build).
 */
static void
fill_metapage(Relation index, Page page, int options_elevel)
{
	uint16		signature_bits;
	uint16		column_bits[INDEX_MAX_KEYS];
	uint8		column_hashing[INDEX_MAX_KEYS];
	int			ncolumns = RelationGetNumberOfAttributes(index);

	bloomidx_options_for_build(index, options_elevel, &signature_bits, column_bits);
	for (int i = 0; i < ncolumns; i++)
		column_hashing[i] = bloomidx_column_hashing(index, i);
	bloomidx_init_page(page, bloomidx::kPageMeta);
	/* Pending rows keep filter keys when the index has filters, for the seals. */
	bloomidx::meta_fill(bloomidx::meta_data((uint8 *) page), signature_bits,
						(uint16) ncolumns, column_bits, column_hashing,
						bloomidx_filter_bits_per_key(index) > 0);
	bloomidx::directory_init(bloomidx::directory_header((uint8 *) page));
	bloomidx::directory_page_list_init(bloomidx::directory_page_list((uint8 *) page));
	bloomidx::free_list_init(bloomidx::free_list((uint8 *) page));
	bloomidx::pending_filters_set(bloomidx::pending_filters((uint8 *) page), bloomidx::kMetaBlock, 0);
	/* pd_lower past the directory, so Generic WAL does not skip it as a hole */
	((PageHeader) page)->pd_lower = bloomidx::kMetaPageLower;
}

/*
 * Writes the metapage as block 0 and caches the options it freezes.
 * Filled first, as what the options lack is reported there (an ERROR or
 * a WARNING), with no buffer locked.
 */
static void
write_metapage(Relation index, int options_elevel)
{
	PGAlignedBlock metapage;

	fill_metapage(index, (Page) metapage.data, options_elevel);

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	Assert(BufferGetBlockNumber(buffer) == bloomidx::kMetaBlock);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), metapage.data, BLCKSZ);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);

	/* REINDEX may reuse a relcache entry that cached the old options. */
	if (index->rd_amcache != NULL)
		pfree(index->rd_amcache);
	index->rd_amcache = NULL;
}

/* Publishes the build's segments and pending pages in the metapage. */
static void
publish_build(Relation index, BloomidxBuildPart *part)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	bloomidx::DirectoryPageList none;
	bloomidx::DirectoryPageList pages;

	bloomidx::directory_page_list_init(&none);
	bloomidx_write_directory_pages(index, part->entries, part->nentries, NULL, 0, &none, 1, &pages);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	uint8	   *page = (uint8 *) BufferGetPage(buffer);
	bloomidx::DirectoryHeader *d = bloomidx::directory_header(page);

	memcpy(bloomidx::directory_entries(page), part->entries,
		   Min(part->nentries, bloomidx::kInlineSegments) * sizeof(bloomidx::SegmentEntry));
	*bloomidx::directory_page_list(page) = pages;
	d->nsegments = (uint16) part->nentries;
	d->next_segment_id = part->ids->next_id;
	d->next_group_id = part->ids->next_group_id;
	d->generation = 1;
	if (part->pending_pages > 0)
	{
		d->pending_head = part->pending_head;
		d->pending_tail = part->pending_tail;
		d->pending_pages = part->pending_pages;
	}
	d->check = bloomidx::directory_check(*d);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
}

IndexBuildResult *
bloomidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	write_metapage(index, bloomidx_options_elevel());
	/* Created now (CREATE INDEX, or the build of CREATE INDEX CONCURRENTLY), not rebuilt. */
	bloomidx_report_sizing(index, index->rd_createSubid != InvalidSubTransactionId ||
						   indexInfo->ii_Concurrent);

	BloomidxBuildPart *part = (BloomidxBuildPart *) palloc0(sizeof(BloomidxBuildPart));
	BuildSegmentIds ids;
	bloomidx::SegmentEntry *entries = (bloomidx::SegmentEntry *)
		palloc(bloomidx::kMaxSegments * sizeof(bloomidx::SegmentEntry));
	int			nworkers = bloomidx_parallel_build_workers(heap, index, indexInfo);

	bloomidx_build_ids_init(&ids);
	bloomidx_build_part_init(part, index, nworkers > 0, &ids, entries);
	bloomidx_build_progress(BUILD_PHASE_SCAN, 0, 0);
	if (nworkers == 0 || !bloomidx_build_parallel(heap, index, indexInfo, nworkers, part))
	{
		bloomidx_build_part_scan(part, heap, index, indexInfo, NULL, true);
		bloomidx_build_progress(BUILD_PHASE_LAST_ROWS, part->index_tuples,
								part->index_tuples - part->rows.nrows);
		bloomidx_build_part_finish(part, index, false);
	}
	bloomidx_build_progress(BUILD_PHASE_DIRECTORY, part->index_tuples, part->index_tuples);
	/* Every participant's segments are on disk: made durable before they are published. */
	bloomidx_block_writer_finish(&part->writer, index);
	publish_build(index, part);

	/*
	 * Data pages were logged as they were written; the metapage is logged
	 * whole now, before any Generic WAL record changes it: a record's
	 * changes are replayed onto the page as WAL left it, and without
	 * full_page_writes no record carries a page image.
	 */
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, bloomidx::kMetaBlock, bloomidx::kMetaBlock + 1,
						  true);
	/* The partly filled pages' room, recorded as they were written, made findable. */
	IndexFreeSpaceMapVacuum(index);

	/*
	 * Each parallel participant left fewer rows pending than fill m pages:
	 * they are sealed now, by the rule of a build's tail (the seal makes
	 * their filters from the rows' filter keys).  Under the seal lock, as
	 * every seal: no one inserts into the index yet, and bloomidx_seal()
	 * refuses an index CREATE INDEX CONCURRENTLY is building, but a seal
	 * never relies on that.
	 */
	if (nworkers > 0)
	{
		double		in_segments = 0;

		for (uint32 i = 0; i < part->nentries; i++)
			in_segments += part->entries[i].rows;
		bloomidx_build_progress(BUILD_PHASE_SEAL, part->index_tuples - in_segments, 0);
		LockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
		bloomidx_seal_all(index, Min(bloomidx_seal_threshold(part->state.geometry.capacity),
									 bloomidx_tail_segment_rows(&part->state, part->nentries)),
						  true);
		UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	}

	IndexBuildResult *result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));

	result->heap_tuples = part->heap_tuples;
	result->index_tuples = part->index_tuples;
	bloomidx_build_part_end(part);
	pfree(entries);
	pfree(part);
	return result;
}

/*
 * The init fork of an UNLOGGED index: just a metapage, written through the
 * buffer manager (which flushes init-fork pages at checkpoints as it does
 * permanent ones) and WAL-logged, as core index AMs do from 16 on.
 */
void
bloomidx_buildempty(Relation index)
{
	/*
	 * Filled first, as it may raise an ERROR, then copied in one go.  The
	 * main fork's build, just before, has reported what the options lack.
	 */
	PGAlignedBlock metapage;

	fill_metapage(index, (Page) metapage.data, DEBUG1);

	Buffer		buffer = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	Assert(BufferGetBlockNumber(buffer) == bloomidx::kMetaBlock);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	memcpy(BufferGetPage(buffer), metapage.data, BLCKSZ);
	MarkBufferDirty(buffer);
	log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
}
