/*
 * page_items.cpp: bloomidx_page_items(index regclass, blkno int4), like
 * pageinspect's bt_page_items, brin_page_items and gin_leafpage_items:
 * what one page of an index holds, for debugging.
 *
 * One set of columns for every kind of page: page_kind (what the page
 * is), item (the item's number on it, from 0; a TID page numbers its rows
 * as their segment does, bit r of its slices and live page), item_kind,
 * tid, live, bits, keys and detail, NULL where they mean nothing.  The
 * first row describes the page itself (item NULL, item_kind 'page'), the
 * others its items:
 *
 *   meta            segment entry (its inline directory entries),
 *                   directory page (the pages holding the rest), free extent;
 *                   its detail names the first pending group, if any
 *   directory       segment entry
 *   pending,        row: tid, live (always: VACUUM removes a pending page's
 *   sealing           dead rows), bits (the signature), keys (its filter
 *                     keys, where the index keeps them)
 *   segment header  tid page
 *   slice           slice: bits (bit r: row r of the segment)
 *   live            live bits: bits
 *   tids            row: tid, live (the row's live bit)
 *   filter group    slot (the segment it was taken for), region page
 *                   (where a listed group, a segment's own or one VACUUM
 *                   gathered, lists them); a pending group's (format 17):
 *                   slot (the pending page it was taken for), region page,
 *                   its detail its links (next group, after)
 *   filter          block row: bits (the slots' blocks side by side)
 *   free, listed,   none (a free page's detail: the generation that freed it)
 *   new
 *
 * bits is a bit varying whose (i + 1)th character is bit i as the index
 * numbers it (a signature's position i, a slice's row i); detail lists the
 * rest as "name value" pairs.  A page of 8 kB has at most a few thousand
 * items (a TID page's rows), so the result is bounded.  A page a removed
 * segment left on the free list still shows what it was.
 *
 * The page is copied under a share lock and checked as a reader checks
 * it before anything on it is shown: damage is the readers' XX002 error
 * naming the block.  A TID page's rows and a filter page's rows are
 * decoded with their segment's header (and live page) or their group's
 * header, found through the directory (a pending group's through the
 * chain of pending groups the metapage starts); a page they do not lead
 * to (a crash left it, a merge replaced its segment since, its pending
 * group was dropped) is shown without them.
 *
 * Raw pages bypass column privileges and row-level security: the
 * signatures of a column with few values are reversed by hashing each
 * value.  So, like pageinspect's functions (superuser only), it is for
 * superusers and roles with the privileges of pg_read_server_files, who
 * can read the index's file with pg_read_binary_file already and gain
 * nothing.  Checked here, so that a GRANT EXECUTE does not open it to
 * others.  Only an AccessShareLock on the index.
 */
#include "functions/functions.h"

extern "C" {
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "utils/varbit.h"

PG_FUNCTION_INFO_V1(bloomidx_page_items);
}

using bloomidx::PageProblem;

/*
 * What a page (a new one: kind 0) says it is, checked only as far as
 * telling that: a bloomidx page's special space, a kind this build knows.
 */
PageProblem
bloomidx_page_kind(Page page, uint16 *kind)
{
	*kind = 0;
	if (PageIsNew(page))
		return PageProblem::None;

	const bloomidx::PageOpaque *op = bloomidx::page_opaque((const uint8 *) page);

	if (((PageHeader) page)->pd_special != bloomidx::kSpecialOffset ||
		op->page_id != bloomidx::kPageId)
		return PageProblem::NotBloomidx;
	if (op->flags < bloomidx::kPageMeta || op->flags > bloomidx::kPageKeys)
		return PageProblem::WrongKind;
	*kind = op->flags;
	return PageProblem::None;
}

static const char *
page_kind_name(uint16 kind)
{
	switch (kind)
	{
		case bloomidx::kPageMeta:
			return "meta";
		case bloomidx::kPageData:
			return "pending";
		case bloomidx::kPageSealing:
			return "sealing";
		case bloomidx::kPageSlice:
			return "slice";
		case bloomidx::kPageSegment:
			return "segment header";
		case bloomidx::kPageTids:
			return "tids";
		case bloomidx::kPageLive:
			return "live";
		case bloomidx::kPageKeys:
			return "keys";
		case bloomidx::kPageFree:
			return "free";
		case bloomidx::kPageListed:
			return "listed";
		case bloomidx::kPageDirectory:
			return "directory";
		case bloomidx::kPageFilterGroup:
			return "filter group";
		case bloomidx::kPageFilter:
			return "filter";
		default:
			return "new";
	}
}

