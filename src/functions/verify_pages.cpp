/*
 * verify_pages.cpp: bloomidx_verify's pass over the index (verify.cpp
 * says what it checks): the metapage, then every page the directory
 * names, each copied under a share lock and checked, and the entries of
 * the batch's heap blocks kept within the budget: a pending page's as
 * stored, a segment's rows' signatures put back together from its slices
 * (every live row's bits counted), its filter group handed to
 * verify_filters.cpp.
 */
#include "functions/verify_state.h"

/*
 * Block 0: a sound metapage, for as many columns as the index has, whose
 * insert hint is inside the file; its options are the ones the session
 * makes signatures with (bloomidx_init_state, from the relcache).
 */
void
verify_check_metapage(VerifyState *vs)
{
	Relation	index = vs->index;

	if (RelationGetNumberOfBlocks(index) == 0)
		bloomidx_report_not_built(index);
	verify_copy_page(vs, bloomidx::kMetaBlock, NULL);

	const uint8 *page = (const uint8 *) vs->page.data;
	PageProblem problem = bloomidx::check_meta_page(page);

	if (problem != PageProblem::None)
		bloomidx_report_meta_problem(index, problem, bloomidx::meta_data(page)->version);
	vs->meta = *bloomidx::meta_data(page);
	if (vs->meta.ncolumns != RelationGetNumberOfAttributes(index))
		bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
					psprintf("The metapage is for %u columns, the index has %d.",
							 vs->meta.ncolumns, RelationGetNumberOfAttributes(index)));
	/*
	 * Each free extent clear of the segments and of the other extents (a
	 * seal would overwrite them), and of the directory pages.
	 */
	MemoryContext old = MemoryContextSwitchTo(vs->cxt);
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	MemoryContextSwitchTo(old);
	bloomidx_read_directory(index, &nblocks, dir);
	for (uint32 i = 0; i < dir->free.count; i++)
	{
		bool		clear = bloomidx::free_extent_ok(dir->free, i, vs->meta.signature_bits, nblocks,
													 dir->entries, dir->header.nsegments);

		for (uint32 p = 0; clear && p < dir->pages.count; p++)
			clear = !bloomidx::free_list_overlaps(dir->free, dir->pages.blocks[p], 1);
		if (!clear)
			bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
						psprintf("Extent %u of the metapage's free list overlaps pages in use.", i));
	}
	bloomidx_directory_copy_free(dir);

	vs->geometry = bloomidx::meta_row_geometry(vs->meta);
	vs->min_bits = 0;
	vs->min_bits_column = 0;
	for (int i = 0; i < vs->meta.ncolumns; i++)
		if (vs->meta.column_bits[i] > vs->min_bits)
		{
			vs->min_bits = vs->meta.column_bits[i];
			vs->min_bits_column = i + 1;
		}

	bloomidx_init_state(&vs->state, index);
	const MetaPageData *cached = &vs->state.meta;

	if (cached->signature_bits != vs->meta.signature_bits ||
		cached->signature_bytes != vs->meta.signature_bytes ||
		cached->ncolumns != vs->meta.ncolumns ||
		memcmp(cached->column_bits, vs->meta.column_bits, sizeof(vs->meta.column_bits)) != 0)
		bloomidx_report_corrupted_page(index, bloomidx::kMetaBlock,
					"The metapage's options differ from those this session read from it before.");
}

