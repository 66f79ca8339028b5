/*
 * filter_scan.cpp: asking the segments' filters (storage/README.md,
 * *Segment filters*) which segments may hold rows the query wants.
 *
 * The directory's entries are taken group by group.  For each group: its
 * header (the columns' block counts), then per query key the block row of
 * each of the key's hashes, one region page each, which answers for every
 * segment of the group at once.  A segment passes when every key has a
 * hash its filter may hold: any of its slots' filters (a merged segment
 * has one slot per source, filter_merge.cpp).  A group page that belongs elsewhere was
 * recycled since the directory was copied (the caller starts again) or is
 * damaged (XX002): a segment is never skipped on a page that cannot be
 * trusted.
 *
 * Filters that pass every segment are not asked further: a key whose
 * column's filters held it in each of the first KEY_USELESS_AFTER segments
 * asked (a value that most segments hold, such as a status or a region) is
 * dropped from the rest of the probes, and once every key is dropped the
 * remaining groups are not read at all.  Asking fewer keys only lets more
 * segments through, to be read slice by slice as without filters: a query
 * for common values pays the filter pages of its first 16 segments (two
 * of a build's groups, or the groups of 16 sealed segments), not every
 * group's.  Keys are asked in the index's column order, and a key is
 * counted only on the segments the keys before it let through.
 *
 * An IN list's elements are each asked, and each segment told which of
 * them its filters may hold: the segment then tests only those elements'
 * slices (segment_scan.cpp), so an element no filter lets through costs
 * its filter rows and nothing more.
 */
#include "storage/storage.h"

/* Segments a key must pass, every one, before its filters are not asked further. */
#define KEY_USELESS_AFTER 16

/*
 * Per query key: the segments it was asked for, and those it passed;
 * elements: an IN list whose elements' answers the segments get.
 */
typedef struct KeyProbeStats
{
	uint32		tested;
	uint32		passed;
	bool		elements;
} KeyProbeStats;

/*
 * Whether the key's filters are still asked (their counts stop once not).
 * An IN list's are, however many segments it passes: each segment tests
 * only the elements its filters may hold, and a long list passes nearly
 * every segment (one of its elements does) while each element passes few.
 */
static inline bool
key_asked(const KeyProbeStats *stats)
{
	return stats->elements || stats->tested < KEY_USELESS_AFTER ||
		stats->passed < stats->tested;
}

/* An entry of the group order (bloomidx::group_order_key): its group's header block, its index. */
static inline BlockNumber
order_block(uint64 key)
{
	return (BlockNumber) (key >> 32);
}

static inline uint32
order_index(uint64 key)
{
	return (uint32) key;
}

/*
 * Pins and share-locks region page `region_page` of the group whose header
 * (checked) is h, at block blkno, into *buffer if it passes its check (its
 * sums trusted where hints remember them checked at the page's LSN): the
 * problem found, quietly (the page let go then, *buffer invalid).  The
 * caller probes the page in place, a word a slot of one block row, for
 * each of a key's hashes on it, then lets it go (UnlockReleaseBuffer):
 * while it holds the lock it reads, locks or waits for no other buffer, so
 * writers that lock several pages (slots written, groups gathered) only
 * wait for it.  A copy of the page cost more than the probes did.
 */
static bloomidx::PageProblem
lock_region_page(Relation index, BlockNumber blkno, const bloomidx::FilterGroupHeader *h,
				 uint32 region_page, BufferAccessStrategy bas, BufferHints *hints, Buffer *buffer)
{
	Buffer		b = bloomidx_read_page(index, blkno, bas, hints);

	LockBuffer(b, BUFFER_LOCK_SHARE);
	Page		page = BufferGetPage(b);
	bloomidx::PageProblem problem =
		bloomidx_check_page(hints, blkno, page, [&](bloomidx::Sums sums) {
			return bloomidx::check_filter_page((const uint8 *) page, *h, region_page, sums);
		});

	if (problem != bloomidx::PageProblem::None)
	{
		UnlockReleaseBuffer(b);
		b = InvalidBuffer;
	}
	*buffer = b;
	return problem;
}

/*
 * Copies the header page blkno of segment e's group into *copy and checks
 * it: the problem found, quietly.  A header this backend kept for the
 * directory's `generation` (header_cache.cpp) is copied only up to its
 * pd_lower, all a scan reads of it: the rest of *copy, its special space
 * included, is not the page's then.
 */