#define ITEM_COLUMNS 8

/* Where the rows go, and what every row repeats. */
typedef struct ItemsOut
{
	ReturnSetInfo *rsinfo;
	const char *page_kind;
} ItemsOut;

/*
 * One row: item < 0 for the page's own; tid, bits, keys and detail NULL
 * (0 for the Datums) where they mean nothing, live < 0 too.
 */
static void
emit(ItemsOut *out, int item, const char *item_kind, const ItemPointerData *tid, int live,
	 Datum bits, Datum keys, const char *detail)
{
	Datum		values[ITEM_COLUMNS];
	bool		nulls[ITEM_COLUMNS];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(out->page_kind);
	nulls[1] = item < 0;
	values[1] = Int32GetDatum(item);
	values[2] = CStringGetTextDatum(item < 0 ? "page" : item_kind);
	nulls[3] = tid == NULL;
	values[3] = tid ? PointerGetDatum(tid) : (Datum) 0;
	nulls[4] = live < 0;
	values[4] = BoolGetDatum(live > 0);
	nulls[5] = bits == (Datum) 0;
	values[5] = bits;
	nulls[6] = keys == (Datum) 0;
	values[6] = keys;
	nulls[7] = detail == NULL;
	values[7] = detail ? CStringGetTextDatum(detail) : (Datum) 0;
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
}

static void
emit_page(ItemsOut *out, const char *detail)
{
	emit(out, -1, NULL, NULL, -1, (Datum) 0, (Datum) 0, detail);
}

/*
 * Bits [0, nbits) of an array of T as a bit varying whose character i + 1
 * is bit i: bit i at element i / (bits of a T), position i % (bits of a T)
 * (bytes: signatures, filter rows; 64-bit words: slices, live bits).
 */
template <typename T>
static Datum
bits_datum(const T *elements, uint32 nbits)
{
	const uint32 per = 8 * sizeof(T);
	int			len = VARBITTOTALLEN(nbits);
	VarBit	   *v = (VarBit *) palloc0(len);

	SET_VARSIZE(v, len);
	VARBITLEN(v) = (int32) nbits;
	for (uint32 i = 0; i < nbits; i++)
		if ((elements[i / per] >> (i % per)) & 1)
			VARBITS(v)[i / 8] |= (uint8) (0x80 >> (i % 8));
	return VarBitPGetDatum(v);
}

static const char *
entry_detail(const bloomidx::SegmentEntry *e, uint32 slot)
{
	const char *filters = e->filter_block == 0 ? "filter group none"
		: psprintf("filter group %u, filter block %u, filter slot %u", e->filter_group,
				   e->filter_block, (uint32) e->filter_offset);

	return psprintf("slot %u, segment %u, rows %u, live rows %u, first slice %u, header block %u, %s",
					slot, e->segment_id, (uint32) e->rows, (uint32) e->live_rows, e->first_slice,
					e->header_block, filters);
}

/* "name {v1,v2,...}": n values of a column each. */
static void
append_per_column(StringInfo s, const char *name, const uint32 *values, int n)
{
	appendStringInfo(s, ", %s {", name);
	for (int c = 0; c < n; c++)
		appendStringInfo(s, "%s%u", c == 0 ? "" : ",", values[c]);
	appendStringInfoChar(s, '}');
}

/* A directory entry is checked as bloomidx_read_directory checks it. */
static void
emit_entry(ItemsOut *out, Relation index, BlockNumber blkno, int item,
		   const bloomidx::SegmentEntry *e, uint32 slot, uint32 nslices, BlockNumber nblocks)
{
	if (!bloomidx::segment_entry_ok(*e, nslices, nblocks))
		bloomidx_report_corrupted_page(index, blkno,
									   psprintf("Segment directory entry %u is damaged.", slot));
	emit(out, item, "segment entry", NULL, -1, (Datum) 0, (Datum) 0, entry_detail(e, slot));
}

