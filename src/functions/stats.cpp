/*
 * stats.cpp: bloomidx_stats(index regclass), like pgstattuple's
 * pgstatindex: what an index holds, read page by page.
 *
 * Rows: the live rows are the rows a scan tests (the segments' rows whose
 * live bit is set, and every pending row); the dead ones are the
 * segments' rows whose live bit VACUUM cleared, which stay in their
 * segment until a merge rewrites it.  Like every index, bloomidx learns
 * of deletions only through VACUUM: a row deleted since, or whose
 * deletion is not yet visible to every transaction, counts as live; and
 * VACUUM removes a pending page's dead rows outright, so none is ever
 * counted dead.
 *
 * Pages by kind: every block but the metapage, so that the kinds and the
 * metapage add up to the index's length.  Free pages are the blocks on
 * the metapage's free list (a removed segment's blocks join it as they
 * are, still looking like its pages) and the pages freed one by one or
 * never written; every other page counts by what it says it is
 * (directory, pending, segment header, slice, TID, live, filter group
 * header or region page), those a crash left unreferenced too, until
 * VACUUM's sweep frees them.
 *
 * Fill: over the live rows (those a query's false positives come from),
 * the mean fraction of the signature's m bits a row sets, from a
 * histogram of rows by bits set (core/fill.hpp): a pending row's bits
 * are counted on its page, a segment's rows' bits one slice at a time
 * into a counter per row (a segment's rows at most, never the rows'
 * signatures).  Next to it, what the sizing model expects of a row whose
 * values are independent (core/fill.hpp's expected_fill), and each
 * column's one-column false-positive rate as the model predicts it
 * (bloomidx_false_positive_rate) and as the measured histogram implies
 * it.  Where they part, the rows are not what the index was sized for:
 * damage, or, most often, rows that share values.  A NULL sets its
 * column's bits as a value does (support/value_hash.cpp), the same ones in every row,
 * so where most rows are NULL in some columns their fill is that of a few
 * fixed sets of bits, above or below the model's average over random
 * values as those sets happen to overlap.
 *
 * It reads every page, one share lock at a time through a bulk-read ring
 * (so a large index does not push the rest out of shared buffers), with
 * each page checked as a scan checks it before its bits count: damage is
 * the scans' XX002 error.  The segments and the pending list come from
 * one copy of the directory, read again from the start when a seal or a
 * merge recycles a page meanwhile; the other pages are counted as found
 * afterwards, so under concurrent writes the figures are of no single
 * moment, as pgstattuple's are not.
 *
 * Reading every page costs what pgstatindex costs, so the extension
 * script grants EXECUTE as pgstattuple grants pgstatindex: to
 * pg_stat_scan_tables, not to PUBLIC.  Only an AccessShareLock on the
 * index.
 */
#include "functions/functions.h"

#include "core/fill.hpp"
#include "core/sizing.hpp"

extern "C" {
#include "funcapi.h"

PG_FUNCTION_INFO_V1(bloomidx_stats);
}

/* The kinds of page bloomidx_stats counts, in the order of its columns. */
typedef enum StatsKind
{
	STATS_DIRECTORY,
	STATS_PENDING,
	STATS_SEGMENT_HEADER,
	STATS_SLICE,
	STATS_TIDS,
	STATS_LIVE,
	STATS_FILTER,
	STATS_FREE,
	STATS_KEYS,					/* its last column (format 16; 1.2) */
	STATS_NKINDS
} StatsKind;

typedef struct IndexStats
{
	Relation	index;
	BufferAccessStrategy bas;
	uint32		m;				/* signature bits */
	bloomidx::RowPageGeometry geometry;

	/* Of one pass over a directory copy; zeroed when a pass starts again. */
	uint64	   *histogram;		/* m + 1 slots: live rows by bits set */
	int64		segment_live;
	int64		segment_dead;
	int64		pending_rows;
	uint32		segments;
	int64		pages[STATS_NKINDS];
	uint8	   *visited;		/* blocks the pass counted: bit b % 8 of byte b / 8 */
	BlockNumber visited_room;	/* blocks the bitmap covers */

	/* One segment at a time. */
	bloomidx::SegmentHeader *header;
	uint64	   *live;			/* kSliceWords words */
	uint16	   *counts;			/* kSegmentRows: each row's bits so far */
} IndexStats;

