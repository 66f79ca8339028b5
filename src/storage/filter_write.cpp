/*
 * filter_write.cpp: writing segment filter groups (storage/README.md,
 * *Segment filters*; the page format is in core/page_layout.hpp).
 *
 * A build makes each segment's filters from the filter keys of its rows,
 * as a group of one slot (block counts: the group's first segment's,
 * doubled as the segment's keys need), and spools them to a temporary
 * file.  Once kGroupSlots segments are spooled, or the build ends, it
 * writes their group (or groups whose rows fill their pages): a header
 * page and its region pages in one run of new blocks, each logged whole,
 * each region page composed from a window of every slot's rows
 * (group_rows_compose), read back a batch of pages at a time.  Holding a
 * full group in memory instead would take up to 470 MB a participant
 * (1,016 slots of six near-unique columns); the spool holds a segment's
 * filters at a time, and the batch is bounded.
 * Only then are the filters named in the segments' directory entries,
 * which the leader publishes with the rest of the build.
 *
 * A seal gives its segment a group of its own, of one slot, made the same
 * way from the filter keys the pending rows keep, and written with the
 * segment (segment_write.cpp).
 */
#include "storage/storage.h"

/*
 * The region pages a group is written in batches of: about this many
 * bytes of them, and as many of the spool's rows read back for them.
 */
#define COMPOSE_BATCH_BYTES (4 * 1024 * 1024)

/*
 * A group's column takes at most this many times the blocks of its first
 * segment's: a segment whose values need more starts a new group, so that
 * one segment of many values (a column of 40 values a segment, then one of
 * 65,000) does not widen 1,015 other slots a thousandfold.
 */
#define GROUP_MAX_WIDENING 2

/* The name of a parallel build participant's spool in the build's file set. */
static char *
spool_name(int participant)
{
	return psprintf("bloomidx-filters-%d", participant);
}


void
bloomidx_filter_group_init(FilterGroupBuild *g)
{
	memset(g, 0, sizeof(*g));
}

void
bloomidx_filter_group_free(FilterGroupBuild *g)
{
	if (g->spool)
		BufFileClose(g->spool);
	if (g->slot_header)
		pfree(g->slot_header);
	bloomidx_filter_group_init(g);
}

/*
 * Sizes the filters of the segment of `rows` alone, a group of one slot,
 * in *h: each column by its distinct keys; given `like` (the block counts
 * of a build group's first slot, or of the build's first segment), like's
 * block count doubled as often as those keys need
 * (filter_blocks_in_group); `in_family` (a seal's or a merge's), rounded
 * up to a full segment's count times a power of two
 * (filter_blocks_in_family), so that VACUUM can gather the groups of any
 * seals and merges, widening a slot only by a whole factor, which keeps
 * its rate (filter_gather.cpp).  False without filters or keys.
 */
static bool
size_segment_filters(const BloomidxState *state, const SegmentRows *rows, const uint16 *like,
					 bool in_family, bloomidx::FilterGroupHeader *h)
{
	uint32		ncolumns = (uint32) state->ncolumns;
	uint32		family = in_family
		? bloomidx::filter_family_blocks(bloomidx::kSegmentRows, state->filter_bits_per_key,
										 bloomidx::kMaxFilterBlocks)
		: 0;

	if (rows->keys == NULL || state->filter_bits_per_key <= 0 || rows->nrows == 0)
		return false;

	uint64	   *bitmap = (uint64 *) palloc(bloomidx::kDistinctWords * sizeof(uint64));
	uint32		distinct[INDEX_MAX_KEYS];

	for (uint32 c = 0; c < ncolumns; c++)
		distinct[c] = bloomidx::distinct_estimate(rows->keys + c, rows->nrows, ncolumns, bitmap);
	pfree(bitmap);
	bloomidx::filter_group_init(h, 0, ncolumns, distinct, state->filter_bits_per_key, 1);
	/* (A column without a filter, 0 blocks, stays so in the family.) */
	for (uint32 c = 0; (like != NULL || in_family) && c < ncolumns; c++)
		h->columns[c].blocks = (uint16) (like != NULL
										 ? bloomidx::filter_blocks_in_group(like[c],
																			h->columns[c].blocks,
																			bloomidx::kMaxFilterBlocks)
										 : bloomidx::filter_blocks_in_family(h->columns[c].blocks,
																			 family,
																			 bloomidx::kMaxFilterBlocks));
	h->region_pages = bloomidx::group_region_pages(*h);
	h->check = bloomidx::filter_group_check(*h);
	return true;
}