static void
describe_meta(ItemsOut *out, Relation index, const uint8 *page, BlockNumber nblocks)
{
	PageProblem problem = bloomidx::check_meta_page(page);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock, problem);

	const bloomidx::MetaPageData *meta = bloomidx::meta_data(page);
	const bloomidx::DirectoryHeader *d = bloomidx::directory_header(page);
	const bloomidx::DirectoryPageList *pages = bloomidx::directory_page_list(page);
	const bloomidx::FreeList *list = bloomidx::free_list(page);
	const bloomidx::PendingFilters *pf = bloomidx::pending_filters(page);
	StringInfoData s;
	uint32		column_bits[INDEX_MAX_KEYS];

	for (int c = 0; c < meta->ncolumns; c++)
		column_bits[c] = meta->column_bits[c];
	initStringInfo(&s);
	appendStringInfo(&s, "format %u, signature bits %u", (uint32) meta->version,
					 (uint32) meta->signature_bits);
	append_per_column(&s, "column bits", column_bits, meta->ncolumns);
	appendStringInfo(&s, ", pending page capacity %u, filter keys %s, generation %u, next segment id %u, next group id %u, segments %u, directory pages %u, pending pages %u, pending head %u, pending tail %u, free extents %u",
					 (uint32) meta->capacity, meta->filter_keys ? "yes" : "no",
					 d->generation, d->next_segment_id, d->next_group_id, (uint32) d->nsegments,
					 (uint32) pages->count, d->pending_pages, d->pending_head, d->pending_tail,
					 (uint32) list->count);
	if (pf->first_group == bloomidx::kMetaBlock)
		appendStringInfoString(&s, ", no pending groups");
	else
		appendStringInfo(&s, ", pending group %u (id %u)", pf->first_group, pf->first_group_id);
	emit_page(out, s.data);

	uint32		m = meta->signature_bits;
	uint32		ninline = Min((uint32) d->nsegments, bloomidx::kInlineSegments);

	for (uint32 i = 0; i < ninline; i++)
		emit_entry(out, index, bloomidx::kMetaBlock, (int) i, &bloomidx::directory_entries(page)[i],
				   i, m, nblocks);
	for (uint32 p = 0; p < pages->count; p++)
		emit(out, (int) p, "directory page", NULL, -1, (Datum) 0, (Datum) 0,
			 psprintf("block %u, first slot %u, entries %u", pages->blocks[p],
					  bloomidx::kInlineSegments + p * bloomidx::kDirectoryPageEntries,
					  bloomidx::directory_page_count(d->nsegments, p)));
	for (uint32 x = 0; x < list->count; x++)
	{
		const bloomidx::FreeExtent *e = &list->extents[x];

		emit(out, (int) x, "free extent", NULL, -1, (Datum) 0, (Datum) 0,
			 psprintf("first block %u, blocks %u", e->first, e->nblocks));
	}
}

static void
describe_directory(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page,
				   uint32 nslices, BlockNumber nblocks)
{
	const bloomidx::PageOpaque *op = bloomidx::page_opaque(page);
	PageProblem problem = bloomidx::check_directory_page(page, op->count, op->tid_sum);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
	emit_page(out, psprintf("place %u, entries %u, generation %u",
							(uint32) op->tid_sum, (uint32) op->count, bloomidx::page_stamp(page)));
	for (uint32 i = 0; i < op->count; i++)
		emit_entry(out, index, blkno, (int) i, &bloomidx::directory_page_entries(page)[i],
				   bloomidx::kInlineSegments + op->tid_sum * bloomidx::kDirectoryPageEntries + i,
				   nslices, nblocks);
}

