/*
 * merge.cpp: VACUUM's rewrite of segments that deletions left mostly dead
 * (storage/README.md, "Writing", VACUUM).
 *
 * A segment's slices cost the same pages however few of its rows live, so
 * under churn (rows deleted, as many inserted) an index that only cleared
 * live bits would grow without end.  VACUUM (holding the seal lock) takes
 * the segments below half live (or half a segment's worth), fewest live
 * rows first, and writes the
 * live rows of as many as fit into one new segment: signatures put back
 * together from the slices, TIDs decoded.  One metapage record publishes
 * the new segment and removes the old ones, whose blocks go to the
 * metapage's free list, where the next seal or merge takes them (what the
 * list has no room for is freed page by page).  A segment with no live row
 * left is removed without a new one.  A lone segment is not rewritten:
 * it would need as many slice pages as before.
 */
#include "storage/storage.h"

/*
 * A segment is merged when its live rows are below 1/MERGE_BELOW of its
 * rows (mostly dead) or of a segment's worth (small: an earlier merge's
 * result, or a build's last segment).
 */
#define MERGE_BELOW 2

/*
 * Segments one publish removes at most (the rest wait for the next
 * group): bounds a merge's memory (their headers, 4 kB each) when many
 * segments are empty, and the directory pages a publish rewrites.
 */
#define MERGE_GROUP 224

/* A merged segment of this many slice pages or fewer gets no filters (merge_group). */
#define MERGE_UNFILTERED_PAGES 2

/* A segment's pages as read for a merge: its header, and its live bits. */
typedef struct MergeSource
{
	bloomidx::SegmentHeader header;
	uint64		live[bloomidx::kSliceWords];
	uint32		slot[bloomidx::kSegmentRows];	/* live row -> place in rows */
	bloomidx::HeapTid group[bloomidx::kTidGroupRows];
	bool		keyed;			/* its rows' filter keys read (key pages) */
} MergeSource;

/* Reads block blkno share-locked and checks it; false (warned) if damaged. */
static bool
read_checked(Relation index, BlockNumber blkno, BufferAccessStrategy strategy,
			 bloomidx::PageProblem (*check) (const uint8 *page, const void *arg), const void *arg,
			 Buffer *buffer, uint32 segment_id)
{
	*buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	LockBuffer(*buffer, BUFFER_LOCK_SHARE);
	bloomidx::PageProblem problem = check((const uint8 *) BufferGetPage(*buffer), arg);

	if (problem == bloomidx::PageProblem::None)
		return true;
	UnlockReleaseBuffer(*buffer);
	bloomidx_warn_corrupted_page(index, blkno,
								 psprintf("%s.  VACUUM did not merge segment %u, which keeps its rows.",
										  bloomidx::page_problem_text(problem), segment_id));
	return false;
}

typedef struct MergeCheckArg
{
	const bloomidx::SegmentEntry *entry;
	const bloomidx::SegmentHeader *header;
	uint32		nslices;
	BlockNumber nblocks;
	uint32		index;			/* TID or key page, or the slice page's first slice */
	uint32		nkeys;			/* filter keys a row */
	uint32		ncolumns;		/* the index's */
} MergeCheckArg;

static bloomidx::PageProblem
check_header(const uint8 *page, const void *arg)
{
	const MergeCheckArg *a = (const MergeCheckArg *) arg;

	return bloomidx::check_segment_page(page, a->entry->segment_id, a->entry->rows,
										a->entry->first_slice, a->nslices,
										a->entry->slices_per_page, a->ncolumns,
										a->entry->header_block, a->nblocks);
}

static bloomidx::PageProblem
check_live(const uint8 *page, const void *arg)
{
	const MergeCheckArg *a = (const MergeCheckArg *) arg;

	return bloomidx::check_live_page(page, a->entry->rows, a->entry->segment_id);
}

static bloomidx::PageProblem
check_tids(const uint8 *page, const void *arg)
{
	const MergeCheckArg *a = (const MergeCheckArg *) arg;

	return bloomidx::check_tid_page(page, *a->header, (uint16) a->index);
}

static bloomidx::PageProblem
check_keys(const uint8 *page, const void *arg)
{
	const MergeCheckArg *a = (const MergeCheckArg *) arg;

	return bloomidx::check_key_page(page, a->entry->segment_id, a->entry->rows,
									(uint16) a->nkeys, (uint16) a->index);
}