/* Room for n more entries. */
static void
reserve_entries_for(VerifyState *vs, Size n)
{
	Size		need = vs->nentries + n;

	if (need <= vs->max_entries)
		return;
	if (need > PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index \"%s\" has too many entries to verify",
						RelationGetRelationName(vs->index))));

	/*
	 * Past the budget by a pending page's entries at most (reserve_entries:
	 * add_entry keeps no more than the budget); a segment's rows are asked
	 * for only where they fit it (check_segment).
	 */
	Size		room = Min(Max(need, Min(Max(vs->max_entries * 2, (Size) 1024),
									 vs->entry_budget + vs->geometry.capacity)),
						   (Size) PG_UINT32_MAX);
	Size		key_bytes = room * sizeof(EntryKey);
	Size		sig_bytes = room * vs->geometry.signature_bytes;

	if (vs->keys == NULL)
	{
		vs->keys = (EntryKey *) MemoryContextAllocHuge(vs->cxt, key_bytes);
		vs->signatures = (uint8 *) MemoryContextAllocHuge(vs->cxt, sig_bytes);
		if (vs->geometry.keys > 0)
			vs->key_digests = (uint64 *) MemoryContextAllocHuge(vs->cxt, room * sizeof(uint64));
	}
	else
	{
		vs->keys = (EntryKey *) repalloc_huge(vs->keys, key_bytes);
		vs->signatures = (uint8 *) repalloc_huge(vs->signatures, sig_bytes);
		if (vs->key_digests)
			vs->key_digests = (uint64 *) repalloc_huge(vs->key_digests, room * sizeof(uint64));
	}
	vs->max_entries = room;
}

/* Room for one more page of entries. */
static void
reserve_entries(VerifyState *vs)
{
	reserve_entries_for(vs, vs->geometry.capacity);
}

/* Checks entry i of block blkno's heap TID: a tuple's place, within the table. */
static void
check_entry_tid(VerifyState *vs, BlockNumber blkno, uint32 i, const ItemPointerData *tidp)
{
	BlockNumber heap_block = ItemPointerGetBlockNumberNoCheck(tidp);
	OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(tidp);

	if (offset < FirstOffsetNumber || offset > MaxHeapTuplesPerPage ||
		heap_block == InvalidBlockNumber)
		bloomidx_report_corrupted_page(vs->index, blkno,
					psprintf("Entry %u points to (%u,%u), which is not a valid heap tuple.",
							 i, heap_block, offset));
	if (heap_block >= vs->heap_blocks)
	{
		/* The table may have grown since it was last measured. */
		vs->heap_blocks = RelationGetNumberOfBlocks(vs->heap);
		if (heap_block >= vs->heap_blocks)
			bloomidx_report_corrupted_page(vs->index, blkno,
						psprintf("Entry %u points to heap tuple (%u,%u), past the end of table \"%s\" (%u blocks).",
								 i, heap_block, offset,
								 RelationGetRelationName(vs->heap), vs->heap_blocks));
	}
}

/* Checks that entry i of block blkno (TID checked) sets at least the bits one column sets. */
static void
check_entry_bits(VerifyState *vs, BlockNumber blkno, uint32 i, const ItemPointerData *tidp,
				 uint32 set)
{
	if (set < vs->min_bits)
		bloomidx_report_corrupted_page(vs->index, blkno,
					psprintf("Entry %u (heap tuple (%u,%u)) has %u bits set, fewer than the %u that column %d sets alone.",
							 i, ItemPointerGetBlockNumberNoCheck(tidp),
							 ItemPointerGetOffsetNumberNoCheck(tidp), set, vs->min_bits,
							 vs->min_bits_column));
}

/*
 * Keeps entry i of block blkno (checked), its signature sig, if its heap
 * block is of the batch's and the budget has room (else notes the
 * overflow); digest: its verify_key_digest, 0 for a segment's row.
 */
static void
keep_entry(VerifyState *vs, BlockNumber blkno, uint32 i, const uint8 *sig,
		   const ItemPointerData *tidp, uint64 digest)
{
	uint32		nbytes = vs->geometry.signature_bytes;
	BlockNumber heap_block = ItemPointerGetBlockNumberNoCheck(tidp);

	/* Checked in every pass; kept only in its batch, and while the budget lasts. */
	if (heap_block < vs->rows_lo || heap_block >= vs->rows_hi)
		return;
	vs->entries_in_range++;
	if (vs->nentries >= vs->entry_budget)
	{
		vs->overflow = true;
		return;
	}

	EntryKey   *k = &vs->keys[vs->nentries];

	k->key = tid_key(heap_block, ItemPointerGetOffsetNumberNoCheck(tidp)) | (i & 0xFFFF);
	k->entry = (uint32) vs->nentries;
	k->index_block = blkno;
	if (sig != vs->signatures + vs->nentries * nbytes)
		memcpy(vs->signatures + vs->nentries * nbytes, sig, nbytes);
	if (vs->key_digests)
		vs->key_digests[vs->nentries] = digest;
	vs->nentries++;
}

