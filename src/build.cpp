/*
 * build.cpp: CREATE INDEX (heap scans fill pages in local memory, each
 * written whole and WAL-logged whole as it is written, while it is still
 * in the CPU's cache) and the init fork of an index on an UNLOGGED table.  A build runs in one process, or split
 * over parallel workers (parallel_build.cpp): each participant runs
 * bloomidx_build_part_scan over its share of the table.
 */
#include "bloomidx.h"

void
bloomidx_build_part_init(BloomidxBuildPart *part, Relation index, bool shared_extension)
{
	bloomidx_init_state(&part->state, index);
	bloomidx_init_data_page(part->page.data);
	part->last_block = InvalidBlockNumber;
	part->heap_tuples = 0;
	part->index_tuples = 0;
	part->shared_extension = shared_extension;
	part->tuple_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx build row",
											ALLOCSET_DEFAULT_SIZES);
}

void
bloomidx_build_part_end(BloomidxBuildPart *part)
{
	MemoryContextDelete(part->tuple_cxt);
}

/* Appends the page being filled to the index and starts a fresh one. */
static void
flush_page(Relation index, BloomidxBuildPart *part)
{
	/*
	 * Alone, the build owns the index (no one else can see it yet); beside
	 * other participants, extending it needs the extension lock, which
	 * PostgreSQL does not share within a parallel group.
	 */
	if (part->shared_extension)
		LockRelationForExtension(index, ExclusiveLock);
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	if (part->shared_extension)
		UnlockRelationForExtension(index, ExclusiveLock);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), part->page.data, BLCKSZ);
	MarkBufferDirty(buffer);
	/* Final now: logged whole by whoever filled it, so that workers share the WAL work. */
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	part->last_block = BufferGetBlockNumber(buffer);
	UnlockReleaseBuffer(buffer);

	bloomidx_init_data_page(part->page.data);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	BloomidxBuildPart *part = (BloomidxBuildPart *) arg;
	const bloomidx::RowPageGeometry *g = &part->state.geometry;
	uint8	   *page = (uint8 *) part->page.data;
	uint16		slot = bloomidx::page_opaque(page)->count;
	MemoryContext old = MemoryContextSwitchTo(part->tuple_cxt);

	/*
	 * Made in place in the page's next signature slot (zeroed by PageInit),
	 * then appended with its TID.
	 */
	bloomidx_form_signature(&part->state, values, isnull,
							bloomidx::row_signature(page, *g, slot));
	bloomidx::row_page_append(page, *g, bloomidx::row_signature(page, *g, slot),
							  (const uint8 *) tid);

	MemoryContextSwitchTo(old);
	MemoryContextReset(part->tuple_cxt);

	part->index_tuples += 1;
	if (slot + 1u == g->capacity)
	{
		flush_page(index, part);
		if (!IsParallelWorker())
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
										 (int64) part->index_tuples);
	}
}

/*
 * Indexes the rows of `scan` (a parallel scan's share; NULL: the whole
 * table), writing every page it fills.  The last page, partly filled, stays
 * in part->page.
 */
void
bloomidx_build_part_scan(BloomidxBuildPart *part, Relation heap, Relation index,
						 IndexInfo *indexInfo, TableScanDesc scan, bool progress)
{
	part->heap_tuples += table_index_build_scan(heap, index, indexInfo, true, progress,
												build_callback, part, scan);
}

/*
 * Adds the entries of another participant's last page to this one's,
 * writing pages as they fill, so that a parallel build leaves one partly
 * filled page, as a serial one does.
 */
void
bloomidx_build_part_absorb(BloomidxBuildPart *part, Relation index, const char *other)
{
	const bloomidx::RowPageGeometry *g = &part->state.geometry;
	uint8	   *page = (uint8 *) part->page.data;
	const uint8 *from = (const uint8 *) other;
	uint32		count = bloomidx::page_opaque(from)->count;

	if (bloomidx::check_row_page(from, *g) != bloomidx::PageProblem::None)
		elog(ERROR, "bloomidx: a parallel build worker returned a malformed page");
	for (uint32 i = 0; i < count; i++)
	{
		bloomidx::row_page_append(page, *g, bloomidx::row_signature(from, *g, i),
								  bloomidx::row_tid(from, *g, i));
		if (bloomidx::page_opaque(page)->count == g->capacity)
			flush_page(index, part);
	}
}

/* Writes the metapage as block 0 and caches the options it freezes. */
static void
write_metapage(Relation index)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	Assert(BufferGetBlockNumber(buffer) == bloomidx::kMetaBlock);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	bloomidx_fill_metapage(index, BufferGetPage(buffer));
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);

	/* REINDEX may reuse a relcache entry that cached the old options. */
	if (index->rd_amcache != NULL)
		pfree(index->rd_amcache);
	index->rd_amcache = NULL;
}

IndexBuildResult *
bloomidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	write_metapage(index);
	/* Created now (CREATE INDEX, or the build of CREATE INDEX CONCURRENTLY), not rebuilt. */
	bloomidx_report_sizing(index, index->rd_createSubid != InvalidSubTransactionId ||
						   indexInfo->ii_Concurrent);

	BloomidxBuildPart *part = (BloomidxBuildPart *) palloc0(sizeof(BloomidxBuildPart));
	int			nworkers = bloomidx_parallel_build_workers(heap, index, indexInfo);

	bloomidx_build_part_init(part, index, nworkers > 0);
	if (nworkers == 0 || !bloomidx_build_parallel(heap, index, indexInfo, nworkers, part))
		bloomidx_build_part_scan(part, heap, index, indexInfo, NULL, true);

	if (bloomidx::page_opaque((uint8 *) part->page.data)->count > 0)
		flush_page(index, part);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) part->index_tuples);

	/* Inserts start on the last page, the only one that may have room. */
	if (part->last_block != InvalidBlockNumber)
	{
		Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		bloomidx::meta_data((uint8 *) BufferGetPage(buffer))->insert_block = part->last_block;
		MarkBufferDirty(buffer);
		UnlockReleaseBuffer(buffer);
	}

	/* Data pages were logged as they were written; the metapage is final now. */
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, bloomidx::kMetaBlock, bloomidx::kMetaBlock + 1,
						  true);

	IndexBuildResult *result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));

	result->heap_tuples = part->heap_tuples;
	result->index_tuples = part->index_tuples;
	bloomidx_build_part_end(part);
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
	/* Filled first, as it may raise an ERROR, then copied in one go. */
	PGAlignedBlock metapage;

	bloomidx_fill_metapage(index, (Page) metapage.data);

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