static void
describe_pending(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page,
				 const bloomidx::MetaPageData *meta)
{
	bloomidx::RowPageGeometry g = bloomidx::meta_row_geometry(*meta);

	bloomidx_check_data_page(index, blkno, (Page) page, &g);

	const bloomidx::PageOpaque *op = bloomidx::page_opaque(page);

	emit_page(out, psprintf("rows %u, capacity %u, next block %u, generation %u",
							(uint32) op->count, g.capacity, bloomidx::pending_next(page),
							bloomidx::page_stamp(page)));

	Datum	   *keys = (Datum *) palloc(Max(g.keys, 1) * sizeof(Datum));

	for (uint32 i = 0; i < op->count; i++)
	{
		ItemPointerData tid;
		const uint8 *tail = bloomidx::row_tid(page, g, i);
		Datum		key_array = (Datum) 0;

		memcpy(&tid, tail, sizeof(tid));
		for (uint32 k = 0; k < g.keys; k++)
		{
			uint32		key;

			memcpy(&key, tail + bloomidx::kTidSize + k * bloomidx::kFilterKeySize, sizeof(key));
			keys[k] = Int64GetDatum((int64) key);
		}
		if (g.keys > 0)
			key_array = PointerGetDatum(construct_array(keys, (int) g.keys, INT8OID, sizeof(int64),
														FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		emit(out, (int) i, "row", &tid, 1,
			 bits_datum(bloomidx::row_signature(page, g, i), meta->signature_bits), key_array,
			 NULL);
	}
}

static void
describe_segment_header(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page,
						uint32 nslices, BlockNumber nblocks)
{
	const bloomidx::SegmentHeader *h = bloomidx::segment_header(page);
	uint32		segment_id = bloomidx::segment_page_owner(page);
	PageProblem problem = bloomidx::check_segment_page(page, segment_id,
													   bloomidx::page_opaque(page)->count,
													   h->first_slice, nslices, h->slices_per_page,
													   RelationGetNumberOfAttributes(index),
													   blkno, nblocks);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
	emit_page(out, psprintf("segment %u, rows %u, first slice %u, slices %u, slices a page %u, live block %u, tid pages %u, tid groups %u%s",
							segment_id, (uint32) h->rows, h->first_slice, nslices,
							Max((uint32) h->slices_per_page, 1), h->live_block,
							(uint32) h->ntid_pages, (uint32) h->ngroups,
							h->key_pages > 0 ? psprintf(", key pages %u", (uint32) h->key_pages) : ""));
	for (uint32 p = 0; p < h->ntid_pages; p++)
	{
		uint32		first = 0;

		while (h->groups[first].page != p)
			first++;			/* every page holds a group (check_segment_page) */
		uint32		last = first;

		while (last + 1 < h->ngroups && h->groups[last + 1].page == p)
			last++;
		emit(out, (int) p, "tid page", NULL, -1, (Datum) 0, (Datum) 0,
			 psprintf("block %u, first group %u, groups %u", h->tid_blocks[p], first,
					  last - first + 1));
	}
}

static void
describe_live(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page)
{
	const bloomidx::PageOpaque *op = bloomidx::page_opaque(page);
	uint32		segment_id = bloomidx::segment_page_owner(page);
	PageProblem problem = bloomidx::check_live_page(page, op->count, segment_id);

	if (problem == PageProblem::None && op->count > bloomidx::kSegmentRows)
		problem = PageProblem::BadLive;
	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
	uint32		live = 0;

	for (uint32 r = 0; r < op->count; r++)
		live += (bloomidx::slice_page_words(page)[r / 64] >> (r % 64)) & 1;
	emit_page(out, psprintf("segment %u, rows %u, live rows %u", segment_id, (uint32) op->count,
							live));
	emit(out, 0, "live bits", NULL, -1, bits_datum(bloomidx::slice_page_words(page), op->count),
		 (Datum) 0, NULL);
}

/* A small segment's key page (format 16): whose, which, how many rows' keys. */
static void
describe_keys(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page)
{
	const bloomidx::PageOpaque *op = bloomidx::page_opaque(page);
	uint32		segment_id = bloomidx::segment_page_owner(page);
	uint32		ncolumns = (uint32) RelationGetNumberOfAttributes(index);
	uint64		rows = (uint64) op->tid_sum * bloomidx::key_rows_per_page(ncolumns) + op->count;
	PageProblem problem = rows > bloomidx::kKeyedRowsMax ? PageProblem::BadKeyPage
		: bloomidx::check_key_page(page, segment_id, (uint16) rows, (uint16) ncolumns,
								   op->tid_sum);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
	emit_page(out, psprintf("segment %u, key page %u, keys of %u rows, %u a row", segment_id,
							(uint32) op->tid_sum, (uint32) op->count, ncolumns));
}

/* The directory entry of segment `segment_id` (filter group `group_id`, when 0), or NULL. */
static const bloomidx::SegmentEntry *
find_entry(const DirectoryCopy *dir, uint32 segment_id, uint32 group_id)
{
	for (uint32 i = 0; i < dir->header.nsegments; i++)
		if (segment_id != 0 ? dir->entries[i].segment_id == segment_id
			: dir->entries[i].filter_group == group_id)
			return &dir->entries[i];
	return NULL;
}

static void
describe_slice(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page,
			   uint32 nslices, BlockNumber nblocks)
{
	const bloomidx::PageOpaque *op = bloomidx::page_opaque(page);
	uint32		segment_id = bloomidx::segment_page_owner(page);
	PageProblem problem = bloomidx::check_slice_page(page, op->count, op->tid_sum, segment_id);

	if (problem == PageProblem::None && op->tid_sum >= nslices)
		problem = PageProblem::BadSlice;
	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);

	/*
	 * Packed slices (format 14): those on the page, one item each, as its
	 * segment's directory entry says; one, of a segment no longer listed.
	 */
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);

	const bloomidx::SegmentEntry *e = find_entry(dir, segment_id, 0);
	uint16		per = e != NULL && e->rows == op->count ? Max(e->slices_per_page, 1) : 1;
	uint32		count = Min((uint32) per, nslices - op->tid_sum);

	emit_page(out, psprintf("segment %u, slice %u, slices %u, rows %u",
							segment_id, (uint32) op->tid_sum, count, (uint32) op->count));
	for (uint32 k = 0; k < count; k++)
		emit(out, (int) k, "slice", NULL, -1,
			 bits_datum(bloomidx::slice_page_words(page) +
						bloomidx::slice_spot(op->tid_sum + k, op->count, per).word, op->count),
			 (Datum) 0, NULL);
}