static bloomidx::PageProblem
copy_group_header(Relation index, BlockNumber blkno, const bloomidx::SegmentEntry *e,
				  uint32 ncolumns, BlockNumber nblocks, uint32 generation, BufferHints *hints,
				  char *copy)
{
	if (bloomidx_cached_group_header(index, generation, blkno, e->filter_group, copy))
		return bloomidx::PageProblem::None;

	Buffer		buffer = bloomidx_read_page(index, blkno, NULL, hints);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	bloomidx::PageProblem problem =
		bloomidx::check_filter_group_page((const uint8 *) BufferGetPage(buffer), e->filter_group,
										  ncolumns, e->filter_block, nblocks);

	memcpy(copy, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);

	/*
	 * A listed group's region pages may have been added to the file after
	 * the caller read its length and before it copied the directory that
	 * names the group (a seal or VACUUM extends the file, then publishes):
	 * checked again against the length now before the page is called
	 * damaged.
	 */
	if (problem != bloomidx::PageProblem::None)
	{
		BlockNumber now = RelationGetNumberOfBlocks(index);

		if (now > nblocks)
			problem = bloomidx::check_filter_group_page((const uint8 *) copy, e->filter_group,
														ncolumns, e->filter_block, now);
	}
	if (problem == bloomidx::PageProblem::None)
		bloomidx_keep_group_header(index, generation, blkno, e->filter_group, copy);
	return problem;
}

/*
 * copy_group_header, a problem reported: false when the page turned out
 * recycled since the directory copy of `generation` (else an ERROR).
 */
static bool
read_group_header(Relation index, BlockNumber blkno, const bloomidx::SegmentEntry *e,
				  uint32 ncolumns, BlockNumber nblocks, uint32 generation, BufferHints *hints,
				  char *copy)
{
	bloomidx::PageProblem problem = copy_group_header(index, blkno, e, ncolumns, nblocks,
													  generation, hints, copy);

	if (problem != bloomidx::PageProblem::None)
	{
		(void) bloomidx_page_was_recycled(index, blkno, generation, problem);
		return false;
	}
	return true;
}

/*
 * Makes region page `region_page` of the group whose header page (a
 * checked copy) is `header`, at header_block, the one share-locked in
 * *region (*loaded: its place in the group, -1 for none), letting go of
 * the one locked before: a key's hashes whose block rows share a page lock
 * it once.  False when the page turned out recycled since the directory
 * copy of `generation` (else damage is an ERROR), *region then invalid.
 * For segments' groups and pending groups; the caller lets go of the last.
 */
bool
bloomidx_lock_region(Relation index, const uint8 *header, BlockNumber header_block,
					 uint32 region_page, uint32 generation, BufferAccessStrategy bas,
					 BufferHints *hints, int64 *loaded, Buffer *region)
{
	if (*loaded == (int64) region_page && BufferIsValid(*region))
		return true;
	if (BufferIsValid(*region))
		UnlockReleaseBuffer(*region);
	*region = InvalidBuffer;
	*loaded = -1;

	BlockNumber blkno = bloomidx::group_region_block(header, header_block, region_page);
	bloomidx::PageProblem problem = lock_region_page(index, blkno,
													 bloomidx::filter_group_header(header),
													 region_page, bas, hints, region);

	if (problem != bloomidx::PageProblem::None)
	{
		(void) bloomidx_page_was_recycled(index, blkno, generation, problem);
		return false;
	}
	*loaded = region_page;
	return true;
}

/*
 * Asks for the region pages the keys still asked will read in the group
 * whose header page is `header`, ahead of their reads one key after
 * another (bloomidx_prefetch_page): a group read from disk then waits for
 * its region pages together.  A key ruled out by an earlier one leaves
 * its pages unread, a cheap miss.
 */