/*
 * Checks one pending entry (slot i of pending page blkno), its signature
 * sig as stored, and collects it; digest: its verify_key_digest.
 */
static void
add_entry(VerifyState *vs, BlockNumber blkno, uint32 i, const uint8 *sig,
		  const ItemPointerData *tidp, uint64 digest)
{
	uint32		nbits = vs->meta.signature_bits;
	uint32		nbytes = vs->geometry.signature_bytes;
	uint32		set = 0;

	check_entry_tid(vs, blkno, i, tidp);
	for (uint32 b = 0; b < nbytes; b++)
		set += __builtin_popcount(sig[b]);
	for (uint32 pos = nbits; pos < nbytes * 8; pos++)
		if (bloomidx::signature_test_bit(sig, pos))
			bloomidx_report_corrupted_page(vs->index, blkno,
						psprintf("Entry %u (heap tuple (%u,%u)) sets bit %u, past the index's %u bits.",
								 i, ItemPointerGetBlockNumberNoCheck(tidp),
								 ItemPointerGetOffsetNumberNoCheck(tidp), pos, nbits));
	check_entry_bits(vs, blkno, i, tidp, set);
	keep_entry(vs, blkno, i, sig, tidp, digest);
}

/* Checks the entries of the pending page in vs->page and collects them. */
static void
collect_entries(VerifyState *vs, BlockNumber blkno)
{
	const bloomidx::RowPageGeometry *g = &vs->geometry;
	const uint8 *page = (const uint8 *) vs->page.data;
	uint32		count = bloomidx::page_opaque(page)->count;

	for (uint32 i = 0; i < count; i++)
	{
		ItemPointerData tid;

		memcpy(&tid, bloomidx::row_tid(page, *g, i), sizeof(tid));
		add_entry(vs, blkno, i, bloomidx::row_signatures(page) + i * g->signature_bytes, &tid,
				  g->keys > 0 ? verify_key_digest(bloomidx::row_tid(page, *g, i) + bloomidx::kTidSize,
												  g->keys) : 0);
	}
}

static PageProblem
check_header_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_segment_page(page, a->entry->segment_id, a->entry->rows,
										a->entry->first_slice, a->nslices,
										a->entry->slices_per_page,
										RelationGetNumberOfAttributes(a->index_rel),
										a->entry->header_block, a->nblocks);
}

static PageProblem
check_live_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_live_page(page, a->entry->rows, a->entry->segment_id);
}

static PageProblem
check_tids_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_tid_page(page, *a->header, (uint16) a->index);
}

static PageProblem
check_keys_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_key_page(page, a->entry->segment_id, a->entry->rows,
									(uint16) RelationGetNumberOfAttributes(a->index_rel),
									(uint16) a->index);
}

static PageProblem
check_slice_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_slice_page(page, a->entry->rows, (uint16) a->index,
									  a->entry->segment_id);
}

/*
 * A segment's live rows by its live page and by its directory entry, when
 * the copies disagree: VACUUM clears live bits and the entry's count in
 * one record (then moves the generation on once its pass is done, when it
 * lowered an entry on a directory page), so it may have run between the
 * directory copy and the page's.  Both are read again together (the live
 * page, then the metapage: VACUUM's order).  They must agree, unless the
 * segment left the directory meanwhile (false: start again).
 */