/*
 * Copies block blkno into page again, after a directory copy, and tells
 * whether it is still of `kind` and owned by `owner` (a segment or filter
 * group id): a page the directory copy can explain.
 */
static bool
recopy_page(Relation index, BlockNumber blkno, char *page, uint16 kind, uint32 owner)
{
	Buffer		buffer = ReadBuffer(index, blkno);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	memcpy(page, BufferGetPage(buffer), BLCKSZ);
	UnlockReleaseBuffer(buffer);

	uint16		now;
	uint32		group_id = 0;

	if (bloomidx_page_kind((Page) page, &now) != PageProblem::None || now != kind)
		return false;
	if (kind == bloomidx::kPageTids)
		return bloomidx::segment_page_owner((const uint8 *) page) == owner;
	return bloomidx::filter_page_place((const uint8 *) page, &group_id) >= 1 && group_id == owner;
}

/*
 * A TID page's rows, through its segment's header and live page.  False:
 * start again (the page or one it needs changed meanwhile).
 */
static bool
describe_tids(ItemsOut *out, Relation index, BlockNumber blkno, char *page,
			  uint32 nslices, BlockNumber nblocks)
{
	uint32		segment_id = bloomidx::segment_page_owner((const uint8 *) page);
	uint32		place = bloomidx::page_opaque((const uint8 *) page)->tid_sum;
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);
	if (!recopy_page(index, blkno, page, bloomidx::kPageTids, segment_id))
		return false;

	uint32		generation = dir->header.generation;
	const bloomidx::SegmentEntry *e = find_entry(dir, segment_id, 0);
	bloomidx::SegmentHeader *h = (bloomidx::SegmentHeader *) palloc(sizeof(bloomidx::SegmentHeader));
	uint64	   *live = (uint64 *) palloc(bloomidx::kSliceWords * sizeof(uint64));

	if (e == NULL)
	{
		emit_page(out, psprintf("segment %u, tid page %u: no such segment in the directory (a crash left the page, or its segment was merged away): rows not decoded",
								segment_id, place));
		return true;
	}
	if (!bloomidx_copy_segment_page(index, e->header_block, NULL, generation, (char *) h, e,
									nslices, nblocks, bloomidx::kPageSegment) ||
		!bloomidx_copy_segment_page(index, h->live_block, NULL, generation, (char *) live, e,
									nslices, nblocks, bloomidx::kPageLive))
		return false;
	if (place >= h->ntid_pages || h->tid_blocks[place] != blkno)
	{
		emit_page(out, psprintf("segment %u, tid page %u: not the page its segment's header lists (a crash left it): rows not decoded",
								segment_id, place));
		return true;
	}

	PageProblem problem = bloomidx::check_tid_page((const uint8 *) page, *h, (uint16) place);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);

	uint32		first = 0;

	while (h->groups[first].page != place)
		first++;				/* every TID page holds a group (check_segment_page) */
	emit_page(out, psprintf("segment %u, tid page %u, first group %u, groups %u",
							segment_id, place, first,
							(uint32) bloomidx::page_opaque((const uint8 *) page)->count));
	for (uint32 g = first; g < h->ngroups && h->groups[g].page == place; g++)
	{
		bloomidx::HeapTid tids[bloomidx::kTidGroupRows];
		uint32		n = bloomidx::tid_page_group(*h, (const uint8 *) page, g, tids);

		if (n == 0)
			bloomidx_report_corrupted_page(index, blkno,
										   psprintf("TID group %u of segment %u cannot be decoded.",
													g, segment_id));
		for (uint32 i = 0; i < n; i++)
		{
			uint32		r = g * bloomidx::kTidGroupRows + i;
			ItemPointerData tid;

			ItemPointerSet(&tid, tids[i].block, tids[i].offset);
			emit(out, (int) r, "row", &tid, (int) ((live[r / 64] >> (r % 64)) & 1), (Datum) 0,
				 (Datum) 0, NULL);
		}
	}
	return true;
}

