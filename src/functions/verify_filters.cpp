/*
 * verify_filters.cpp: bloomidx_verify's filters (verify.cpp says what it
 * checks): each segment's filter group, its header and region pages
 * checked and, where the batch's rows need them, copied; the pending
 * groups, a run of the pending list; and a row's filter keys, which a
 * scan would probe, probed in its segment's or pending page's filters.
 */
#include "functions/verify_state.h"

static PageProblem
check_group_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_filter_group_page(page, a->entry->filter_group,
											 (uint32) RelationGetNumberOfAttributes(a->index_rel),
											 a->entry->filter_block, a->nblocks);
}

static PageProblem
check_filter_arg(const uint8 *page, const void *arg)
{
	const SegmentCheckArg *a = (const SegmentCheckArg *) arg;

	return bloomidx::check_filter_page(page, *a->group, a->index);
}

/*
 * Checks the region pages of group vg (header copied, for segment entry
 * e's check args) and, if keep, copies them for verify_check_row_filter.  False:
 * replaced meanwhile.
 */
static bool
check_group_region(VerifyState *vs, VerifyGroup *vg, const bloomidx::SegmentEntry *e,
				   BufferAccessStrategy bas, uint32 generation, BlockNumber nblocks, bool keep)
{
	SegmentCheckArg arg = {e, NULL, 0, nblocks, 0, vs->index, &vg->header};

	if (keep)
		vg->region = (uint8 *) MemoryContextAllocHuge(vs->pass_cxt,
													  (Size) Max(vg->header.region_pages, 1) * BLCKSZ);
	for (uint32 p = 0; p < vg->header.region_pages; p++)
	{
		arg.index = p;
		if (!verify_copy_checked(vs, vg->region_blocks[p], bas, generation, check_filter_arg, &arg))
			return false;
		if (keep)
			memcpy(vg->region + (Size) p * BLCKSZ, vs->page.data, BLCKSZ);
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/*
 * Checks the filter group of segment entry e (once per group) and notes
 * the segment's slot in it, for check_row; keeps a copy of its region
 * pages if keep (the segment has rows of the batch's blocks), else only
 * checks them, so that a batch holds the groups of its own rows.  False:
 * replaced meanwhile.
 */
bool
verify_collect_filter(VerifyState *vs, const bloomidx::SegmentEntry *e, BufferAccessStrategy bas,
					  uint32 generation, BlockNumber nblocks, bool keep)
{
	if (e->filter_block == 0)
		return true;

	uint32		g = vs->ngroups;

	for (uint32 i = vs->ngroups; i-- > 0;)	/* a group's segments come together */
		if (vs->groups[i].block == e->filter_block)
		{
			g = i;
			break;
		}
	if (g == vs->ngroups)
	{
		SegmentCheckArg arg = {e, NULL, 0, nblocks, 0, vs->index, NULL};

		if (!verify_copy_checked(vs, e->filter_block, bas, generation, check_group_arg, &arg))
			return false;
		if (vs->ngroups == vs->max_groups)
		{
			vs->max_groups = Max(16, vs->max_groups * 2);
			vs->groups = vs->groups == NULL
				? (VerifyGroup *) MemoryContextAlloc(vs->pass_cxt, vs->max_groups * sizeof(VerifyGroup))
				: (VerifyGroup *) repalloc(vs->groups, vs->max_groups * sizeof(VerifyGroup));
		}
		VerifyGroup *vg = &vs->groups[g];

		vg->block = e->filter_block;
		memcpy(&vg->header, bloomidx::filter_group_header((const uint8 *) vs->page.data),
			   sizeof(vg->header));
		vg->region = NULL;
		vg->region_blocks = (uint32 *) MemoryContextAlloc(vs->pass_cxt,
														  Max(vg->header.region_pages, 1) * sizeof(uint32));
		for (uint32 p = 0; p < vg->header.region_pages; p++)
			vg->region_blocks[p] = bloomidx::group_region_block((const uint8 *) vs->page.data,
																e->filter_block, p);
		vs->ngroups++;
		if (!check_group_region(vs, vg, e, bas, generation, nblocks, keep))
			return false;
	}
	else if (keep && vs->groups[g].region == NULL &&
			 !check_group_region(vs, &vs->groups[g], e, bas, generation, nblocks, true))
		return false;			/* (checked before, not kept: read again) */

	const VerifyGroup *vg = &vs->groups[g];

	bloomidx::SlotMask slots = bloomidx::group_segment_slots(vg->header, e->segment_id);

	if (e->filter_offset >= vg->header.slots_taken || !slots.has(e->filter_offset))
		bloomidx_report_corrupted_page(vs->index, e->filter_block,
					psprintf("Slot %u of the filter group does not hold segment %u.",
							 e->filter_offset, e->segment_id));
	if (vs->nfilter_refs == vs->max_filter_refs)
	{
		vs->max_filter_refs = Max(64, vs->max_filter_refs * 2);
		vs->filter_refs = vs->filter_refs == NULL
			? (SegmentFilterRef *) MemoryContextAlloc(vs->pass_cxt, vs->max_filter_refs * sizeof(SegmentFilterRef))
			: (SegmentFilterRef *) repalloc(vs->filter_refs, vs->max_filter_refs * sizeof(SegmentFilterRef));
	}
	SegmentFilterRef *ref = &vs->filter_refs[vs->nfilter_refs++];

	ref->header_block = e->header_block;
	ref->group = g;
	ref->slots = slots;
	ref->segment_id = e->segment_id;
	return true;
}

/*
 * Pending groups (storage/pending_filters.cpp, format 17): filter groups
 * whose slots are pending pages, a run of the pending list.  The chain is
 * copied before the list is walked, each header before its region pages.
 * A slot is written only for a page that is full and has a successor, its
 * region blocks before the header names it, and neither the page's rows
 * nor its successor change until a publish drops the groups (a new
 * generation: a seal, VACUUM).  So within one generation the walk that
 * follows meets every slot's page, full, with the successor it had and
 * every row the slot's filters were made from, and the region pages
 * copied hold the blocks of every slot their header had taken.  What
 * disagrees is damage, unless the generation moved on meanwhile (then the
 * pass starts again).  Like the rest of verify, this takes no seal lock:
 * the slots and groups inserts add after the copy are left out, as a scan
 * that copied the chain earlier leaves them out.
 */

/* Reports damage at blkno, unless the directory changed since the copy of `generation`: false, start again. */
static bool
pending_damage(VerifyState *vs, uint32 generation, BlockNumber blkno, const char *detail)
{
	if (bloomidx_directory_generation(vs->index) != generation)
		return false;
	bloomidx_report_corrupted_page(vs->index, blkno, detail);
	return false;				/* not reached */
}

/* The order of two blocks, for qsort's comparators. */
static inline int
block_order(BlockNumber x, BlockNumber y)
{
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* Slot refs in pending page order, to look them up. */
static int
compare_pending_slots(const void *a, const void *b)
{
	return block_order(((const PendingSlotRef *) a)->page, ((const PendingSlotRef *) b)->page);
}

/* The copies of a pass that starts again, freed. */
void
verify_free_pending_groups(VerifyState *vs)
{
	for (uint32 g = 0; g < vs->npending_groups; g++)
	{
		pfree(vs->pending_groups[g].region);
		pfree(vs->pending_groups[g].region_blocks);
	}
	if (vs->pending_groups != NULL)
		pfree(vs->pending_groups);
	if (vs->pending_slots != NULL)
		pfree(vs->pending_slots);
	vs->pending_groups = NULL;
	vs->pending_slots = NULL;
	vs->npending_groups = 0;
	vs->npending_slots = 0;
}

/*
 * Copies and checks the chain of pending groups of the directory copy:
 * every header as a scan checks it (check_pending_group_page), the ids
 * growing along the chain and none a group of segments', no cycle, no
 * page of theirs on the free list, every region page (check_filter_page);
 * and notes each slot's pending page, for the walk.  False: start again.
 */
bool
verify_collect_pending_groups(VerifyState *vs, const DirectoryCopy *dir,
							  BufferAccessStrategy bas)
{
	uint32		generation = dir->header.generation;
	BlockNumber blkno = dir->pending_filters.first_group;
	uint32		id = dir->pending_filters.first_group_id;
	uint32		prev_id = 0;
	uint32		max_groups = 0;
	uint32		max_slots = 0;

	verify_free_pending_groups(vs);
	if (blkno != bloomidx::kMetaBlock && vs->geometry.keys == 0)
		return pending_damage(vs, generation, bloomidx::kMetaBlock,
							  "The metapage names pending groups, but the index's pending rows keep no filter keys to make them from.");

	for (BlockNumber walked = 0; blkno != bloomidx::kMetaBlock; walked++)
	{
		CHECK_FOR_INTERRUPTS();
		if (walked >= vs->index_blocks)
			vs->index_blocks = RelationGetNumberOfBlocks(vs->index);
		if (walked >= vs->index_blocks)
			return pending_damage(vs, generation, blkno,
								  psprintf("The chain of pending groups has more groups than the index has pages (%u): it has a cycle.",
										   vs->index_blocks));

		PageProblem problem = bloomidx_pending_group_copy(vs->index, blkno, id, &vs->index_blocks,
														  bas, vs->page.data);

		if (problem != PageProblem::None)
		{
			if (bloomidx_directory_generation(vs->index) != generation)
				return false;
			bloomidx_report_page_problem(vs->index, blkno, problem);
		}
		vs->index_blocks = Max(vs->index_blocks, RelationGetNumberOfBlocks(vs->index));
		if (id <= prev_id)
			return pending_damage(vs, generation, blkno,
								  psprintf("Pending group %u follows pending group %u in their chain: each group's id is above the one's before it.",
										   id, prev_id));
		for (uint32 i = 0; i < dir->header.nsegments; i++)
			if (dir->entries[i].filter_block != 0 && dir->entries[i].filter_group == id)
				return pending_damage(vs, generation, blkno,
									  psprintf("Pending group %u has the id of segment %u's filter group.",
											   id, dir->entries[i].segment_id));

		if (vs->npending_groups == max_groups)
		{
			max_groups = Max(8, 2 * max_groups);
			vs->pending_groups = vs->pending_groups == NULL
				? (VerifyGroup *) MemoryContextAlloc(vs->cxt, max_groups * sizeof(VerifyGroup))
				: (VerifyGroup *) repalloc(vs->pending_groups, max_groups * sizeof(VerifyGroup));
		}

		uint32		g = vs->npending_groups;
		VerifyGroup *vg = &vs->pending_groups[g];
		const uint8 *hp = (const uint8 *) vs->page.data;

		vg->block = blkno;
		memcpy(&vg->header, bloomidx::filter_group_header(hp), sizeof(vg->header));
		vg->links = bloomidx::pending_group_links(hp);
		vg->region = (uint8 *) MemoryContextAllocHuge(vs->cxt,
													  (Size) Max(vg->header.region_pages, 1) * BLCKSZ);
		vg->region_blocks = (uint32 *) MemoryContextAlloc(vs->cxt,
														  Max(vg->header.region_pages, 1) * sizeof(uint32));
		for (uint32 p = 0; p < vg->header.region_pages; p++)
			vg->region_blocks[p] = bloomidx::group_region_block(hp, blkno, p);
		vs->npending_groups++;

		/* A page of theirs on the free list: a seal would write a segment over it. */
		for (uint32 p = 0; p <= vg->header.region_pages; p++)
		{
			BlockNumber b = p == 0 ? blkno : vg->region_blocks[p - 1];

			if (bloomidx::free_list_overlaps(dir->free, b, 1))
				return pending_damage(vs, generation, bloomidx::kMetaBlock,
									  psprintf("The metapage's free list includes page %u of pending group %u.",
											   b, id));
		}

		/* The region pages, after the header: every slot it names is written there. */
		SegmentCheckArg arg = {NULL, NULL, 0, vs->index_blocks, 0, vs->index, &vg->header};

		for (uint32 p = 0; p < vg->header.region_pages; p++)
		{
			arg.index = p;
			if (!verify_copy_checked(vs, vg->region_blocks[p], bas, generation, check_filter_arg, &arg))
				return false;
			memcpy(vg->region + (Size) p * BLCKSZ, vs->page.data, BLCKSZ);
			CHECK_FOR_INTERRUPTS();
		}

		for (uint32 slot = 0; slot < vg->header.slots_taken; slot++)
		{
			if (vs->npending_slots == max_slots)
			{
				max_slots = Max(128, 2 * max_slots);
				vs->pending_slots = vs->pending_slots == NULL
					? (PendingSlotRef *) MemoryContextAlloc(vs->cxt, max_slots * sizeof(PendingSlotRef))
					: (PendingSlotRef *) repalloc(vs->pending_slots, max_slots * sizeof(PendingSlotRef));
			}
			PendingSlotRef *ref = &vs->pending_slots[vs->npending_slots];

			ref->page = vg->header.slot_segment[slot];
			ref->group = g;
			ref->slot = slot;
			ref->run = vs->npending_slots;
			ref->next = InvalidBlockNumber;
			vs->npending_slots++;
		}
		prev_id = id;
		blkno = vg->links.next_group;
		id = vg->links.next_group_id;
	}

	/* Each pending page in one slot at most. */
	if (vs->npending_slots > 1)
		pg_qsort(vs->pending_slots, vs->npending_slots, sizeof(PendingSlotRef),
				 compare_pending_slots);
	for (uint32 i = 1; i < vs->npending_slots; i++)
	{
		const PendingSlotRef *a = &vs->pending_slots[i - 1];
		const PendingSlotRef *b = &vs->pending_slots[i];

		if (a->page == b->page)
			return pending_damage(vs, generation, vs->pending_groups[b->group].block,
								  psprintf("Pending page %u has two slots: slot %u of pending group %u and slot %u of pending group %u.",
										   a->page, a->slot, vs->pending_groups[a->group].header.group_id,
										   b->slot, vs->pending_groups[b->group].header.group_id));
	}
	return true;
}

/*
 * The pending page in vs->page (block blkno, checked), as the walk meets
 * it: if it has a slot, it is full, and every row's filter key of each
 * column is in that slot's filter of the column (else a scan that reads
 * the group would skip the row); its successor noted for
 * verify_check_pending_run.  False: start again.
 */
bool
verify_check_pending_slot_page(VerifyState *vs, BlockNumber blkno, uint32 generation)
{
	PendingSlotRef probe;

	probe.page = blkno;

	PendingSlotRef *ref = (PendingSlotRef *)
		bsearch(&probe, vs->pending_slots, vs->npending_slots, sizeof(PendingSlotRef),
				compare_pending_slots);

	if (ref == NULL)
		return true;			/* before or after the run */

	const uint8 *raw = (const uint8 *) vs->page.data;
	const bloomidx::RowPageGeometry *g = &vs->geometry;
	const VerifyGroup *vg = &vs->pending_groups[ref->group];
	const bloomidx::FilterGroupHeader *h = &vg->header;
	uint32		count = bloomidx::page_opaque(raw)->count;

	ref->next = bloomidx::pending_next(raw);
	if (count != g->capacity)
		return pending_damage(vs, generation, blkno,
							  psprintf("Pending page %u has slot %u of pending group %u but %u rows, not the %u of a full page: a page gets its slot once full, and VACUUM drops the groups before it removes rows.",
									   blkno, ref->slot, h->group_id, count, g->capacity));
	for (uint32 i = 0; i < count; i++)
	{
		const uint8 *keys = bloomidx::row_tid(raw, *g, i) + bloomidx::kTidSize;

		for (uint32 c = 0; c < h->ncolumns && c < g->keys; c++)
		{
			uint32		key;
			uint32		page,
						at;

			memcpy(&key, keys + c * bloomidx::kFilterKeySize, sizeof(key));
			if (!bloomidx::group_row_of(*h, c, key, &page, &at))
				continue;		/* no filter for the column: every slot passes */
			if (!bloomidx::group_row_probe(vg->region + (Size) page * BLCKSZ + at,
										   h->columns[c].probes, h->slots_taken,
										   key).has(ref->slot))
				return pending_damage(vs, generation, vg->region_blocks[page],
									  psprintf("Slot %u of pending group %u lacks the filter key of column %u of entry %u of pending page %u: a scan would skip the row.",
											   ref->slot, h->group_id, c + 1, i, blkno));
		}
	}
	return true;
}

/*
 * After the walk: the slots' pages a run of the pending list, as a scan
 * reads them.  Every slot's page met by the walk; each slot's page the
 * successor of the one before it, a group's first slot's the page the
 * group before it names as `after`; each group's `after` the successor of
 * its last slot's page.  False: start again.
 */
bool
verify_check_pending_run(VerifyState *vs, uint32 generation)
{
	const PendingSlotRef **order = (const PendingSlotRef **)
		MemoryContextAlloc(vs->pass_cxt, Max(vs->npending_slots, 1) * sizeof(PendingSlotRef *));
	uint32		k = 0;
	const PendingSlotRef *prev = NULL;
	BlockNumber prev_after = bloomidx::kMetaBlock;

	for (uint32 i = 0; i < vs->npending_slots; i++)
		order[vs->pending_slots[i].run] = &vs->pending_slots[i];
	for (uint32 g = 0; g < vs->npending_groups; g++)
	{
		const VerifyGroup *vg = &vs->pending_groups[g];
		uint32		id = vg->header.group_id;

		for (uint32 s = 0; s < vg->header.slots_taken; s++)
		{
			const PendingSlotRef *ref = order[k++];

			if (ref->next == InvalidBlockNumber)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Slot %u of pending group %u names page %u, which is not on the pending list.",
											   s, id, ref->page));
			if (prev != NULL && s == 0 && ref->page != prev_after)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Pending group %u starts at page %u, not at page %u, which the group before it names as the page after its slots.",
											   id, ref->page, prev_after));
			if (prev != NULL && s > 0 && ref->page != prev->next)
				return pending_damage(vs, generation, vg->block,
									  psprintf("Slot %u of pending group %u names page %u, but the pending list links slot %u's page %u to page %u.",
											   s, id, ref->page, s - 1, prev->page, prev->next));
			prev = ref;
		}
		if (vg->header.slots_taken > 0 && vg->links.after != prev->next)
			return pending_damage(vs, generation, vg->block,
								  psprintf("Pending group %u names page %u as the page after its slots, but the pending list links its last slot's page %u to page %u.",
										   id, vg->links.after, prev->page, prev->next));
		prev_after = vg->links.after;
	}
	pfree(order);
	return true;
}