static bool
live_counts_agree(VerifyState *vs, const DirectoryCopy *dir, uint32 slot,
				  BlockNumber live_block)
{
	const bloomidx::SegmentEntry *e = &dir->entries[slot];
	uint32		generation = dir->header.generation;
	Buffer		lbuf = ReadBuffer(vs->index, live_block);
	Buffer		meta = ReadBuffer(vs->index, bloomidx::kMetaBlock);
	uint32		page_live = 0;
	int64		entry_live = -1;

	LockBuffer(lbuf, BUFFER_LOCK_SHARE);
	LockBuffer(meta, BUFFER_LOCK_SHARE);
	const uint8 *lpage = (const uint8 *) BufferGetPage(lbuf);
	const uint8 *mpage = (const uint8 *) BufferGetPage(meta);
	bool		live_sound = bloomidx::check_live_page(lpage, e->rows, e->segment_id) ==
		PageProblem::None;
	bool		same_generation = bloomidx::directory_header(mpage)->generation == generation;

	if (live_sound)
		for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
			page_live += (uint32) pg_popcount64(bloomidx::slice_page_words(lpage)[w]);
	/* The same generation: the entry is at the same place (on a page the copy names). */
	uint32		place;
	BlockNumber eblock = bloomidx_directory_entry_block(dir, slot, &place);

	if (same_generation && eblock == bloomidx::kMetaBlock &&
		bloomidx::directory_entries(mpage)[place].segment_id == e->segment_id)
		entry_live = bloomidx::directory_entries(mpage)[place].live_rows;
	else if (same_generation && eblock != bloomidx::kMetaBlock)
	{
		Buffer		dbuf = ReadBuffer(vs->index, eblock);

		LockBuffer(dbuf, BUFFER_LOCK_SHARE);
		const uint8 *dpage = (const uint8 *) BufferGetPage(dbuf);
		uint32		p = bloomidx::directory_page_of(slot);
		const bloomidx::SegmentEntry *de = &bloomidx::directory_page_entries(dpage)[place];

		if (bloomidx::check_directory_page(dpage,
										   (uint16) bloomidx::directory_page_count(dir->header.nsegments, p),
										   (uint16) p) == PageProblem::None &&
			de->segment_id == e->segment_id)
			entry_live = de->live_rows;
		UnlockReleaseBuffer(dbuf);
	}
	UnlockReleaseBuffer(meta);
	UnlockReleaseBuffer(lbuf);

	if (!same_generation)
		return false;
	if (!live_sound || entry_live != (int64) page_live)
		bloomidx_report_corrupted_page(vs->index, live_block,
					psprintf("Segment %u has %u live rows, its directory entry says %lld.",
							 e->segment_id, page_live, (long long) entry_live));
	return true;
}

/*
 * Checks every page of a segment and collects its live rows, their
 * signatures put back together from the slices.  False: the segment was
 * replaced meanwhile.
 */