/*
 * Copies the filter keys of segment e's live rows (its key pages) to
 * theirs in rows (rows->keys, nkeys a row, from row `base`); false if a
 * page of them is damaged (warned).
 */
static bool
read_live_keys(Relation index, const bloomidx::SegmentEntry *e, MergeCheckArg *arg,
			   BufferAccessStrategy strategy, const MergeSource *src, SegmentRows *rows,
			   uint32 base)
{
	const bloomidx::SegmentHeader *h = &src->header;
	const uint32 nkeys = arg->nkeys;
	const uint32 per_page = bloomidx::key_rows_per_page(nkeys);
	BlockNumber first = h->live_block + 1 + h->ntid_pages;

	/* check_segment_page placed them: as many as the rows', before the header. */
	Assert((uint64) first + h->key_pages == e->header_block &&
		   bloomidx::key_page_count(e->rows, nkeys) == h->key_pages);
	for (uint32 p = 0; p < h->key_pages; p++)
	{
		Buffer		buffer;

		arg->index = p;
		if (!read_checked(index, first + p, strategy, check_keys, arg, &buffer, e->segment_id))
			return false;

		const uint8 *page = (const uint8 *) BufferGetPage(buffer);
		const uint8 *keys = bloomidx::key_page_keys(page);
		uint32		n = bloomidx::page_opaque(page)->count;

		for (uint32 i = 0; i < n; i++)
		{
			uint32		r = p * per_page + i;

			if (src->live[r / 64] & (UINT64CONST(1) << (r % 64)))
				memcpy(rows->keys + (Size) (base + src->slot[r]) * nkeys,
					   keys + (Size) i * nkeys * sizeof(uint32), nkeys * sizeof(uint32));
		}
		UnlockReleaseBuffer(buffer);
	}
	return true;
}

static bloomidx::PageProblem
check_slice(const uint8 *page, const void *arg)
{
	const MergeCheckArg *a = (const MergeCheckArg *) arg;

	return bloomidx::check_slice_page(page, a->entry->rows, (uint16) a->index,
									  a->entry->segment_id);
}

/*
 * Appends segment e's live rows to rows (room for them: the caller
 * counted), leaving its header in src->header.  False, rows as they were,
 * if a page of it is damaged (warned: the segment stays as it is).
 */