/* "column blocks {..}, column probes {..}" of a group's header. */
static void
append_columns(StringInfo s, const bloomidx::FilterGroupHeader *h)
{
	uint32		blocks[INDEX_MAX_KEYS];
	uint32		probes[INDEX_MAX_KEYS];

	for (uint32 c = 0; c < h->ncolumns; c++)
	{
		blocks[c] = h->columns[c].blocks;
		probes[c] = h->columns[c].probes;
	}
	append_per_column(s, "column blocks", blocks, h->ncolumns);
	append_per_column(s, "column probes", probes, h->ncolumns);
}

static const char *
group_detail(const bloomidx::FilterGroupHeader *h)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "group %u, slots taken %u, slot capacity %u, region pages %u, listed %s",
					 h->group_id, (uint32) h->slots_taken, (uint32) h->slot_capacity,
					 h->region_pages, (h->flags & bloomidx::kGroupListed) ? "yes" : "no");
	append_columns(&s, h);
	return s.data;
}

/* A pending group's header (format 17): its links too. */
static const char *
pending_group_detail(const bloomidx::FilterGroupHeader *h, const bloomidx::PendingGroupLinks &l)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "pending group %u, slots taken %u, slot capacity %u, region pages %u",
					 h->group_id, (uint32) h->slots_taken, (uint32) h->slot_capacity,
					 h->region_pages);
	if (l.next_group == bloomidx::kMetaBlock)
		appendStringInfoString(&s, ", next group none");
	else
		appendStringInfo(&s, ", next group %u (id %u)", l.next_group, l.next_group_id);
	if (l.after == bloomidx::kMetaBlock)
		appendStringInfoString(&s, ", after none");
	else
		appendStringInfo(&s, ", after %u", l.after);
	append_columns(&s, h);
	return s.data;
}

/*
 * A filter group's header page: a group of segments, or a pending group
 * (its slots pending pages, flags kGroupPending), checked as its readers
 * check it.
 */
static void
describe_filter_group(ItemsOut *out, Relation index, BlockNumber blkno, const uint8 *page)
{
	uint32		group_id = 0;

	(void) bloomidx::filter_page_place(page, &group_id);

	/*
	 * The index's length now, after the copy: every block the page names
	 * existed when it was copied (a pending group's links name pages the
	 * index may have grown by since page_items began).
	 */
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint32		ncolumns = (uint32) RelationGetNumberOfAttributes(index);
	bool		pending = (bloomidx::filter_group_header(page)->flags & bloomidx::kGroupPending) != 0;
	PageProblem problem = pending
		? bloomidx::check_pending_group_page(page, group_id, ncolumns, blkno, nblocks)
		: bloomidx::check_filter_group_page(page, group_id, ncolumns, blkno, nblocks);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);

	const bloomidx::FilterGroupHeader *h = bloomidx::filter_group_header(page);

	emit_page(out, pending ? pending_group_detail(h, bloomidx::pending_group_links(page))
			  : group_detail(h));
	for (uint32 s = 0; s < h->slots_taken; s++)
		emit(out, (int) s, "slot", NULL, -1, (Datum) 0, (Datum) 0,
			 psprintf(pending ? "pending page %u" : "segment %u", h->slot_segment[s]));
	if (h->flags & bloomidx::kGroupListed)
		for (uint32 i = 0; i < h->region_pages; i++)
			emit(out, (int) i, "region page", NULL, -1, (Datum) 0, (Datum) 0,
				 psprintf("block %u", bloomidx::group_region_block(page, blkno, i)));
}

/*
 * The header of pending group `group_id`, found by walking the chain of
 * pending groups from the directory copy's first (each header checked as
 * a scan checks it), into header_page, and its block in *header_block;
 * kMetaBlock there when no pending group has that id.  False: start again
 * (a header was recycled since the copy; else damage is an ERROR).
 */