static void
prefetch_region_pages(Relation index, const bloomidx::FilterQuery *query, const uint8 *header,
					  BlockNumber header_block, const KeyProbeStats *stats, BlockNumber nblocks,
					  const BufferHints *hints)
{
	const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header(header);
	BlockNumber last = InvalidBlockNumber;
	bool		plain_keys = false; /* asked before the lists (probe_group) */

	for (int k = 0; k < query->nkeys; k++)
		plain_keys |= query->keys[k].list < 0 && key_asked(&stats[k]);
	for (int k = 0; k < query->nkeys; k++)
	{
		const bloomidx::FilterKey *key = &query->keys[k];

		/* A list's pages only where no other key may rule the group out first. */
		if (!key_asked(&stats[k]) || h->columns[key->column].blocks == 0 ||
			(key->list >= 0 && plain_keys))
			continue;
		for (uint32 i = 0; i < key->nhashes; i++)
		{
			uint32		region_page,
						offset;

			if (!bloomidx::group_row_of(*h, (uint32) key->column, bloomidx::filter_key(key->hashes[i]),
										&region_page, &offset))
				break;

			BlockNumber blkno = bloomidx::group_region_block(header, header_block, region_page);

			if (blkno != last)
				(void) bloomidx_prefetch_page(index, blkno, nblocks, hints);
			last = blkno;
		}
	}
}

/* How far a group's pages were asked for ahead (bloomidx_filter_segments). */
enum GroupAhead
{
	AHEAD_NONE,					/* not yet */
	AHEAD_IN_BUFFERS,			/* its header is in shared buffers (or past the end) */
	AHEAD_FROM_DISK,			/* its header is being read from outside them, or kept */
	AHEAD_REGIONS				/* its header read, its region pages asked for */
};

/*
 * Whether every later group will be read: some key still asked has been
 * ruled out by some segment, so it stays asked (key_asked) and the scan
 * goes on to the last group.  Until then, a scan whose keys every
 * segment passes may stop after KEY_USELESS_AFTER segments, and a group
 * read ahead might be one it would not have read.
 */
static bool
every_group_read(const bloomidx::FilterQuery *query, const KeyProbeStats *stats)
{
	for (int k = 0; k < query->nkeys; k++)
		if (stats[k].elements || stats[k].passed < stats[k].tested)
			return true;
	return false;
}

/*
 * Reading ahead from the group whose entries start at order[first], once
 * the scan reads from disk (ReadAhead): the headers of the next
 * ra->distance groups are asked for; and once every group will be read
 * anyway (every_group_read), those being read from outside shared buffers
 * are read now (they were asked for together) and their region pages
 * asked for, so that a query over many groups from disk waits for each
 * kind of page once, not group after group.  A header that fails its
 * check is left to its probe, which reports it.  scratch: a page's room.
 */
static void
read_ahead(Relation index, const bloomidx::FilterQuery *query, const DirectoryCopy *dir,
		   const uint64 *order, uint32 ngrouped, uint32 first, uint8 *ahead,
		   const KeyProbeStats *stats, uint32 ncolumns, BlockNumber nblocks, BufferHints *hints,
		   const ReadAhead *ra, char *scratch)
{
	uint32		pos = first;

	for (int g = 0; g < ra->distance && pos < ngrouped; g++)
	{
		BlockNumber blkno = order_block(order[pos]);
		uint32		start = pos;

		/*
		 * A header this backend keeps is not asked for, and is taken as read
		 * from disk: its region pages are asked for below, with the others'.
		 */
		if (ahead[start] == AHEAD_NONE)
			ahead[start] =
				bloomidx_group_header_kept(index, dir->header.generation, blkno,
										   dir->entries[order_index(order[start])].filter_group) ||
				bloomidx_prefetch_page(index, blkno, nblocks, hints)
				? AHEAD_FROM_DISK : AHEAD_IN_BUFFERS;
		while (pos < ngrouped && order_block(order[pos]) == blkno)
			pos++;
	}
	if (!every_group_read(query, stats))
		return;
	for (uint32 start = first; start < pos;)
	{
		BlockNumber blkno = order_block(order[start]);

		if (ahead[start] == AHEAD_FROM_DISK)
		{
			const bloomidx::SegmentEntry *e = &dir->entries[order_index(order[start])];

			/* Asked for from the copy, so that no system call is made under the page's lock. */
			if (copy_group_header(index, blkno, e, ncolumns, nblocks, dir->header.generation,
								  hints, scratch) ==
				bloomidx::PageProblem::None)
				prefetch_region_pages(index, query, (const uint8 *) scratch, blkno, stats,
									  nblocks, hints);
			ahead[start] = AHEAD_REGIONS;
		}
		while (start < pos && order_block(order[start]) == blkno)
			start++;
	}
}