static bool
read_live_rows(Relation index, const bloomidx::SegmentEntry *e, uint32 nslices, uint32 nkeys,
			   BlockNumber nblocks, BufferAccessStrategy strategy, MergeSource *src,
			   SegmentRows *rows)
{
	MergeCheckArg arg = {e, &src->header, nslices, nblocks, 0, nkeys,
						 (uint32) RelationGetNumberOfAttributes(index)};
	const uint32 base = rows->nrows;
	const uint32 nbytes = rows->signature_bytes;
	Buffer		buffer;
	uint32		nlive = 0;
	bool		ok = true;

	if (!read_checked(index, e->header_block, strategy, check_header, &arg, &buffer, e->segment_id))
		return false;
	memcpy(&src->header, bloomidx::segment_header((const uint8 *) BufferGetPage(buffer)),
		   sizeof(src->header));
	UnlockReleaseBuffer(buffer);
	src->keyed = false;

	if (!read_checked(index, src->header.live_block, strategy, check_live, &arg, &buffer,
					  e->segment_id))
		return false;
	memcpy(src->live, bloomidx::slice_page_words((const uint8 *) BufferGetPage(buffer)),
		   sizeof(src->live));
	UnlockReleaseBuffer(buffer);
	for (uint32 r = 0; r < e->rows; r++)
		if (src->live[r / 64] & (UINT64CONST(1) << (r % 64)))
			src->slot[r] = nlive++;
	if (nlive != e->live_rows)
	{
		bloomidx_warn_corrupted_page(index, src->header.live_block,
									 psprintf("Segment %u has %u live rows, its directory entry says %u.  VACUUM did not merge it.",
											  e->segment_id, nlive, (uint32) e->live_rows));
		return false;
	}
	if (nlive == 0)
		return true;
	Assert(base + nlive <= rows->capacity);

	/* The live rows' TIDs. */
	for (uint32 p = 0; ok && p < src->header.ntid_pages; p++)
	{
		arg.index = p;
		if (!read_checked(index, src->header.tid_blocks[p], strategy, check_tids, &arg, &buffer,
						  e->segment_id))
			return false;
		const uint8 *page = (const uint8 *) BufferGetPage(buffer);

		for (uint32 g = 0; ok && g < src->header.ngroups; g++)
		{
			if (src->header.groups[g].page != p)
				continue;
			uint32		first = g * bloomidx::kTidGroupRows;
			uint32		n = bloomidx::tid_page_group(src->header, page, g, src->group);

			ok = n > 0;
			for (uint32 i = 0; i < n; i++)
				if (src->live[(first + i) / 64] & (UINT64CONST(1) << ((first + i) % 64)))
					ItemPointerSet(&rows->tids[base + src->slot[first + i]], src->group[i].block,
								   src->group[i].offset);
		}
		UnlockReleaseBuffer(buffer);
		if (!ok)
			bloomidx_warn_corrupted_page(index, src->header.tid_blocks[p],
										 psprintf("TID group of segment %u cannot be decoded.  VACUUM did not merge it.",
												  e->segment_id));
	}

	/* Their filter keys, where it kept them and the merge makes filters of them. */
	if (ok && rows->keys != NULL && nkeys > 0 && src->header.key_pages > 0)
	{
		if (!read_live_keys(index, e, &arg, strategy, src, rows, base))
			return false;
		src->keyed = true;
	}

	/* Their signatures, bit j from slice j, page by page (packed slices share one). */
	for (uint32 p = 0; ok && p < bloomidx::slice_page_count(nslices, e->slices_per_page); p++)
	{
		bloomidx::SliceRange on = bloomidx::slice_page_range(p, nslices, e->slices_per_page);
		uint32		j = on.first;

		bloomidx_vacuum_delay_point();
		arg.index = on.first;
		if (!read_checked(index, e->first_slice + p, strategy, check_slice, &arg, &buffer,
						  e->segment_id))
		{
			ok = false;
			break;
		}
		const uint64 *words = bloomidx::slice_page_words((const uint8 *) BufferGetPage(buffer));

		for (; ok && j < on.end; j++)
			ok = bloomidx::untranspose_slice(words + bloomidx::slice_spot(j, e->rows, e->slices_per_page).word,
											 src->live, e->rows, j, src->slot,
											 rows->signatures + (Size) base * nbytes, nbytes);
		UnlockReleaseBuffer(buffer);
		/* Warned with the page let go (j - 1: the slice that failed). */
		if (!ok)
			bloomidx_warn_corrupted_page(index, e->first_slice + p,
										 psprintf("Slice %u of segment %u sets a row past its %u rows.  VACUUM did not merge it.",
												  j - 1, e->segment_id, (uint32) e->rows));
	}
	if (!ok)
	{
		/* Signatures are made by ORing bits into zeroed slots. */
		memset(rows->signatures + (Size) base * nbytes, 0, (Size) nlive * nbytes);
		return false;
	}
	rows->nrows = base + nlive;
	return true;
}

/* Fewest live rows first, then oldest. */
static int
compare_candidates(const void *a, const void *b)
{
	const bloomidx::SegmentEntry *x = (const bloomidx::SegmentEntry *) a;
	const bloomidx::SegmentEntry *y = (const bloomidx::SegmentEntry *) b;

	if (x->live_rows != y->live_rows)
		return x->live_rows < y->live_rows ? -1 : 1;
	return x->segment_id < y->segment_id ? -1 : x->segment_id > y->segment_id;
}

/* What the merges of one VACUUM share: memory for a group of sources. */
typedef struct MergeWork
{
	Relation	index;
	BufferAccessStrategy strategy;
	BloomidxState *state;
	DirectoryCopy *dir;			/* the directory now (refreshed after each publish) */
	BlockNumber nblocks;
	SegmentRows rows;
	MergeSource *src;
	bloomidx::SegmentHeader *headers;
	uint32	   *removed;
	bloomidx::SegmentEntry *removed_entries;
	bloomidx::SegmentEntry *sources;
	uint32	   *own_blocks;
	bool	   *keyed;			/* each source's rows came with their filter keys */
	uint32	   *first_row;		/* each source's first row in rows */
	bool		heap_keys_usable;	/* rows' keys to be read from the table */
	HeapKeys   *heap_keys;		/* the table, opened for the first source
								 * that kept no keys (heap_keys.cpp) */
	bloomidx::FreeExtent *to_free;
	bool		published;		/* a group was written: the free space map changed */
} MergeWork;