static bool
find_pending_group(Relation index, const DirectoryCopy *dir, uint32 group_id, BlockNumber nblocks,
				   char *header_page, BlockNumber *header_block)
{
	BlockNumber blkno = dir->pending_filters.first_group;
	uint32		id = dir->pending_filters.first_group_id;

	*header_block = bloomidx::kMetaBlock;
	for (BlockNumber walked = 0; blkno != bloomidx::kMetaBlock; walked++)
	{
		PageProblem problem = walked >= Max(nblocks, RelationGetNumberOfBlocks(index))
			? PageProblem::BadFilter	/* a cycle */
			: bloomidx_pending_group_copy(index, blkno, id, &nblocks, NULL, header_page);

		if (problem != PageProblem::None)
			return !bloomidx_page_was_recycled(index, blkno, dir->header.generation, problem);
		if (id == group_id)
		{
			*header_block = blkno;
			return true;
		}

		bloomidx::PendingGroupLinks links = bloomidx::pending_group_links((const uint8 *) header_page);

		blkno = links.next_group;
		id = links.next_group_id;
		CHECK_FOR_INTERRUPTS();
	}
	return true;
}

/*
 * A filter group's region page, through its group's header.  False:
 * start again (the page or its header changed meanwhile).
 */
static bool
describe_filter(ItemsOut *out, Relation index, BlockNumber blkno, char *page,
				BlockNumber nblocks)
{
	uint32		group_id = 0;
	int64		at = bloomidx::filter_page_place((const uint8 *) page, &group_id);

	/*
	 * A page copied whole that says it is a region page and is none (its
	 * format or kind fields damaged) is damage, not a page recycled
	 * meanwhile: every copy would say the same, and starting again would
	 * never end.
	 */
	if (at < 1)
		bloomidx_report_page_problem(index, blkno, PageProblem::BadFilter);

	uint32		place = (uint32) (at - 1);
	DirectoryCopy *dir = bloomidx_directory_copy_new();

	bloomidx_read_directory(index, &nblocks, dir);
	if (!recopy_page(index, blkno, page, bloomidx::kPageFilter, group_id))
		return false;

	/* A group of segments, through the directory; else a pending group, through their chain. */
	const bloomidx::SegmentEntry *e = find_entry(dir, 0, group_id);
	PGAlignedBlock header_page;
	BlockNumber header_block;

	if (e != NULL)
	{
		header_block = e->filter_block;

		Buffer		buffer = ReadBuffer(index, header_block);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(header_page.data, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);

		PageProblem problem =
			bloomidx::check_filter_group_page((const uint8 *) header_page.data, group_id,
											  (uint32) RelationGetNumberOfAttributes(index),
											  header_block, nblocks);

		if (problem != PageProblem::None)
			return !bloomidx_page_was_recycled(index, header_block, dir->header.generation,
											   problem);
	}
	else
	{
		if (!find_pending_group(index, dir, group_id, nblocks, header_page.data, &header_block))
			return false;
		if (header_block == bloomidx::kMetaBlock)
		{
			emit_page(out, psprintf("group %u, region page %u: no segment in the directory and no pending group has this group (a crash left the page, its segments were merged away, or its pending group was dropped): rows not decoded",
									group_id, place));
			return true;
		}
	}

	const bloomidx::FilterGroupHeader *h =
		bloomidx::filter_group_header((const uint8 *) header_page.data);

	if (place >= h->region_pages ||
		bloomidx::group_region_block((const uint8 *) header_page.data, header_block,
									 place) != blkno)
	{
		emit_page(out, psprintf("group %u, region page %u: not the page its group's header lists (a crash left it): rows not decoded",
								group_id, place));
		return true;
	}
	PageProblem problem = bloomidx::check_filter_page((const uint8 *) page, *h, place);

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);

	uint32		per_page = bloomidx::group_rows_per_page(*h);
	uint32		row_bytes = bloomidx::group_row_bytes(*h);
	uint32		first = place * per_page;
	uint32		end = Min(first + per_page, bloomidx::group_region_rows(*h));

	emit_page(out, psprintf("%sgroup %u, region page %u, first block row %u, block rows %u",
							(h->flags & bloomidx::kGroupPending) ? "pending " : "",
							group_id, place, first, end - first));

	/* Column c's block rows follow the columns' before it (core/page_layout.hpp). */
	uint32		column = 0;
	uint32		column_start = 0;

	for (uint32 row = first; row < end; row++)
	{
		while (row >= column_start + h->columns[column].blocks)
			column_start += h->columns[column++].blocks;
		emit(out, (int) (row - first), "block row", NULL, -1,
			 bits_datum((const uint8 *) page + bloomidx::kPageHeaderSize +
						(row - first) * row_bytes, row_bytes * 8),
			 (Datum) 0,
			 psprintf("column %u, block %u", column + 1, row - column_start));
	}
	return true;
}

