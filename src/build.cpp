/*
 * build.cpp: CREATE INDEX (one heap scan, pages filled in local memory and
 * written whole, then WAL-logged in bulk) and the init fork of an index on
 * an UNLOGGED table.
 */
#include "bloomidx.h"

typedef struct BuildState
{
	BloomidxState state;
	PGAlignedBlock page;		/* the data page being filled */
	BlockNumber last_block;		/* last data page written */
	double		index_tuples;
	MemoryContext tuple_cxt;	/* reset after every row */
} BuildState;

/* Appends the page being filled to the index and starts a fresh one. */
static void
flush_page(Relation index, BuildState *build)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	memcpy(BufferGetPage(buffer), build->page.data, BLCKSZ);
	MarkBufferDirty(buffer);
	build->last_block = BufferGetBlockNumber(buffer);
	UnlockReleaseBuffer(buffer);

	bloomidx_init_data_page(build->page.data, &build->state.geometry);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
								 (int64) build->index_tuples);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	BuildState *build = (BuildState *) arg;
	const bloomidx::RowPageGeometry *g = &build->state.geometry;
	uint8	   *page = (uint8 *) build->page.data;
	uint16		slot = bloomidx::page_opaque(page)->count;
	MemoryContext old = MemoryContextSwitchTo(build->tuple_cxt);

	/*
	 * Made in place in the page's next signature slot (zeroed by PageInit),
	 * then appended with its TID.
	 */
	bloomidx_form_signature(&build->state, values, isnull,
							bloomidx::row_signature(page, *g, slot));
	bloomidx::row_page_append(page, *g, bloomidx::row_signature(page, *g, slot),
							  (const uint8 *) tid);

	MemoryContextSwitchTo(old);
	MemoryContextReset(build->tuple_cxt);

	build->index_tuples += 1;
	if (slot + 1u == g->capacity)
		flush_page(index, build);
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

	BuildState *build = (BuildState *) palloc0(sizeof(BuildState));

	bloomidx_init_state(&build->state, index);
	bloomidx_init_data_page(build->page.data, &build->state.geometry);
	build->last_block = InvalidBlockNumber;
	build->tuple_cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx build row",
											 ALLOCSET_DEFAULT_SIZES);

	double		heap_tuples = table_index_build_scan(heap, index, indexInfo, true, true,
													 build_callback, build, NULL);

	if (bloomidx::page_opaque((uint8 *) build->page.data)->count > 0)
		flush_page(index, build);

	/* Inserts start on the last page, the only one that may have room. */
	if (build->last_block != InvalidBlockNumber)
	{
		Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		bloomidx::meta_data((uint8 *) BufferGetPage(buffer))->insert_block = build->last_block;
		MarkBufferDirty(buffer);
		UnlockReleaseBuffer(buffer);
	}

	/* No WAL was written page by page: log every page now, 32 per record. */
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	MemoryContextDelete(build->tuple_cxt);

	IndexBuildResult *result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));

	result->heap_tuples = heap_tuples;
	result->index_tuples = build->index_tuples;
	pfree(build);
	return result;
}

/* The init fork of an UNLOGGED index: just a metapage. */
void
bloomidx_buildempty(Relation index)
{
	Page		page = (Page) palloc(BLCKSZ);

	bloomidx_fill_metapage(index, page);
	PageSetChecksumInplace(page, bloomidx::kMetaBlock);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, bloomidx::kMetaBlock, (char *) page, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				bloomidx::kMetaBlock, page, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
	pfree(page);
}