/* Makes filters->image, the filters filters->header sizes, from the rows' keys. */
static void
fill_segment_filters(const BloomidxState *state, const SegmentRows *rows,
					 SegmentFilters *filters)
{
	uint32		ncolumns = (uint32) state->ncolumns;
	uint8	   *scratch = (uint8 *) palloc(bloomidx::kFilterScratchBytes);

	filters->image = (uint8 *) palloc_extended((Size) bloomidx::group_region_rows(filters->header) *
											   bloomidx::group_row_bytes(filters->header),
											   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (uint32 c = 0; c < ncolumns; c++)
		bloomidx::group_image_add_column(filters->image, filters->header, c, 0, rows->keys + c,
										 rows->nrows, ncolumns, scratch);
	filters->header.slots_taken = 1;
	pfree(scratch);
}

/*
 * The filters of a seal's segment, from its rows' filter keys: a group of
 * one slot, each column sized by its distinct keys.  False (nothing made)
 * without filters or keys.  Memory in the current context.
 */
bool
bloomidx_segment_filters(const BloomidxState *state, const SegmentRows *rows,
						 SegmentFilters *filters)
{
	if (!size_segment_filters(state, rows, NULL, true, &filters->header))
		return false;
	fill_segment_filters(state, rows, filters);
	return true;
}

/*
 * Takes the block counts every group of a parallel build starts from into
 * g->like: those another participant shared, if any (true); else, given
 * `mine` (this participant's first segment's filters, sized alone), shares
 * those (false: g->like is mine's).  Under the spinlock, so that every
 * participant takes the same counts.
 */
static bool
take_shared_like(FilterGroupBuild *g, const bloomidx::FilterGroupHeader *mine)
{
	bool		taken = false;

	SpinLockAcquire(&g->shared->mutex);
	if (g->shared->has_like)
	{
		memcpy(g->like, g->shared->like, sizeof(g->like));
		g->has_like = taken = true;
	}
	else if (mine != NULL)
	{
		for (uint32 c = 0; c < mine->ncolumns; c++)
			g->shared->like[c] = g->like[c] = mine->columns[c].blocks;
		g->shared->has_like = g->has_like = true;
	}
	SpinLockRelease(&g->shared->mutex);
	return taken;
}

/* Seeks the spool to row `row` of the slot spooled at (file, offset). */
static void
seek_spool(BufFile *spool, int file, off_t offset, uint32 row)
{
	if (BufFileSeek(spool, file, offset + (off_t) row * bloomidx::kFilterBlockBytes, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not seek in the temporary file of a bloomidx build's filters")));
}

/*
 * Spools the filters of the segment of `rows` (written: its entry is
 * entries[entry_index]) for the part's next group (FilterSpool says what
 * the caller does next).  Nothing without filters (segment_filter_rate =
 * 0) or filter keys.
 */
FilterSpool
bloomidx_filter_group_add(FilterGroupBuild *g, const BloomidxState *state,
						  const SegmentRows *rows, uint32 entry_index)
{
	SegmentFilters filters;
	uint16		first[INDEX_MAX_KEYS];
	const uint16 *like = NULL;

	if (g->nslots > 0)
	{
		for (uint32 c = 0; c < (uint32) state->ncolumns; c++)
			first[c] = g->slot_header[0].columns[c].blocks;
		like = first;
	}
	else if (g->shared != NULL && (g->has_like || take_shared_like(g, NULL)))
		like = g->like;

	/*
	 * A group's slots take its first segment's block counts (in a parallel
	 * build, every group the build's first segment's), doubled where a
	 * segment's keys need it: a slot of any other count would be widened
	 * into the group's with blocks that draw on two source blocks, holding
	 * both one's bits (measured: a 2-column miss on 32 M rows read 3.5
	 * times the pages, its segments passing far more often).
	 */
	if (!size_segment_filters(state, rows, like, false, &filters.header))
		return FILTERS_NONE;
	if (like == NULL && g->shared != NULL && take_shared_like(g, &filters.header))
	{
		/* Another participant's first segment came first: its counts. */
		like = g->like;
		(void) size_segment_filters(state, rows, like, false, &filters.header);
	}
	for (uint32 c = 0; like != NULL && c < (uint32) state->ncolumns; c++)
		if (filters.header.columns[c].blocks > GROUP_MAX_WIDENING * like[c])
		{
			if (g->nslots > 0)
				return FILTERS_NEED_NEW_GROUP;	/* checked before its filters are made */
			/* A new group of counts of its own: the build's first segment's are too few. */
			(void) size_segment_filters(state, rows, NULL, false, &filters.header);
			break;
		}
	fill_segment_filters(state, rows, &filters);
	if (g->spool == NULL)
	{
		/* In temp_tablespaces, as a sort's or a hash join's files. */
		PrepareTempTablespaces();
		if (g->fileset != NULL)
		{
			char	   *name = spool_name(g->participant);

			g->spool = BufFileCreateFileSet(g->fileset, name);
			pfree(name);
		}
		else
			g->spool = BufFileCreateTemp(false);
	}
	if (g->slot_header == NULL)
		g->slot_header = (bloomidx::FilterGroupHeader *)
			palloc(bloomidx::kGroupSlots * sizeof(bloomidx::FilterGroupHeader));

	uint32		slot = g->nslots;

	g->slot_spool[slot] = g->spool;
	BufFileTell(g->spool, &g->spool_file[slot], &g->spool_offset[slot]);
	BufFileWrite(g->spool, filters.image,
				 (Size) bloomidx::group_region_rows(filters.header) * bloomidx::kFilterBlockBytes);
	pfree(filters.image);
	g->slot_header[slot] = filters.header;
	g->entry_index[slot] = entry_index;
	g->nslots++;
	return g->nslots == bloomidx::kGroupSlots ? FILTERS_GROUP_FULL : FILTERS_SPOOLED;
}

/*
 * Reads the window of rows each of the first `slots` slots has for region
 * rows [first, first + n) of group h into *stage (grown as needed),
 * filling sources.
 */
static void
read_windows(FilterGroupBuild *g, uint32 slots, const bloomidx::FilterGroupHeader *h,
			 uint32 first, uint32 n, uint8 **stage, Size *stage_bytes,
			 bloomidx::GroupRowsSource *sources)
{
	uint32		window_first[bloomidx::kGroupSlots];
	uint32		window_end[bloomidx::kGroupSlots];
	Size		need = 0;

	for (uint32 s = 0; s < slots; s++)
	{
		bloomidx::group_source_window(*h, first, n, g->slot_header[s], &window_first[s],
									  &window_end[s]);
		need += (Size) (window_end[s] - window_first[s]) * bloomidx::kFilterBlockBytes;
	}
	if (need > *stage_bytes)
	{
		*stage = (uint8 *) repalloc_huge(*stage, need);
		*stage_bytes = need;
	}

	Size		at = 0;

	for (uint32 s = 0; s < slots; s++)
	{
		Size		bytes = (Size) (window_end[s] - window_first[s]) * bloomidx::kFilterBlockBytes;

		if (bytes > 0)
		{
			seek_spool(g->slot_spool[s], g->spool_file[s], g->spool_offset[s], window_first[s]);
			bloomidx_buffile_read_exact(g->slot_spool[s], *stage + at, bytes);
		}
		sources[s].header = &g->slot_header[s];
		sources[s].rows = *stage + at;
		sources[s].first_row = window_first[s];
		sources[s].end_row = window_end[s];
		sources[s].slot_base = s;
		at += bytes;
	}
}

/*
 * Writes the first of the segments spooled so far (the most whose rows
 * fill their pages: group_slots_packed) as group `group_id`, at the end
 * of the index, and names it in their entries; the caller calls again
 * while any are left (g->nslots).
 */
void
bloomidx_filter_group_flush(Relation index, FilterGroupBuild *g, uint32 group_id,
							bloomidx::SegmentEntry *entries, const BlockWriter *writer)
{
	if (g->nslots == 0)
		return;

	bloomidx::FilterGroupHeader h;
	uint32		slots = bloomidx::group_slots_packed(g->nslots);

	bloomidx::merged_group_init(&h, g->slot_header, slots,
								(uint32) g->slot_header[0].ncolumns, slots);
	h.group_id = group_id;
	h.slots_taken = (uint16) slots;
	for (uint32 s = 0; s < slots; s++)
		h.slot_segment[s] = entries[g->entry_index[s]].segment_id;
	h.check = bloomidx::filter_group_check(h);

	uint32		rows_total = bloomidx::group_region_rows(h);
	uint32		per_page = bloomidx::group_rows_per_page(h);
	uint32		row_bytes = bloomidx::group_row_bytes(h);
	uint32		batch_pages = bloomidx_debug_filter_batch_pages > 0
		? (uint32) bloomidx_debug_filter_batch_pages
		: Max(1, COMPOSE_BATCH_BYTES / (per_page * row_bytes));
	BlockNumber first = bloomidx_extend_run(index, 1 + h.region_pages, writer);
	bloomidx::GroupRowsSource *sources = (bloomidx::GroupRowsSource *)
		palloc(slots * sizeof(bloomidx::GroupRowsSource));
	uint8	   *batch = (uint8 *) palloc((Size) batch_pages * per_page * row_bytes);
	Size		stage_bytes = COMPOSE_BATCH_BYTES;
	uint8	   *stage = (uint8 *) palloc(stage_bytes);
	BloomidxIOBlock page;

	for (uint32 i = 0; i < h.region_pages; i += batch_pages)
	{
		uint32		first_row = i * per_page;
		uint32		n = Min(batch_pages * per_page, rows_total - first_row);

		read_windows(g, slots, &h, first_row, n, &stage, &stage_bytes, sources);
		if (!bloomidx::group_rows_compose(batch, h, first_row, n, sources, slots))
			elog(ERROR, "bloomidx: the filters of a build's segments do not fit their group");
		for (uint32 p = i; p < Min(i + batch_pages, h.region_pages); p++)
		{
			uint32		at = (p - i) * per_page;

			PageInit((Page) page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
			bloomidx::filter_page_fill((uint8 *) page.data, h, batch + (Size) at * row_bytes,
									   Min(per_page, n - at), p);
			bloomidx_write_run_block(index, first + 1 + p, page.data, writer);
		}
		CHECK_FOR_INTERRUPTS();
	}
	/* The header, which names the others, last. */
	PageInit((Page) page.data, BLCKSZ, sizeof(bloomidx::PageOpaque));
	bloomidx::filter_group_page_fill((uint8 *) page.data, h);
	bloomidx_write_run_block(index, first, page.data, writer);

	for (uint32 s = 0; s < slots; s++)
	{
		bloomidx::SegmentEntry *e = &entries[g->entry_index[s]];

		e->filter_block = first;
		e->filter_offset = (uint16) s;
		e->filter_group = h.group_id;
		e->check = bloomidx::segment_entry_check(*e);
	}
	pfree(stage);
	pfree(batch);
	pfree(sources);

	/* The slots left move to the front; once none is, the spool starts over. */
	g->nslots -= slots;
	memmove(&g->slot_header[0], &g->slot_header[slots], g->nslots * sizeof(g->slot_header[0]));
	memmove(&g->slot_spool[0], &g->slot_spool[slots], g->nslots * sizeof(g->slot_spool[0]));
	memmove(&g->spool_file[0], &g->spool_file[slots], g->nslots * sizeof(g->spool_file[0]));
	memmove(&g->spool_offset[0], &g->spool_offset[slots], g->nslots * sizeof(g->spool_offset[0]));
	memmove(&g->entry_index[0], &g->entry_index[slots], g->nslots * sizeof(g->entry_index[0]));
	if (g->nslots == 0 && g->spool != NULL)
		seek_spool(g->spool, 0, 0, 0);
}

/* Writes every group of the segments spooled so far (each flush writes one, or a few). */
void
bloomidx_filter_group_flush_all(Relation index, FilterGroupBuild *g, BuildSegmentIds *ids,
								bloomidx::SegmentEntry *entries, const BlockWriter *writer)
{
	while (g->nslots > 0)
	{
		uint32		group_id;

		SpinLockAcquire(&ids->mutex);
		group_id = ids->next_group_id++;
		SpinLockRelease(&ids->mutex);
		bloomidx_filter_group_flush(index, g, group_id, entries, writer);
	}
}

/*
 * A parallel build's last groups, one per participant, each partly filled
 * (a full one each participant writes itself), would each cost a query a
 * region page a key: the leader writes them as one group, or as few as
 * their kGroupSlots slots a group allow.  Each participant spools into a
 * file of the build's shared file set, named by its number; its slots'
 * block counts start from the build's first segment's
 * (BuildSegmentIds.like), so that they join a group without a block
 * drawing on two (filter_blocks_in_group); at its end it writes the
 * slots' headers and places after their rows (export), which the leader
 * reads back (import) and gives slots in its own group.  Measured on 2 M
 * rows, segments of 1,024 rows, three participants: 2 groups of 1,953
 * segments where there were 3, a 2-column miss two region pages fewer;
 * 2 M to 32 M rows, one group where there were three.
 */
/*
 * Makes g a parallel build participant's: its groups start from the
 * build's first segment's block counts, shared in *shared; a worker's
 * spool is made in fileset (the leader's, NULL, stays its own).
 */
void
bloomidx_filter_group_share(FilterGroupBuild *g, BuildSegmentIds *shared, FileSet *fileset,
							int participant)
{
	g->shared = shared;
	g->fileset = fileset;
	g->participant = participant;
}

/*
 * Writes where the slots spooled so far (none written: a parallel part's
 * last ones) lie into the spool after their rows, as *left says, and
 * hands the spool to the leader.  Only after the last add: the spool's
 * position is then the end of the last slot's rows.
 */
void
bloomidx_filter_group_export(FilterGroupBuild *g, FilterSlotsLeft *left)
{
	left->nslots = 0;
	if (g->nslots == 0 || g->spool == NULL)
		return;
	Assert(g->fileset != NULL);
	BufFileTell(g->spool, &left->file, &left->offset);
	for (uint32 s = 0; s < g->nslots; s++)
		BufFileWrite(g->spool, &g->slot_header[s], bloomidx::kGroupHeaderFixedBytes);
	BufFileWrite(g->spool, g->spool_file, g->nslots * sizeof(g->spool_file[0]));
	BufFileWrite(g->spool, g->spool_offset, g->nslots * sizeof(g->spool_offset[0]));
	BufFileWrite(g->spool, g->entry_index, g->nslots * sizeof(g->entry_index[0]));
	BufFileExportFileSet(g->spool);
	left->nslots = g->nslots;
	g->nslots = 0;
}

/*
 * Whether a slot of `slot`'s block counts joins a group whose first slot
 * has `first`'s: each column's count and the first's are a power of two
 * apart (the group takes the most, and every slot widens into it whole),
 * and the slot's at most GROUP_MAX_WIDENING times the first's, as
 * bloomidx_filter_group_add keeps a participant's slots.
 */
static bool
slot_joins_group(const bloomidx::FilterGroupHeader *first, const bloomidx::FilterGroupHeader *slot)
{
	if (first->ncolumns != slot->ncolumns)
		return false;
	for (uint32 c = 0; c < first->ncolumns; c++)
	{
		uint32		a = first->columns[c].blocks,
					b = slot->columns[c].blocks;

		if ((a == 0) != (b == 0) || (a != 0 && first->columns[c].probes != slot->columns[c].probes))
			return false;
		if (a == 0)
			continue;

		uint32		lo = Min(a, b),
					hi = Max(a, b);

		if (hi % lo != 0 || ((hi / lo) & (hi / lo - 1)) != 0 || b > GROUP_MAX_WIDENING * a)
			return false;
	}
	return true;
}

/*
 * The leader: gives the slots participant `participant` left (*left) slots
 * in g, after its own, writing a group whenever one is full or a slot
 * would not join it.  Returns the participant's spool, open until the
 * caller has written the last group (bloomidx_filter_group_flush_all).
 */
BufFile *
bloomidx_filter_group_import(FilterGroupBuild *g, FileSet *fileset, int participant,
							 const FilterSlotsLeft *left, Relation index,
							 bloomidx::SegmentEntry *entries, BuildSegmentIds *ids,
							 const BlockWriter *writer)
{
	uint32		n = left->nslots;
	char	   *name = spool_name(participant);
	BufFile    *spool = BufFileOpenFileSet(fileset, name, O_RDONLY, false);
	bloomidx::FilterGroupHeader *headers = (bloomidx::FilterGroupHeader *)
		palloc0((Size) n * sizeof(bloomidx::FilterGroupHeader));
	int		   *files = (int *) palloc(n * sizeof(int));
	off_t	   *offsets = (off_t *) palloc(n * sizeof(off_t));
	uint32	   *entry_index = (uint32 *) palloc(n * sizeof(uint32));

	if (BufFileSeek(spool, left->file, left->offset, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not seek in the temporary file of a bloomidx build's filters")));
	for (uint32 s = 0; s < n; s++)
		bloomidx_buffile_read_exact(spool, &headers[s], bloomidx::kGroupHeaderFixedBytes);
	bloomidx_buffile_read_exact(spool, files, n * sizeof(int));
	bloomidx_buffile_read_exact(spool, offsets, n * sizeof(off_t));
	bloomidx_buffile_read_exact(spool, entry_index, n * sizeof(uint32));

	if (g->slot_header == NULL)
		g->slot_header = (bloomidx::FilterGroupHeader *)
			palloc(bloomidx::kGroupSlots * sizeof(bloomidx::FilterGroupHeader));
	for (uint32 s = 0; s < n; s++)
	{
		if (g->nslots == bloomidx::kGroupSlots ||
			(g->nslots > 0 && !slot_joins_group(&g->slot_header[0], &headers[s])))
			bloomidx_filter_group_flush_all(index, g, ids, entries, writer);

		uint32		slot = g->nslots++;

		g->slot_header[slot] = headers[s];
		g->slot_spool[slot] = spool;
		g->spool_file[slot] = files[s];
		g->spool_offset[slot] = offsets[s];
		g->entry_index[slot] = entry_index[s];
	}
	pfree(entry_index);
	pfree(offsets);
	pfree(files);
	pfree(headers);
	pfree(name);
	return spool;
}

/*
 * The blocks of the filter group segment e has right after its header (a
 * seal's or merge's, every slot its own, its pages one run), which its
 * removal gives back with its extent; 0 if it has none there, or if the
 * group's header is not sound (then its pages are left to VACUUM's sweep).
 */
uint32
bloomidx_own_group_blocks(Relation index, const bloomidx::SegmentEntry *e, BlockNumber nblocks,
						  BufferAccessStrategy strategy)
{
	if (e->filter_block == 0 || e->filter_block != e->header_block + 1 ||
		e->filter_group != e->segment_id)
		return 0;

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, e->filter_block, RBM_NORMAL,
											strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	uint32		blocks = 0;

	if (bloomidx::check_filter_group_page(page, e->filter_group,
										  (uint32) RelationGetNumberOfAttributes(index),
										  e->filter_block, nblocks) == bloomidx::PageProblem::None)
	{
		const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header(page);
		bool		run = bloomidx::group_segment_slots(*h, e->segment_id) ==
			bloomidx::SlotMask::first(h->slots_taken);

		for (uint32 i = 0; run && i < h->region_pages; i++)
			run = bloomidx::group_region_block(page, e->filter_block, i) == e->filter_block + 1 + i;
		if (run)
			blocks = 1 + h->region_pages;
	}
	UnlockReleaseBuffer(buffer);
	return blocks;
}

/*
 * Frees the filter groups that the entries `removed` name (segments just
 * published away, or whose filters a publish moved to a gathered group:
 * filter_gather.cpp) and that no segment of `dir` (the directory after
 * that publish) names any more, page by page, stamped with the publish's
 * generation; a stale reader that meets one knows it was recycled.
 * Groups right after their segment's header (own_blocks[r] > 0) went with
 * its extent.  A group
 * whose header is not sound is left to VACUUM's sweep and bloomidx_verify.
 * A crash before this leaves the pages for the sweep too.  Under the seal
 * lock.
 */
void
bloomidx_free_unused_groups(Relation index, const DirectoryCopy *dir,
							const bloomidx::SegmentEntry *removed, const uint32 *own_blocks,
							uint32 nremoved, BlockNumber nblocks, uint32 generation)
{
	PGAlignedBlock copy;

	for (uint32 r = 0; r < nremoved; r++)
	{
		BlockNumber block = removed[r].filter_block;
		bool		named = block == 0 || own_blocks[r] > 0;

		for (uint32 q = 0; q < r && !named; q++)
			named = removed[q].filter_block == block;	/* freed already */
		for (uint32 i = 0; i < dir->header.nsegments && !named; i++)
			named = dir->entries[i].filter_block == block;
		if (named)
			continue;

		/* The header's copy: freeing the region pages reads their blocks from it. */
		Buffer		buffer = ReadBuffer(index, block);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(copy.data, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);

		const uint8 *page = (const uint8 *) copy.data;

		if (bloomidx::check_filter_group_page(page, removed[r].filter_group,
											  (uint32) RelationGetNumberOfAttributes(index),
											  block, nblocks) != bloomidx::PageProblem::None)
			continue;
		for (uint32 i = 0; i < bloomidx::filter_group_header(page)->region_pages; i++)
		{
			bloomidx_vacuum_delay_point();
			bloomidx_free_page(index, bloomidx::group_region_block(page, block, i), generation);
		}
		bloomidx_free_page(index, block, generation);
	}
}

/*
 * Bits per value of the segment filters a build, seal or merge writes (0:
 * none).  ALTER INDEX ... SET (segment_filter_rate = ...) takes effect at
 * the next seal or merge, as far as pending rows keep filter keys (frozen
 * by the build: an index built without filters needs a REINDEX for them).
 */
double
bloomidx_filter_bits_per_key(Relation index)
{
	/*
	 * The sizing search evaluates the rate formula a few thousand times
	 * (milliseconds): every scan and INSERT statement asks, so the last
	 * answer is kept.
	 */
	static double last_rate = -1;
	static double last_bits = 0;
	const BloomidxOptions *opts = (const BloomidxOptions *) index->rd_options;
	double		rate = opts ? opts->segment_filter_rate : BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE;

	if (rate <= 0)
		return 0;
	if (rate != last_rate)
	{
		last_bits = bloomidx::filter_bits_per_key(rate);
		last_rate = rate;
	}
	return last_bits;
}

/*
 * Sets the bits per key of the filters a build, seal or merge writes: the
 * index's segment_filter_rate, where pending rows keep the filter keys
 * that seals need (MetaPageData::filter_keys, frozen by the build); else
 * none.  (Sizing takes milliseconds: INSERTs that do not seal skip it.)
 */
void
bloomidx_state_filters(BloomidxState *state, Relation index)
{
	state->filter_bits_per_key = state->meta.filter_keys ? bloomidx_filter_bits_per_key(index) : 0;
}