/* Block blkno counted as a page of `kind`. */
static void
count_visited(IndexStats *st, BlockNumber blkno, StatsKind kind)
{
	if (blkno >= st->visited_room)
	{
		BlockNumber room = Max(blkno + 1, st->visited_room * 2);

		st->visited = (uint8 *) repalloc(st->visited, room / 8 + 1);
		memset(st->visited + st->visited_room / 8 + 1, 0, room / 8 - st->visited_room / 8);
		st->visited_room = room;
	}
	st->visited[blkno / 8] |= (uint8) (1 << (blkno % 8));
	st->pages[kind]++;
}

static bool
was_visited(const IndexStats *st, BlockNumber blkno)
{
	return blkno < st->visited_room && (st->visited[blkno / 8] >> (blkno % 8)) & 1;
}

/* A new pass: nothing counted yet. */
static void
start_pass(IndexStats *st)
{
	memset(st->histogram, 0, (st->m + 1) * sizeof(uint64));
	st->segment_live = 0;
	st->segment_dead = 0;
	st->pending_rows = 0;
	st->segments = 0;
	memset(st->pages, 0, sizeof(st->pages));
	memset(st->visited, 0, st->visited_room / 8 + 1);
}

/*
 * Counts segment e's live rows, dead rows and its live rows' bits, from
 * its header, live page and slices (each checked).  False: a page was
 * recycled since the directory copy of `generation`.
 */
static bool
tally_segment(IndexStats *st, const bloomidx::SegmentEntry *e, uint32 generation,
			  BlockNumber nblocks)
{
	if (!bloomidx_copy_segment_page(st->index, e->header_block, NULL, generation,
									(char *) st->header, e, st->m, nblocks,
									bloomidx::kPageSegment))
		return false;
	if (!bloomidx_copy_segment_page(st->index, st->header->live_block, NULL, generation,
									(char *) st->live, e, st->m, nblocks,
									bloomidx::kPageLive))
		return false;

	memset(st->counts, 0, e->rows * sizeof(uint16));
	for (uint32 p = 0; p < bloomidx::slice_page_count(st->m, e->slices_per_page); p++)
	{
		bloomidx::SliceRange on = bloomidx::slice_page_range(p, st->m, e->slices_per_page);
		BlockNumber blkno = e->first_slice + p;

		CHECK_FOR_INTERRUPTS();
		Buffer		buffer = ReadBufferExtended(st->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												st->bas);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		bloomidx::PageProblem problem = bloomidx::check_slice_page(page, e->rows,
																   (uint16) on.first,
																   e->segment_id);

		/* Each slice on the page (packed slices share one), read once. */
		for (uint32 j = on.first; problem == bloomidx::PageProblem::None && j < on.end; j++)
			bloomidx::add_slice_counts(bloomidx::slice_page_words(page) +
									   bloomidx::slice_spot(j, e->rows, e->slices_per_page).word,
									   st->live, e->rows, st->counts);
		UnlockReleaseBuffer(buffer);
		if (problem != bloomidx::PageProblem::None)
			return !bloomidx_page_was_recycled(st->index, blkno, generation, problem);
	}
	bloomidx::add_counts_to_histogram(st->counts, st->live, e->rows, st->m, st->histogram);

	uint32		live = 0;

	for (uint32 r = 0; r < e->rows; r++)
		live += (st->live[r / 64] >> (r % 64)) & 1;
	st->segment_live += live;
	st->segment_dead += e->rows - live;
	st->segments++;
	count_visited(st, e->header_block, STATS_SEGMENT_HEADER);
	count_visited(st, st->header->live_block, STATS_LIVE);
	for (uint32 p = 0; p < bloomidx::slice_page_count(st->m, e->slices_per_page); p++)
		count_visited(st, e->first_slice + p, STATS_SLICE);
	for (uint32 p = 0; p < st->header->key_pages; p++)
		count_visited(st, st->header->live_block + 1 + st->header->ntid_pages + p, STATS_KEYS);
	return true;
}

/*
 * Counts the pending list's rows and their bits, from the head of the
 * directory copy, each page checked with its signatures' sum.  False: a
 * page was recycled since the copy.
 */