/*
 * The slots of the group whose header page is header_copy (segment e's)
 * that may hold rows the query wants, among `wanted`; seg_slots[0..nsegs)
 * span the slots of each of the group's segments (segs[0..nsegs), their
 * directory entries), by which each key's stats count segments asked and
 * passed.  For each list key asked, the list's words of the segment's
 * element mask (elements[segment * nwords + the key's mask_word ..]) get
 * the elements the segment's filters may hold (left alone, all ones,
 * where the filters were not asked).  may_prefetch: the region pages of
 * every key are asked for first if the scan reads ahead by now (ra) and
 * read_ahead has not asked for them.  False when a page was recycled.
 */
static bool
probe_group(Relation index, const bloomidx::FilterQuery *query, const bloomidx::SegmentEntry *e,
			const char *header_copy, bloomidx::SlotMask wanted, BlockNumber nblocks,
			uint32 generation, BufferHints *hints, bool may_prefetch, ReadAhead *ra,
			const bloomidx::SlotRange *seg_slots, const uint64 *segs, uint32 nsegs,
			KeyProbeStats *stats, uint64 *elements, uint32 nwords, bloomidx::SlotMask *passed)
{
	const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header((const uint8 *) header_copy);
	bloomidx::SlotMask mask = wanted;

	/*
	 * The segment (index into segs) of each slot, for the IN lists'
	 * elements (bloomidx::group_slot_owners), where no two ranges share a
	 * slot; else every segment's range is looked up for every element.
	 */
	int16		owner[bloomidx::kGroupSlots];
	bool		owners_made = false;
	bool		owners_apart = false;

	if (may_prefetch && bloomidx_read_ahead_on(ra))
		prefetch_region_pages(index, query, (const uint8 *) header_copy, e->filter_block, stats,
							  nblocks, hints);
	/*
	 * Keys of one value first, then the IN lists: a list asks every element
	 * (each segment must learn which it may hold), where one equality may
	 * rule the whole group out with a page.
	 */
	for (int step = 0; step < 2 * query->nkeys && mask.any(); step++)
	{
		int			k = step % query->nkeys;
		const bloomidx::FilterKey *key = &query->keys[k];

		if ((key->list >= 0) != (step >= query->nkeys))
			continue;			/* not in this pass */

		const bloomidx::FilterColumn *fc = &h->columns[key->column];
		bloomidx::SlotMask key_mask = bloomidx::SlotMask::none();
		int64		loaded = -1;	/* the region page locked in `region` */
		Buffer		region = InvalidBuffer;

		/* A list's elements are each asked; another key's hashes until every slot passed. */
		bool		per_element = key->list >= 0 && elements != NULL;
		uint32		list_words = bloomidx::list_mask_words(key->nhashes);

		if (!key_asked(&stats[k]))
			continue;
		if (fc->blocks == 0)
			key_mask = mask;	/* no filter for the column: every slot passes */
		else if (per_element)
		{
			for (uint32 j = 0; j < nsegs; j++)
				memset(&elements[(Size) order_index(segs[j]) * nwords + key->mask_word], 0,
					   list_words * sizeof(uint64));
			if (!owners_made)
				owners_apart = bloomidx::group_slot_owners(seg_slots, nsegs, owner);
			owners_made = true;
		}
		for (uint32 i = 0; fc->blocks != 0 && i < key->nhashes &&
			 (per_element || (mask & ~key_mask).any()); i++)
		{
			uint32		fkey = bloomidx::filter_key(key->hashes[i]);
			uint32		region_page,
						offset;
			bloomidx::SlotMask holds;

			if (!bloomidx::group_row_of(*h, (uint32) key->column, fkey, &region_page, &offset))
			{
				key_mask = mask;	/* no row to ask (the header was checked): pass */
				for (uint32 j = 0; per_element && j < nsegs; j++)
					memset(&elements[(Size) order_index(segs[j]) * nwords + key->mask_word], 0xFF,
						   list_words * sizeof(uint64));
				break;
			}
			if (!bloomidx_lock_region(index, (const uint8 *) header_copy, e->filter_block,
									  region_page, generation, NULL, hints, &loaded, &region))
				return false;
			holds = bloomidx::group_row_probe((const uint8 *) BufferGetPage(region) + offset,
											  fc->probes, h->slots_taken, fkey);
			key_mask |= holds;
			for (uint32 j = 0; per_element && !owners_apart && j < nsegs; j++)
				if (holds.any_in(seg_slots[j].first, seg_slots[j].last))
					bloomidx::element_mark(&elements[(Size) order_index(segs[j]) * nwords],
										   key->mask_word, i);
			for (uint32 w = 0; per_element && owners_apart && w < bloomidx::SlotMask::kWords; w++)
			{
				uint64		bits = holds.bits[w];

				while (bits != 0)
				{
					uint32		s = w * 64 + (uint32) pg_rightmost_one_pos64(bits);

					bits &= bits - 1;
					if (s < bloomidx::kGroupSlots && owner[s] >= 0)
						bloomidx::element_mark(&elements[(Size) order_index(segs[owner[s]]) * nwords],
											   key->mask_word, i);
				}
			}
		}
		if (BufferIsValid(region))
			UnlockReleaseBuffer(region);

		bloomidx::SlotMask kept = mask & key_mask;

		for (uint32 j = 0; j < nsegs; j++)
		{
			if (!mask.any_in(seg_slots[j].first, seg_slots[j].last))
				continue;		/* ruled out by an earlier key */
			stats[k].tested++;
			if (kept.any_in(seg_slots[j].first, seg_slots[j].last))
				stats[k].passed++;
		}
		mask &= key_mask;
	}
	*passed = mask;
	return true;
}