/*
 * Writes the live rows of segments group[0 .. n) as one segment published
 * in their place (none if no row lives), as far as their pages are sound;
 * a lone segment only if `alone` (a move, not a merge).  The caller holds
 * the seal lock.
 */
static void
merge_group(MergeWork *w, const bloomidx::SegmentEntry *group, uint32 n, bool alone)
{
	Relation	index = w->index;
	uint32		ngroup = 0;

	for (uint32 c = 0; c < n; c++)
	{
		const bloomidx::SegmentEntry *e = &group[c];

		CHECK_FOR_INTERRUPTS();
		w->first_row[ngroup] = w->rows.nrows;
		if (read_live_rows(index, e, w->state->meta.signature_bits, w->state->geometry.keys,
						   w->nblocks, w->strategy, w->src, &w->rows))
		{
			w->keyed[ngroup] = w->src->keyed;
			w->headers[ngroup] = w->src->header;
			w->removed[ngroup] = e->segment_id;
			w->removed_entries[ngroup] = *e;
			w->own_blocks[ngroup] = bloomidx_own_group_blocks(index, e, w->nblocks, w->strategy);
			ngroup++;
		}
	}
	if (ngroup == 0 || (ngroup == 1 && w->rows.nrows > 0 && !alone))
	{
		memset(w->rows.signatures, 0, (Size) w->rows.nrows * w->rows.signature_bytes);
		w->rows.nrows = 0;
		return;
	}

	/* The live rows as one segment, published in place of the group. */
	bloomidx::SegmentEntry entry;
	DirectoryChange change;

	memset(&change, 0, sizeof(change));
	if (w->rows.nrows > 0)
	{
		/*
		 * Its filters made from its rows' keys where it has every row's:
		 * from the sources' key pages, or, for sources that kept none,
		 * from the table (not for a move, which copies its one source's
		 * filters as they are).  It keeps them on key pages if small
		 * enough and every source did (a merge of those reads no tuple;
		 * keys read from the table would make the segment larger than its
		 * sources, which the next merge can read again).  Where a row's
		 * tuple cannot give them, its filters are its sources', as many
		 * slots as theirs.
		 */
		SegmentFilters filters;
		uint32		nsources = 0;
		bool		all_keyed = w->rows.keys != NULL;	/* every row's keys */
		bool		all_kept = all_keyed;	/* from key pages, all of them */
		bool		has_filters;
		const bool	unfiltered = !alone &&
			bloomidx::slice_page_count(w->state->meta.signature_bits,
									   bloomidx_slices_per_page(w->rows.nrows)) <=
			MERGE_UNFILTERED_PAGES;

		for (uint32 i = 0; i < ngroup; i++)
			if (w->removed_entries[i].live_rows > 0)
			{
				w->sources[nsources++] = w->removed_entries[i];
				all_kept &= w->keyed[i];
				if (!w->keyed[i] && all_keyed && !alone && !unfiltered && w->heap_keys_usable)
				{
					if (w->heap_keys == NULL)
						w->heap_keys = bloomidx_heap_keys_begin(index, w->rows.signature_bytes);
					w->keyed[i] = bloomidx_heap_keys_read(w->heap_keys, w->state, &w->rows,
														  w->first_row[i],
														  w->removed_entries[i].live_rows);
				}
				all_keyed &= w->keyed[i];
			}
		/*
		 * None for a segment whose slices fit MERGE_UNFILTERED_PAGES pages:
		 * a query reads those for what its filters (a group's header and a
		 * region page at least) would cost it, and they would take as many
		 * pages more; such small merged segments are what a mass DELETE
		 * leaves, where the index should shrink.
		 */
		if (unfiltered)
			has_filters = false;
		else if (all_keyed)
			has_filters = bloomidx_segment_filters(w->state, &w->rows, &filters);
		else
			has_filters = bloomidx_merge_filters(index, w->state, w->sources, nsources,
												 w->nblocks, w->strategy, &filters);
		bloomidx_write_next_segment(index, w->state, &w->rows, w->dir, w->nblocks,
									has_filters ? &filters : NULL, all_kept, &entry, &change);
		if (has_filters)
			pfree(filters.image);
	}
	bloomidx_seal_step(SEAL_STEP_WRITTEN);
	change.removed = w->removed;
	change.removed_headers = w->headers;
	change.removed_group_blocks = w->own_blocks;
	change.nremoved = ngroup;
	change.extents_to_free = w->to_free;
	uint32		generation = bloomidx_publish(index, &change);

	bloomidx_seal_step(SEAL_STEP_PUBLISHED);
	w->published = true;

	/* The old segments' blocks the free list had no room for. */
	for (uint32 i = 0; i < change.nextents_to_free; i++)
		for (uint32 b = 0; b < w->to_free[i].nblocks; b++)
			bloomidx_free_page(index, w->to_free[i].first + b, generation);
	/* The free list and the next id changed: a fresh copy. */
	w->nblocks = RelationGetNumberOfBlocks(index);
	bloomidx_read_directory(index, &w->nblocks, w->dir);
	/* The filter groups no segment names any more. */
	bloomidx_free_unused_groups(index, w->dir, w->removed_entries, w->own_blocks, ngroup,
								w->nblocks, generation);
	bloomidx_seal_step(SEAL_STEP_FREED);
	memset(w->rows.signatures, 0, (Size) w->rows.nrows * w->rows.signature_bytes);
	w->rows.nrows = 0;
}