static bool
tally_pending(IndexStats *st, const DirectoryCopy *dir, BlockNumber nblocks)
{
	uint32		generation = dir->header.generation;
	PendingWalk walk;

	bloomidx_pending_walk_init(&walk, st->index, dir->header.pending_head, nblocks);
	while (bloomidx_pending_walk_more(&walk))
	{
		BlockNumber blkno = walk.blkno;

		CHECK_FOR_INTERRUPTS();
		Buffer		buffer = ReadBufferExtended(st->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												st->bas);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		if (bloomidx_pending_page_recycled(st->index, blkno, &buffer, generation, &st->geometry))
			return false;

		Page		page = BufferGetPage(buffer);
		const uint8 *raw = (const uint8 *) page;

		bloomidx_check_data_page(st->index, blkno, page, &st->geometry,
								 bloomidx::EntryChecks::Signatures);
		uint32		count = bloomidx::page_opaque(raw)->count;

		for (uint32 i = 0; i < count; i++)
			st->histogram[bloomidx::signature_fill(bloomidx::row_signature(raw, st->geometry, i),
												   st->m)]++;
		BlockNumber next = bloomidx::pending_next(raw);

		UnlockReleaseBuffer(buffer);
		st->pending_rows += count;
		count_visited(st, blkno, STATS_PENDING);
		bloomidx_pending_walk_follow(&walk, next);
	}
	return bloomidx_check_pending_count(st->index, dir, walk.visited);
}

/* One pass over the segments and the pending list of one directory copy. */
static bool
tally_rows(IndexStats *st)
{
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(st->index);
	bool		ok = true;

	start_pass(st);
	bloomidx_read_directory(st->index, &nblocks, dir);

	/* Blocks on the free list are free, whatever they held before. */
	for (uint32 x = 0; x < dir->free.count; x++)
	{
		const bloomidx::FreeExtent *e = &dir->free.extents[x];

		if ((uint64) e->first + e->nblocks > nblocks)
			nblocks = RelationGetNumberOfBlocks(st->index);
		if (e->first == bloomidx::kMetaBlock || (uint64) e->first + e->nblocks > nblocks)
			bloomidx_report_corrupted_page(st->index, bloomidx::kMetaBlock,
										   psprintf("Extent %u of the metapage's free list lies outside the index.", x));
		for (BlockNumber b = e->first; b < e->first + e->nblocks; b++)
			count_visited(st, b, STATS_FREE);
	}
	for (uint32 i = 0; ok && i < dir->header.nsegments; i++)
		ok = tally_segment(st, &dir->entries[i], dir->header.generation, nblocks);
	if (ok)
		ok = tally_pending(st, dir, nblocks);
	bloomidx_directory_copy_free(dir);
	return ok;
}

/* The pages the passes did not count, by what each says it is. */
static BlockNumber
count_other_pages(IndexStats *st)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(st->index);

	for (BlockNumber blkno = 1; blkno < nblocks; blkno++)
	{
		if (was_visited(st, blkno))
			continue;
		CHECK_FOR_INTERRUPTS();
		Buffer		buffer = ReadBufferExtended(st->index, MAIN_FORKNUM, blkno, RBM_NORMAL,
												st->bas);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		uint16		kind;
		bloomidx::PageProblem problem = bloomidx_page_kind(BufferGetPage(buffer), &kind);

		UnlockReleaseBuffer(buffer);
		if (problem != bloomidx::PageProblem::None)
			bloomidx_report_page_problem(st->index, blkno, problem);
		switch (kind)
		{
			case bloomidx::kPageDirectory:
				st->pages[STATS_DIRECTORY]++;
				break;
			case bloomidx::kPageData:
			case bloomidx::kPageSealing:
				st->pages[STATS_PENDING]++;
				break;
			case bloomidx::kPageSegment:
				st->pages[STATS_SEGMENT_HEADER]++;
				break;
			case bloomidx::kPageSlice:
				st->pages[STATS_SLICE]++;
				break;
			case bloomidx::kPageTids:
				st->pages[STATS_TIDS]++;
				break;
			case bloomidx::kPageLive:
				st->pages[STATS_LIVE]++;
				break;
			case bloomidx::kPageKeys:
				st->pages[STATS_KEYS]++;
				break;
			case bloomidx::kPageFilterGroup:
			case bloomidx::kPageFilter:
				st->pages[STATS_FILTER]++;
				break;
			case bloomidx::kPageMeta:
				/* Only block 0 is a metapage. */
				bloomidx_report_page_problem(st->index, blkno, bloomidx::PageProblem::WrongKind);
				break;
			default:			/* new, free, listed */
				st->pages[STATS_FREE]++;
				break;
		}
	}
	return nblocks;
}