/*
 * Asks for the headers of the first `distance` filter groups of the
 * directory copy, so that they come from disk while the scan reads its
 * pending pages (bloomidx_filter_segments reads them next, in block
 * order: after merges the first groups of the directory may not be the
 * first read, and those are asked for again there, a cheap miss).
 * Entries of one group mostly follow each other: a group asked twice
 * costs a lookup.
 */
void
bloomidx_prefetch_filter_groups(Relation index, const DirectoryCopy *dir, BlockNumber nblocks,
								const BufferHints *hints, int distance)
{
	BlockNumber last = InvalidBlockNumber;
	int			asked = 0;

	for (uint32 i = 0; i < dir->header.nsegments && asked < distance; i++)
	{
		BlockNumber blkno = dir->entries[i].filter_block;

		if (blkno == 0 || blkno == last)
			continue;
		last = blkno;
		if (bloomidx_group_header_kept(index, dir->header.generation, blkno,
									   dir->entries[i].filter_group))
			continue;			/* not read: not asked for, nor counted */
		(void) bloomidx_prefetch_page(index, blkno, nblocks, hints);
		asked++;
	}
}

/*
 * Sets skip[i] for each segment of the directory copy whose filters rule
 * the query out, and (when elements is not NULL) segment i's element
 * mask, elements[i * query->element_words ..], to the elements of each
 * list asked that it may hold (all ones where its filters were not asked
 * of them).  False when a group page was
 * recycled since the copy (the caller starts again).
 */
