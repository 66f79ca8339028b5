/*
 * build_part.cpp: one participant's part of CREATE INDEX (build.cpp), the
 * whole of it in a serial build.  Its rows, from its share of the table,
 * gather in memory; every segment's worth becomes a segment
 * (storage/segment_write.cpp), its filters added to the participant's
 * filter group as it goes, and what is left at the end, less than a
 * segment, becomes one more if it would take too many pending pages
 * (bloomidx_tail_segment_rows), else pending pages of its own, which the
 * leader of a parallel build joins into one list (bloomidx_build_join).
 * Segment ids and directory slots come from one shared counter
 * (BuildSegmentIds), so the participants' segments never collide.
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
	ids->room = bloomidx_max_segments();
	ids->has_like = false;
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
	bloomidx_filter_group_flush_all(index, &part->filters, part->ids, part->entries, &part->writer);
}

/* Spools the filters of the segment just written (entry entry_index), writing full groups. */
static void
spool_filters(Relation index, BloomidxBuildPart *part, uint32 entry_index)
{
	FilterSpool spooled = bloomidx_filter_group_add(&part->filters, &part->state, &part->rows,
													entry_index);

	if (spooled == FILTERS_NEED_NEW_GROUP)
	{
		flush_filters(index, part);
		spooled = bloomidx_filter_group_add(&part->filters, &part->state, &part->rows,
											entry_index);
	}
	if (spooled == FILTERS_GROUP_FULL)
		flush_filters(index, part);
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
	spool_filters(index, part, id - 1);
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
 * participant), and its rows are written twice.  A parallel part's
 * filters spooled last are left for the leader to write
 * (bloomidx_filter_group_export, _import).
 */
void
bloomidx_build_part_finish(BloomidxBuildPart *part, Relation index, bool parallel)
{
	if (part->rows.nrows > 0 &&
		part->rows.nrows >= bloomidx_tail_segment_rows(&part->state,
														parallel ? 0 : part->nentries))
		flush_segment(index, part);
	/* A parallel part's last group is the leader's to write, joined with the others'. */
	if (!parallel)
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