static bool
check_segment(VerifyState *vs, const DirectoryCopy *dir, uint32 entry, BufferAccessStrategy bas,
			  BlockNumber nblocks)
{
	const bloomidx::SegmentEntry *e = &dir->entries[entry];
	uint32		generation = dir->header.generation;
	SegmentCheckArg arg = {e, NULL, vs->meta.signature_bits, nblocks, 0, vs->index, NULL};
	/* In the pass's memory: a pass that starts again returns early, without freeing them. */
	bloomidx::SegmentHeader *h = (bloomidx::SegmentHeader *)
		MemoryContextAlloc(vs->pass_cxt, sizeof(bloomidx::SegmentHeader));
	uint64	   *live = (uint64 *) MemoryContextAlloc(vs->pass_cxt, BLCKSZ);
	ItemPointerData *tids = (ItemPointerData *)
		MemoryContextAlloc(vs->pass_cxt, e->rows * sizeof(ItemPointerData));
	uint32	   *slot = (uint32 *) MemoryContextAlloc(vs->pass_cxt, e->rows * sizeof(uint32));
	/* The live rows of the batch's blocks, and their slots in the entries kept. */
	uint64	   *keep = (uint64 *) MemoryContextAllocZero(vs->pass_cxt, BLCKSZ);
	uint32		nkeep = 0;
	uint32		nbytes = vs->geometry.signature_bytes;
	uint8	   *row_keys = NULL;	/* a small segment's rows' filter keys */
	bool		ok = false;

	if (!verify_copy_checked(vs, e->header_block, bas, generation, check_header_arg, &arg))
		return false;
	memcpy(h, bloomidx::segment_header((const uint8 *) vs->page.data), sizeof(*h));
	arg.header = h;

	if (!verify_copy_checked(vs, h->live_block, bas, generation, check_live_arg, &arg))
		return false;
	memcpy(live, bloomidx::slice_page_words((const uint8 *) vs->page.data),
		   bloomidx::kSliceWords * sizeof(uint64));
	uint32		nlive = 0;

	for (uint32 w = 0; w < bloomidx::kSliceWords; w++)
		nlive += (uint32) pg_popcount64(live[w]);
	if (nlive != e->live_rows && !live_counts_agree(vs, dir, entry, h->live_block))
		return false;

	/* The TIDs, group by group. */
	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		arg.index = p;
		if (!verify_copy_checked(vs, h->tid_blocks[p], bas, generation, check_tids_arg, &arg))
			goto done;
		for (uint32 g = 0; g < h->ngroups; g++)
		{
			if (h->groups[g].page != p)
				continue;
			bloomidx::HeapTid group[bloomidx::kTidGroupRows];
			uint32		first = g * bloomidx::kTidGroupRows;
			uint32		n = bloomidx::tid_page_group(*h, (const uint8 *) vs->page.data, g, group);

			if (n == 0)
				bloomidx_report_corrupted_page(vs->index, h->tid_blocks[p],
							psprintf("TID group %u of segment %u cannot be decoded.",
									 g, e->segment_id));
			for (uint32 i = 0; i < n; i++)
				ItemPointerSet(&tids[first + i], group[i].block, group[i].offset);
		}
	}

	for (uint32 r = 0; r < e->rows; r++)
		if ((live[r / 64] & (UINT64CONST(1) << (r % 64))) &&
			ItemPointerGetBlockNumberNoCheck(&tids[r]) >= vs->rows_lo &&
			ItemPointerGetBlockNumberNoCheck(&tids[r]) < vs->rows_hi)
		{
			keep[r / 64] |= UINT64CONST(1) << (r % 64);
			slot[r] = nkeep++;
		}

	/* Its filters, copied if some live row is of the batch's blocks (verify_check_row_filter). */
	if (!verify_collect_filter(vs, e, bas, generation, nblocks, nkeep > 0))
		goto done;

	/*
	 * A small segment's rows' filter keys (format 16), which a merge makes
	 * its filters from: checked against its rows' values below, as pending
	 * rows' are (a wrong key would leave a merged filter without a value
	 * its rows hold).
	 */
	if (h->key_pages > 0)
	{
		uint32		nkeys = (uint32) vs->state.ncolumns;
		uint32		per_page = bloomidx::key_rows_per_page(nkeys);
		BlockNumber first = h->live_block + 1 + h->ntid_pages;

		/* Where and how many: check_segment_page checked the header. */
		Assert((uint64) first + h->key_pages == e->header_block &&
			   bloomidx::key_page_count(e->rows, nkeys) == h->key_pages);
		row_keys = (uint8 *) MemoryContextAlloc(vs->pass_cxt, (Size) e->rows * nkeys * sizeof(uint32));
		for (uint32 p = 0; p < h->key_pages; p++)
		{
			arg.index = p;
			if (!verify_copy_checked(vs, first + p, bas, generation, check_keys_arg, &arg))
				goto done;
			memcpy(row_keys + (Size) p * per_page * nkeys * sizeof(uint32),
				   bloomidx::key_page_keys((const uint8 *) vs->page.data),
				   (Size) bloomidx::page_opaque((const uint8 *) vs->page.data)->count *
				   nkeys * sizeof(uint32));
		}
	}

	/*
	 * Every live row's bits counted from the slices (each checked, as a
	 * pending entry is, in every pass), and the signatures of the rows of
	 * the batch's blocks put back together in the arena, where they are
	 * kept: no more memory than the entries kept (a pass they would take
	 * past the budget keeps none, and is made again over fewer blocks).
	 */
	{
		uint16	   *counts = (uint16 *) MemoryContextAllocZero(vs->pass_cxt,
															   e->rows * sizeof(uint16));
		uint8	   *base = NULL;

		if (vs->nentries + nkeep > vs->entry_budget)
		{
			vs->overflow = true;
			vs->entries_in_range += nkeep;
			nkeep = 0;
		}
		else if (nkeep > 0)
		{
			reserve_entries_for(vs, nkeep);
			base = vs->signatures + vs->nentries * nbytes;
			memset(base, 0, (Size) nkeep * nbytes);
		}
		for (uint32 j = 0; j < vs->meta.signature_bits; j++)
		{
			bloomidx::SliceSpot spot = bloomidx::slice_spot(j, e->rows, e->slices_per_page);

			CHECK_FOR_INTERRUPTS();
			/* A page of packed slices is read once, at its first. */
			arg.index = spot.first;
			if (spot.first == j &&
				!verify_copy_checked(vs, e->first_slice + spot.page, bas, generation, check_slice_arg, &arg))
				goto done;

			const uint64 *words = bloomidx::slice_page_words((const uint8 *) vs->page.data) + spot.word;

			if (!bloomidx::count_slice_bits(words, live, e->rows, counts))
				bloomidx_report_corrupted_page(vs->index, e->first_slice + spot.page,
							psprintf("Slice %u of segment %u sets a row past its %u rows.",
									 j, e->segment_id, (uint32) e->rows));
			if (nkeep > 0)
				(void) bloomidx::untranspose_slice(words, keep, e->rows, j, slot, base, nbytes);
		}
		for (uint32 r = 0; r < e->rows; r++)
		{
			if (!(live[r / 64] & (UINT64CONST(1) << (r % 64))))
				continue;
			check_entry_tid(vs, e->header_block, r, &tids[r]);
			check_entry_bits(vs, e->header_block, r, &tids[r], counts[r]);
			/* Kept in row order: row r's slot is the next entry's place. */
			if (nkeep > 0 && (keep[r / 64] & (UINT64CONST(1) << (r % 64))))
				keep_entry(vs, e->header_block, r, base + (Size) slot[r] * nbytes, &tids[r],
						   row_keys == NULL ? 0 :
						   verify_key_digest(row_keys + (Size) r * vs->state.ncolumns * sizeof(uint32),
											 (uint32) vs->state.ncolumns));
		}
		pfree(counts);
	}
	ok = true;
