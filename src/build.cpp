/*
 * build.cpp: CREATE INDEX and the init fork of an index on an UNLOGGED
 * table.  The metapage first; then the table's rows become segments and
 * pending pages (build_part.cpp, storage/README.md), every page written
 * whole and WAL-logged whole as it is written.  A build runs in one
 * process, or split over parallel workers (parallel_build.cpp): each
 * participant runs bloomidx_build_part_scan over its share of the table,
 * writing segments and pending pages of its own; the leader joins their
 * pending pages into one list, publishes all in the metapage, and seals
 * the list by the same rule.
 */
#include "bloomidx.h"

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

	/*
	 * A file emptied in place (a TRUNCATE of a table new in the
	 * transaction, ON COMMIT DELETE ROWS) starts its generations again:
	 * what this backend kept of it must go (header_cache.cpp).
	 */
	bloomidx_forget_group_headers(index);
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
	 * never relies on that.  Past about 2 billion rows (the directory
	 * full, maybe by that seal), what the build left pending gets filters,
	 * and a WARNING.
	 */
	LockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	if (nworkers > 0)
	{
		double		in_segments = 0;

		for (uint32 i = 0; i < part->nentries; i++)
			in_segments += part->entries[i].rows;
		bloomidx_build_progress(BUILD_PHASE_SEAL, part->index_tuples - in_segments, 0);
		bloomidx_seal_all(index, Min(bloomidx_seal_threshold(part->state.geometry.capacity),
									 bloomidx_tail_segment_rows(&part->state, part->nentries)),
						  true);
	}
	bloomidx_pending_filters_if_full(index);
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);

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