/* Filter refs in header block order, to look them up. */
int
verify_compare_filter_refs(const void *a, const void *b)
{
	return block_order(((const SegmentFilterRef *) a)->header_block,
					   ((const SegmentFilterRef *) b)->header_block);
}

/*
 * The row's entry k (found, its bits right) is in a segment: its filter
 * must hold every column's value, or a scan would skip the row.
 */
void
verify_check_row_filter(VerifyState *vs, const EntryKey *k, BlockNumber heap_block,
						OffsetNumber offset)
{
	SegmentFilterRef probe;

	probe.header_block = k->index_block;
	const SegmentFilterRef *ref = (const SegmentFilterRef *)
		bsearch(&probe, vs->filter_refs, vs->nfilter_refs, sizeof(SegmentFilterRef),
				verify_compare_filter_refs);

	if (ref == NULL)
		return;					/* a pending page's entry, or a segment without filters */

	const VerifyGroup *vg = &vs->groups[ref->group];
	bloomidx::SlotMask slots = ref->slots;

	/* Kept for every segment with a row of the batch (verify_collect_filter): this one has k. */
	if (vg->region == NULL)
		elog(ERROR, "bloomidx_verify: the filter group at block %u was not kept for its batch",
			 vg->block);

	/*
	 * A scan lets the segment through when one of its slots holds every
	 * key: so must one slot hold every column's value here.
	 */
	for (int c = 0; c < vs->state.ncolumns; c++)
	{
		uint32		page,
					at;

		if (!bloomidx::group_row_of(vg->header, (uint32) c, vs->row_keys[c], &page, &at))
			continue;
		slots = bloomidx::group_row_probe_within(vg->region + (Size) page * BLCKSZ + at,
												 vg->header.columns[c].probes, slots,
												 vs->row_keys[c]);
		if (!slots.any())
			bloomidx_report_corrupted_page(vs->index, vg->region_blocks[page],
						psprintf("The filter of segment %u lacks the value of column %d of heap tuple (%u,%u).",
								 ref->segment_id, c + 1, heap_block, offset));
	}
}

/*
 * The row's entry k (found, its bits right), if on a pending page, must
 * keep the filter keys the row's values give.
 */
void
verify_check_row_keys(VerifyState *vs, const EntryKey *k, BlockNumber heap_block,
					  OffsetNumber offset)
{
	if (vs->key_digests == NULL || vs->key_digests[k->entry] == 0)
		return;
	if (vs->key_digests[k->entry] !=
		verify_key_digest((const uint8 *) vs->row_keys, (uint32) vs->state.ncolumns))
		bloomidx_report_corrupted_page(vs->index, k->index_block,
					psprintf("Entry %u (heap tuple (%u,%u)) keeps filter keys that its tuple's values do not give.",
							 (uint32) (k->key & 0xFFFF), heap_block, offset));
}