done:
	pfree(keep);
	if (row_keys != NULL)
		pfree(row_keys);
	pfree(h);
	pfree(live);
	pfree(tids);
	pfree(slot);
	return ok;
}

/* Records the first page whose entry sums disagree, to report last. */
static void
note_sums(VerifyState *vs, BlockNumber blkno)
{
	const uint8 *raw = (const uint8 *) vs->page.data;
	PageProblem sums = bloomidx::check_row_page_signatures(raw, vs->geometry);

	if (sums == PageProblem::None)
		sums = bloomidx::check_row_page_tids(raw, vs->geometry);
	if (sums != PageProblem::None && vs->sums_problem == PageProblem::None)
	{
		vs->sums_problem = sums;
		vs->sums_problem_block = blkno;
	}
}

/*
 * One pass over the pages a scan reads: the segments and the pending
 * pages of one copy of the directory.  False when a page was reused by a
 * concurrent seal meanwhile: the caller starts again.
 */
bool
verify_check_pages_pass(VerifyState *vs, BufferAccessStrategy bas)
{
	MemoryContext old = MemoryContextSwitchTo(vs->cxt);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	MemoryContextSwitchTo(old);
	bool		ok = true;

	vs->index_blocks = RelationGetNumberOfBlocks(vs->index);
	bloomidx_read_directory(vs->index, &vs->index_blocks, dir);

	uint32		generation = dir->header.generation;

	for (uint32 i = 0; ok && i < dir->header.nsegments; i++)
		ok = check_segment(vs, dir, i, bas, vs->index_blocks);

	/* The pending groups, copied before the walk (verify_collect_pending_groups says why). */
	if (ok)
		ok = verify_collect_pending_groups(vs, dir, bas);

	PendingWalk walk;
	bool		tail_met = false;

	bloomidx_pending_walk_init(&walk, vs->index, dir->header.pending_head, vs->index_blocks);
	while (ok && bloomidx_pending_walk_more(&walk))
	{
		BlockNumber blkno = walk.blkno;

		CHECK_FOR_INTERRUPTS();
		tail_met |= blkno == dir->header.pending_tail;
		reserve_entries(vs);
		verify_copy_page(vs, blkno, bas);

		const uint8 *raw = (const uint8 *) vs->page.data;

		if (PageIsNew((Page) raw) || !bloomidx::is_pending_kind(bloomidx::page_opaque(raw)->flags) ||
			bloomidx::page_stamp(raw) > generation)
		{
			if (bloomidx_directory_generation(vs->index) != generation)
			{
				ok = false;
				break;
			}
			if (PageIsNew((Page) raw))
				bloomidx_report_corrupted_page(vs->index, blkno,
											   "The pending list leads to a new page.");
		}
		bloomidx_check_data_page(vs->index, blkno, (Page) raw, &vs->geometry,
								 bloomidx::EntryChecks::None);
		if (bloomidx::page_stamp(raw) > generation)
			bloomidx_report_corrupted_page(vs->index, blkno,
										   "A pending page is stamped with a later directory generation than the directory's.");
		/* A seal would write a segment over it. */
		if (bloomidx::free_list_overlaps(dir->free, blkno, 1))
			bloomidx_report_corrupted_page(vs->index, bloomidx::kMetaBlock,
										   psprintf("The metapage's free list includes pending page %u.",
													blkno));
		collect_entries(vs, blkno);
		if (vs->npending_slots > 0 && !verify_check_pending_slot_page(vs, blkno, generation))
		{
			ok = false;
			break;
		}
		/* Reported after the row-by-row checks, which may name the damaged entry instead. */
		note_sums(vs, blkno);
		vs->pending_pages++;
		bloomidx_pending_walk_follow(&walk, bloomidx::pending_next(raw));
	}
	vs->index_blocks = walk.nblocks;
	if (ok)
		ok = bloomidx_check_pending_count(vs->index, dir, vs->pending_pages);

	/*
	 * The metapage's tail is on the list (pages linked since come after
	 * it), and an empty list has neither head nor tail nor pages: an insert
	 * links behind the tail the metapage names, so a stale one would lose
	 * the rows linked there.
	 */
	bool		empty = dir->header.pending_head == bloomidx::kMetaBlock;

	if (ok && (empty != (dir->header.pending_tail == bloomidx::kMetaBlock) ||
			   empty != (dir->header.pending_pages == 0) || (!empty && !tail_met)))
	{
		if (bloomidx_directory_generation(vs->index) != generation)
			ok = false;
		else
			bloomidx_report_corrupted_page(vs->index, bloomidx::kMetaBlock,
										   psprintf("The metapage's pending list (head %u, tail %u, %u pages) does not end at its tail.",
													dir->header.pending_head,
													dir->header.pending_tail,
													dir->header.pending_pages));
	}
	if (ok && vs->npending_slots > 0)
		ok = verify_check_pending_run(vs, generation);
	vs->segments = dir->header.nsegments;
	bloomidx_directory_copy_free(dir);
	return ok;
}

/* What a pass collects, let go of before the next. */
void
verify_reset_pass(VerifyState *vs)
{
	vs->nentries = 0;
	vs->overflow = false;
	vs->entries_in_range = 0;
	vs->pending_pages = 0;
	vs->sums_problem = PageProblem::None;
	MemoryContextReset(vs->pass_cxt);
	vs->groups = NULL;
	vs->ngroups = 0;
	vs->max_groups = 0;
	vs->filter_refs = NULL;
	vs->nfilter_refs = 0;
	vs->max_filter_refs = 0;
	verify_free_pending_groups(vs);
}