/* The rows of page blkno (copied into page); false: start again. */
static bool
describe_page(ItemsOut *out, Relation index, BlockNumber blkno, char *page,
			  const bloomidx::MetaPageData *meta, BlockNumber nblocks)
{
	uint16		kind;
	PageProblem problem = bloomidx_page_kind((Page) page, &kind);

	if (problem == PageProblem::None && (kind == bloomidx::kPageMeta) != (blkno == bloomidx::kMetaBlock))
		problem = PageProblem::WrongKind;
	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
	out->page_kind = page_kind_name(kind);

	const uint8 *raw = (const uint8 *) page;

	switch (kind)
	{
		case bloomidx::kPageMeta:
			describe_meta(out, index, raw, nblocks);
			break;
		case bloomidx::kPageDirectory:
			describe_directory(out, index, blkno, raw, meta->signature_bits, nblocks);
			break;
		case bloomidx::kPageData:
		case bloomidx::kPageSealing:
			describe_pending(out, index, blkno, raw, meta);
			break;
		case bloomidx::kPageSegment:
			describe_segment_header(out, index, blkno, raw, meta->signature_bits, nblocks);
			break;
		case bloomidx::kPageSlice:
			describe_slice(out, index, blkno, raw, meta->signature_bits, nblocks);
			break;
		case bloomidx::kPageLive:
			describe_live(out, index, blkno, raw);
			break;
		case bloomidx::kPageKeys:
			describe_keys(out, index, blkno, raw);
			break;
		case bloomidx::kPageTids:
			return describe_tids(out, index, blkno, page, meta->signature_bits, nblocks);
		case bloomidx::kPageFilterGroup:
			describe_filter_group(out, index, blkno, raw);
			break;
		case bloomidx::kPageFilter:
			return describe_filter(out, index, blkno, page, nblocks);
		case bloomidx::kPageFree:
		case bloomidx::kPageListed:
			problem = kind == bloomidx::kPageFree ? bloomidx::check_free_page(raw)
				: bloomidx::check_listed_page(raw);
			if (problem != PageProblem::None)
				bloomidx_report_page_problem(index, blkno, problem);
			emit_page(out, kind == bloomidx::kPageFree
					  ? psprintf("generation %u", bloomidx::page_stamp(raw)) : NULL);
			break;
		default:
			emit_page(out, NULL);	/* new: never written */
			break;
	}
	return true;
}

Datum
bloomidx_page_items(PG_FUNCTION_ARGS)
{
	/* First, as pageinspect checks first: nothing about the index is told to others. */
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read the pages of a bloomidx index"),
				 errdetail("Only roles with privileges of the \"%s\" role may read raw index pages, which bypass column privileges and row-level security.",
						   "pg_read_server_files")));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloomidx_page_items needs an index and a block number, not NULL")));

	InitMaterializedSRF(fcinfo, 0);

	ItemsOut	out;

	out.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	out.page_kind = NULL;

	int32		blkno_arg = PG_GETARG_INT32(1);
	Relation	index = bloomidx_open_metapage_reader(PG_GETARG_OID(0), "pages", AccessShareLock);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	if (blkno_arg < 0 || (BlockNumber) blkno_arg >= nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block number %d is out of range for relation \"%s\"",
						blkno_arg, RelationGetRelationName(index))));

	BlockNumber blkno = (BlockNumber) blkno_arg;
	bloomidx::MetaPageData meta = *bloomidx_cached_meta(index);
	PGAlignedBlock page;

	for (;;)
	{
		Buffer		buffer = ReadBuffer(index, blkno);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(page.data, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);

		/*
		 * The index's length after the copy: a seal extends the index
		 * before its publish names the new blocks, so every block the copy
		 * names is within it (the length before the copy, a seal in
		 * between, made a sound entry look damaged: XX002).  No truncation
		 * meanwhile: it needs the index's AccessExclusiveLock.
		 */
		if (describe_page(&out, index, blkno, page.data, &meta, RelationGetNumberOfBlocks(index)))
			break;
		CHECK_FOR_INTERRUPTS();
	}
	relation_close(index, AccessShareLock);
	return (Datum) 0;
}