/*
 * Whether segment e keeps its rows' filter keys (key pages, format 16): a
 * merge of such segments alone makes its filters from them.  False for a
 * damaged header, which the merge then warns of.
 */
static bool
segment_keeps_keys(MergeWork *w, const bloomidx::SegmentEntry *e)
{
	if (w->rows.keys == NULL || e->rows > bloomidx::kKeyedRowsMax || e->live_rows == 0)
		return false;

	Buffer		buffer = ReadBufferExtended(w->index, MAIN_FORKNUM, e->header_block, RBM_NORMAL,
											w->strategy);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	bool		keyed = bloomidx::check_segment_page(page, e->segment_id, e->rows, e->first_slice,
													 w->state->meta.signature_bits,
													 e->slices_per_page,
													 RelationGetNumberOfAttributes(w->index),
													 e->header_block, w->nblocks) ==
		bloomidx::PageProblem::None && bloomidx::segment_header(page)->key_pages > 0;

	UnlockReleaseBuffer(buffer);
	return keyed;
}

/*
 * The segments below half live, or below half a segment's rows, as many at
 * a time as one segment holds (fewest live rows first).  Those mostly
 * dead merge as they come, their space wanted back; a segment merged
 * for being small (most of its rows live) joins any group where the
 * merge can read every row's filter keys from the table (heap_keys.cpp)
 * or its key pages: it makes its filters from them, however many sources
 * it has, with filters or without.  Else only where the merge keeps the
 * group's filters: sources with filters together while their slots are
 * MERGED_SLOTS_MAX or fewer (a merged segment keeps one slot per source
 * slot, and none past that: filter_merge.cpp), or any number of sources
 * that all kept their keys, those without apart; else small segments,
 * which VACUUM seals often, would merge again and again until their
 * filters were gone for good.  Empty segments, removed whole, join any
 * group.  A candidate left out waits for the next group; each pass takes
 * at least one candidate.
 */