/* A float8[] of n values; NULL where a value is negative (none measured). */
static Datum
float8_array(const double *values, int n, bool *null_array)
{
	Datum	   *datums = (Datum *) palloc(n * sizeof(Datum));

	*null_array = n == 0;
	for (int i = 0; i < n; i++)
	{
		if (values[i] < 0)
		{
			*null_array = true;
			return (Datum) 0;
		}
		datums[i] = Float8GetDatum(values[i]);
	}
	return PointerGetDatum(construct_array(datums, n, FLOAT8OID, sizeof(float8),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

#define STATS_COLUMNS 20

Datum
bloomidx_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = bloomidx_index_argument(fcinfo, "bloomidx_stats");
	TupleDesc	tupdesc = bloomidx_result_row_type(fcinfo, "bloomidx_stats");
	Relation	index = bloomidx_open_metapage_reader(indexoid, "pages", AccessShareLock);
	/* A copy: a relcache rebuild frees the cache meanwhile. */
	bloomidx::MetaPageData meta_copy = *bloomidx_cached_meta(index);
	const bloomidx::MetaPageData *meta = &meta_copy;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx stats",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	IndexStats *st = (IndexStats *) palloc0(sizeof(IndexStats));

	st->index = index;
	st->bas = GetAccessStrategy(BAS_BULKREAD);
	st->m = meta->signature_bits;
	st->geometry = bloomidx::meta_row_geometry(*meta);
	st->histogram = (uint64 *) palloc((st->m + 1) * sizeof(uint64));
	st->visited_room = RelationGetNumberOfBlocks(index);
	st->visited = (uint8 *) palloc(st->visited_room / 8 + 1);
	st->header = (bloomidx::SegmentHeader *) palloc(sizeof(bloomidx::SegmentHeader));
	st->live = (uint64 *) palloc(bloomidx::kSliceWords * sizeof(uint64));
	st->counts = (uint16 *) palloc(bloomidx::kSegmentRows * sizeof(uint16));

	while (!tally_rows(st))
		ereport(DEBUG1,
				(errmsg_internal("bloomidx_stats: a page of index \"%s\" was recycled: counting again",
								 RelationGetRelationName(index))));
	BlockNumber nblocks = count_other_pages(st);

	int			ncolumns = meta->ncolumns;
	Datum	   *column_bits = (Datum *) palloc(ncolumns * sizeof(Datum));
	double		predicted_rates[INDEX_MAX_KEYS];
	double		fill_rates[INDEX_MAX_KEYS];

	for (int i = 0; i < ncolumns; i++)
	{
		column_bits[i] = Int32GetDatum(meta->column_bits[i]);
		predicted_rates[i] = bloomidx::false_positive_rate(*meta, (uint32) 1 << i);
		fill_rates[i] = bloomidx::histogram_rate(st->histogram, st->m, meta->column_bits[i]);
	}

	Datum		values[STATS_COLUMNS];
	bool		nulls[STATS_COLUMNS];
	int			c = 0;

	memset(nulls, 0, sizeof(nulls));
	values[c++] = Int64GetDatum(st->segment_live + st->pending_rows);
	values[c++] = Int64GetDatum(st->segment_dead);
	values[c++] = Int32GetDatum((int32) st->segments);
	values[c++] = Int64GetDatum(st->pending_rows);
	values[c++] = Int64GetDatum((int64) nblocks);
	for (int k = 0; k <= STATS_FREE; k++)
		values[c++] = Int64GetDatum(st->pages[k]);
	values[c++] = Int32GetDatum(st->m);
	values[c++] = PointerGetDatum(construct_array(column_bits, ncolumns, INT4OID, sizeof(int32),
												  true, TYPALIGN_INT));

	double		fill = bloomidx::histogram_fill(st->histogram, st->m);

	nulls[c] = fill < 0;
	values[c++] = Float8GetDatum(fill);
	values[c++] = Float8GetDatum(bloomidx::expected_fill(st->m, meta->column_bits, ncolumns));
	values[c] = float8_array(predicted_rates, ncolumns, &nulls[c]);
	c++;
	values[c] = float8_array(fill_rates, ncolumns, &nulls[c]);
	c++;
	values[c++] = Int64GetDatum(st->pages[STATS_KEYS]);
	Assert(c == STATS_COLUMNS);

	MemoryContextSwitchTo(old);
	HeapTuple	tuple = heap_form_tuple(tupdesc, values, nulls);

	FreeAccessStrategy(st->bas);
	MemoryContextDelete(cxt);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}