bool
bloomidx_filter_segments(Relation index, const bloomidx::FilterQuery *query, const DirectoryCopy *dir,
						 uint32 ncolumns, BlockNumber nblocks, BufferHints *hints, ReadAhead *ra,
						 bool *skip, uint64 *elements)
{
	uint32		nwords = query->element_words;
	uint32		n = dir->header.nsegments;
	uint32		generation = dir->header.generation;
	uint32		ngrouped = 0;

	memset(skip, 0, n * sizeof(bool));
	if (elements != NULL)
		memset(elements, 0xFF, (Size) n * nwords * sizeof(uint64));
	if (query->nkeys == 0 || n == 0)
		return true;

	/* The backend's scan scratch (support.h): as large as the segments, reused query to query. */
	uint64	   *order = (uint64 *) bloomidx_scan_scratch(SCRATCH_GROUP_ORDER, n * sizeof(uint64));
	bloomidx::SlotRange *slot_range =	/* of a group's segments */
		(bloomidx::SlotRange *) bloomidx_scan_scratch(SCRATCH_SLOT_RANGES,
													  n * sizeof(bloomidx::SlotRange));
	uint32	   *group_ids =			/* of a group's segments */
		(uint32 *) bloomidx_scan_scratch(SCRATCH_GROUP_IDS, n * sizeof(uint32));
	uint32	   *table = (uint32 *)	/* group_segments_slot_ranges' */
		bloomidx_scan_scratch(SCRATCH_SLOT_TABLE,
							  bloomidx::group_slot_table_size(n) * sizeof(uint32));
	char	   *pages = (char *) bloomidx_scan_scratch(SCRATCH_PAGES, SCRATCH_PAGES_BYTES);
	char	   *header_copy = pages;
	KeyProbeStats *stats = (KeyProbeStats *) palloc0(query->nkeys * sizeof(KeyProbeStats));
	int			nasked = query->nkeys;
	bool		ok = true;

	for (int k = 0; k < query->nkeys; k++)
		stats[k].elements = elements != NULL && query->keys[k].list >= 0;

	for (uint32 i = 0; i < n; i++)
		if (dir->entries[i].filter_block != 0)
			order[ngrouped++] = bloomidx::group_order_key(dir->entries[i].filter_block, i);
	bloomidx::sort_group_order(order, ngrouped);

	/* Per group (at its first entry of the order), how far read_ahead went. */
	uint8	   *ahead = NULL;
	char	   *ahead_page = ra->distance > 0 ? pages + BLCKSZ : NULL;

	if (ra->distance > 0)
	{
		ahead = (uint8 *) bloomidx_scan_scratch(SCRATCH_GROUP_AHEAD, Max(ngrouped, 1));
		memset(ahead, 0, Max(ngrouped, 1));
	}

	for (uint32 first = 0, last; ok && nasked > 0 && first < ngrouped; first = last)
	{
		const bloomidx::SegmentEntry *e = &dir->entries[order_index(order[first])];
		bloomidx::SlotMask wanted = bloomidx::SlotMask::none();

		last = first;
		while (last < ngrouped && order_block(order[last]) == order_block(order[first]))
			last++;
		if (bloomidx_read_ahead_on(ra))
			read_ahead(index, query, dir, order, ngrouped, first, ahead, stats, ncolumns, nblocks,
					   hints, ra, ahead_page);
		if (!read_group_header(index, e->filter_block, e, ncolumns, nblocks, generation, hints,
							   header_copy))
		{
			ok = false;
			break;
		}

		const bloomidx::FilterGroupHeader *h =
			bloomidx::filter_group_header((const uint8 *) header_copy);

		/* Each segment in the slot its entry names, taken for it, and any others taken for it. */
		for (uint32 j = first; j < last; j++)
			group_ids[j - first] = dir->entries[order_index(order[j])].segment_id;
		bloomidx::group_segments_slot_ranges(*h, group_ids, last - first, table, slot_range);
		for (uint32 j = first; j < last; j++)
		{
			const bloomidx::SegmentEntry *se = &dir->entries[order_index(order[j])];

			wanted.set_range(slot_range[j - first].first, slot_range[j - first].last);
			if (se->filter_group != e->filter_group || se->filter_offset >= h->slots_taken ||
				h->slot_segment[se->filter_offset] != se->segment_id)
			{
				if (bloomidx_directory_generation(index) != generation)
				{
					ok = false;
					break;
				}
				bloomidx_report_corrupted_page(index, e->filter_block,
											   psprintf("Slot %u of the filter group does not hold segment %u.",
														se->filter_offset, se->segment_id));
			}
		}

		bloomidx::SlotMask passed = bloomidx::SlotMask::none();

		if (ok && !probe_group(index, query, e, header_copy, wanted, nblocks, generation, hints,
							   ahead != NULL && ahead[first] != AHEAD_REGIONS, ra, slot_range,
							   &order[first], last - first, stats, elements, nwords, &passed))
			ok = false;
		for (uint32 j = first; ok && j < last; j++)
			skip[order_index(order[j])] =
				!passed.any_in(slot_range[j - first].first, slot_range[j - first].last);
		nasked = 0;
		for (int k = 0; k < query->nkeys; k++)
			nasked += key_asked(&stats[k]) ? 1 : 0;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(stats);
	if (!ok)
	{
		memset(skip, 0, n * sizeof(bool));
		if (elements != NULL)
			memset(elements, 0xFF, (Size) n * nwords * sizeof(uint64));
	}
	return ok;
}