static void
merge_mostly_dead(MergeWork *w)
{
	bloomidx::SegmentEntry *cand;
	uint32	   *slots;
	uint32		ncand = 0;
	const uint32 slots_max = bloomidx_merged_slots_max();

	/* Entries as copied now: only the seal lock's holder changes them. */
	cand = (bloomidx::SegmentEntry *)
		palloc(sizeof(bloomidx::SegmentEntry) * Max(w->dir->header.nsegments, 1));
	for (uint32 i = 0; i < w->dir->header.nsegments; i++)
		if ((uint32) w->dir->entries[i].live_rows * MERGE_BELOW <
			Max((uint32) w->dir->entries[i].rows,
				bloomidx_segment_capacity(w->state->geometry.capacity)))
			cand[ncand++] = w->dir->entries[i];
	qsort(cand, ncand, sizeof(bloomidx::SegmentEntry), compare_candidates);
	slots = (uint32 *) palloc(sizeof(uint32) * Max(ncand, 1));
	bool	   *keyed = (bool *) palloc(sizeof(bool) * Max(ncand, 1));

	/* Every row's keys to be had from the table (above): any sources group. */
	const bool	exact = w->rows.keys != NULL && w->heap_keys_usable;

	for (uint32 i = 0; i < ncand; i++)
	{
		slots[i] = !exact && w->state->filter_bits_per_key > 0 && cand[i].live_rows > 0
			? bloomidx_filter_slots(w->index, &cand[i], w->nblocks, w->strategy) : 0;
		keyed[i] = exact || (slots[i] > 0 && segment_keeps_keys(w, &cand[i]));
	}

	bloomidx::SegmentEntry *group = (bloomidx::SegmentEntry *)
		palloc(sizeof(bloomidx::SegmentEntry) * Max(ncand, 1));

	for (;;)
	{
		/* The next group, from the candidates left (live_rows kept: see below). */
		uint32		n = 0,
					nlive = 0,
					group_slots = 0,
					kept = 0;
		uint64		sum = 0;
		int			filtered = -1;	/* the group's class: -1 not set yet */
		bool		keeps_filters = true;	/* the merge keeps its sources' filters */
		bool		all_keyed = true;	/* every source with rows kept its keys */
		bool		all_dead = true;	/* every source mostly dead */

		for (uint32 c = 0; c < ncand; c++)
		{
			bool		has = slots[c] > 0;
			bool		dead = (uint32) cand[c].live_rows * MERGE_BELOW < cand[c].rows;
			bool		safe = keeps_filters &&
				(cand[c].live_rows == 0 || filtered < 0 || (filtered == 1) == has) &&
				(!has || (all_keyed && keyed[c]) || group_slots + slots[c] <= slots_max);
			bool		fits = n < MERGE_GROUP && sum + cand[c].live_rows <= w->rows.capacity &&
				(safe || (dead && all_dead));

			if (fits)
			{
				group[n++] = cand[c];
				sum += cand[c].live_rows;
				all_dead &= dead;
				keeps_filters = safe;
				if (cand[c].live_rows > 0)
				{
					nlive++;
					all_keyed &= keyed[c];
					group_slots += slots[c];
					if (filtered < 0)
						filtered = has ? 1 : 0;
				}
			}
			else
			{
				cand[kept] = cand[c];
				keyed[kept] = keyed[c];
				slots[kept++] = slots[c];
			}
		}
		ncand = kept;
		if (n == 0)
			break;
		/* A lone segment with rows is not rewritten: it pairs with none left. */
		if (n > 1 || nlive == 0)
			merge_group(w, group, n, false);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(group);
	pfree(keyed);
	pfree(slots);
	pfree(cand);
}

/*
 * The last block segment e takes: its header, or its filter group's header
 * page where that lies past it (a group of its own right after the header
 * moves with the segment; a gathered group's pages lie where free pages
 * were, and one named by no other segment is freed when the segment
 * moves, its filters then copied to a group of its own).
 */
static BlockNumber
segment_end(const bloomidx::SegmentEntry *e)
{
	return Max(e->header_block, e->filter_block);
}

/*
 * Moves the segments that end the index to free blocks before them, so
 * that the free pages behind them end the index and VACUUM can give them
 * back (truncate.cpp).  After merges that left most of the index free (a
 * mass DELETE), the merged segment is the last thing in the file: it was
 * written before its sources were freed, so past them; or its filter
 * group is, gathered into free pages there.  Moves only while over a
 * quarter of the index is free (free_pages, the sweep's count of free
 * pages off the list, and the list's), at most MOVES_MAX segments a
 * VACUUM, each only if the free list has an extent for all its blocks
 * wholly before its end (free_list_take takes the lowest that fits); a
 * segment whose end did not move lower ends the moves.
 */
#define MOVES_MAX 8

static void
move_last_segments(MergeWork *w, BlockNumber free_pages)
{
	for (int moves = 0; moves < MOVES_MAX && w->dir->header.nsegments > 0; moves++)
	{
		const bloomidx::SegmentEntry *last = NULL;

		for (uint32 i = 0; i < w->dir->header.nsegments; i++)
			if (last == NULL || segment_end(&w->dir->entries[i]) > segment_end(last))
				last = &w->dir->entries[i];
		/* Its rows must fit one segment as this session sizes them (bloomidx.segment_rows). */
		if (last->live_rows == 0 || last->live_rows > w->rows.capacity ||
			((uint64) free_pages + bloomidx::free_list_blocks(w->dir->free)) * 4 <
			(uint64) w->nblocks)
			return;

		/*
		 * Not where its end is a group other segments share: moving it
		 * would not free the group, which ends the index still.
		 */
		for (uint32 i = 0; i < w->dir->header.nsegments; i++)
			if (&w->dir->entries[i] != last && last->filter_block > last->header_block &&
				w->dir->entries[i].filter_block == last->filter_block)
				return;

		uint32		own = bloomidx_own_group_blocks(w->index, last, w->nblocks, w->strategy);
		uint32		blocks = last->header_block - last->first_slice + 1 + own;
		bloomidx::FreeList list = w->dir->free;
		uint32		first = bloomidx::free_list_take(&list, blocks);
		BlockNumber end = segment_end(last);

		if (first == 0 || (uint64) first + blocks > end)
			return;

		bloomidx::SegmentEntry moving = *last;

		merge_group(w, &moving, 1, true);
		/* Where it went: the directory's newest segment. */
		for (uint32 i = 0; i < w->dir->header.nsegments; i++)
			if (w->dir->entries[i].segment_id == moving.segment_id)
				return;			/* still there: a page of it is damaged */
		bool		lower = false;

		for (uint32 i = 0; i < w->dir->header.nsegments; i++)
			if (w->dir->entries[i].segment_id + 1 == w->dir->header.next_segment_id)
				lower = segment_end(&w->dir->entries[i]) < end;
		if (!lower)
			return;
	}
}

/* The work of one VACUUM's merges or moves, in cxt. */
static void
merge_work_init(MergeWork *w, Relation index, BufferAccessStrategy strategy)
{
	memset(w, 0, sizeof(*w));
	w->index = index;
	w->strategy = strategy;
	w->state = (BloomidxState *) palloc(sizeof(BloomidxState));
	w->dir = bloomidx_directory_copy_new();
	w->nblocks = RelationGetNumberOfBlocks(index);
	bloomidx_init_state(w->state, index);
	bloomidx_state_filters(w->state, index);
	bloomidx_read_directory(index, &w->nblocks, w->dir);
	w->src = (MergeSource *) palloc(sizeof(MergeSource));
	w->headers = (bloomidx::SegmentHeader *) palloc(sizeof(bloomidx::SegmentHeader) * MERGE_GROUP);
	w->removed = (uint32 *) palloc(sizeof(uint32) * MERGE_GROUP);
	w->removed_entries = (bloomidx::SegmentEntry *)
		palloc(sizeof(bloomidx::SegmentEntry) * MERGE_GROUP);
	w->sources = (bloomidx::SegmentEntry *) palloc(sizeof(bloomidx::SegmentEntry) * MERGE_GROUP);
	w->own_blocks = (uint32 *) palloc(sizeof(uint32) * MERGE_GROUP);
	w->keyed = (bool *) palloc(sizeof(bool) * MERGE_GROUP);
	w->first_row = (uint32 *) palloc(sizeof(uint32) * MERGE_GROUP);
	w->to_free = (bloomidx::FreeExtent *)
		palloc(sizeof(bloomidx::FreeExtent) * MERGE_GROUP * bloomidx::kMaxSegmentExtents);
	bloomidx_segment_rows_init(&w->rows, w->state->meta.signature_bytes,
							   bloomidx_segment_capacity(w->state->geometry.capacity));
	if (w->state->geometry.keys > 0 && w->state->filter_bits_per_key > 0)
		bloomidx_segment_rows_keep_keys(&w->rows, w->state->geometry.keys);
	w->heap_keys_usable = w->rows.keys != NULL && bloomidx_heap_keys_usable(index);
}

/*
 * Merges the segments below half live, as many at a time as one segment
 * holds (free_pages unset), or moves the segments that end the index into
 * free space before them when free_pages (the sweep's count) is over a
 * quarter of it.  The caller holds the seal lock.
 */
static void
merge_or_move(Relation index, BufferAccessStrategy strategy, bool move, BlockNumber free_pages)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "bloomidx merge",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MergeWork	w;

	merge_work_init(&w, index, strategy);
	if (move)
		move_last_segments(&w, free_pages);
	else
		merge_mostly_dead(&w);
	if (w.published)
		IndexFreeSpaceMapVacuum(index);
	if (w.heap_keys != NULL)
		bloomidx_heap_keys_end(w.heap_keys);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

void
bloomidx_merge_segments(Relation index, BufferAccessStrategy strategy)
{
	merge_or_move(index, strategy, false, 0);
}

void
bloomidx_move_last_segments(Relation index, BufferAccessStrategy strategy, BlockNumber free_pages)
{
	merge_or_move(index, strategy, true, free_pages);
}
