/*
 * directory_cache.cpp: what a backend keeps, from one scan of an index to
 * the next, of the pages every scan reads before its first filter row:
 * the entries of the directory pages (past the metapage's 224) and the
 * filter groups' header pages.  A lookup over 1,953 segments read 7
 * directory pages and 16 headers, a third of its 69 buffers, each pinned,
 * locked, checked and copied again for every query; btree keeps its
 * metapage in rd_amcache for the same reason.
 *
 * Why a copy stays right: a publish is the only change to the directory
 * entries, and every publish moves the directory's generation on
 * (directory.cpp).  While the generation stays, the directory pages the
 * metapage lists and the filter groups its entries name are the pages
 * they were: a group is written before the publish that names it and
 * never changed while named, and its pages are freed only after a later
 * publish.  So what a scan read and checked at generation g is what any
 * later scan of g would read, and the cache keeps one generation: a scan
 * that copies a directory of another generation starts it afresh.  The
 * key is also the index's file (a REINDEX, TRUNCATE or SET TABLESPACE
 * gives it a new one, whose generations start again), so a rebuilt index
 * never meets the old file's pages.  Region pages are not kept: a query
 * reads one a key a group, and there are a thousand times more of them.
 *
 * What it costs: the cache lives in a context of its own under
 * TopMemoryContext ("bloomidx directory cache"), at most
 * DIRECTORY_CACHE_BYTES an index (about 380 build groups' headers, or the
 * directory of 8,000 segments past the metapage) for the last
 * CACHED_INDEXES indexes a backend scanned; what does not fit is read as
 * before.  A scan copies out of it and keeps no pointer into it.
 * (bloomidx.debug_no_directory_cache turns it off, for comparisons.)
 */
#include "storage/storage.h"

/* Indexes a backend keeps pages of (the least recently scanned goes first). */
#define CACHED_INDEXES 8
/* An index's directory entries and headers together, at most. */
#define DIRECTORY_CACHE_BYTES ((Size) 256 * 1024)

/* A kept header page: its block and group, and where its bytes are. */
typedef struct KeptHeader
{
	BlockNumber blkno;
	uint32		group_id;
	uint32		offset;			/* into bytes */
	uint32		length;			/* the page's first `length` bytes */
} KeptHeader;

typedef struct IndexPages
{
	Oid			relid;			/* InvalidOid: a free slot */
	BloomidxRelLocator locator;
	uint32		generation;
	uint64		last_used;
	/* The directory pages' entries, when kept (entries_kept). */
	bool		entries_kept;
	bloomidx::DirectoryPageList pages;
	uint32		nentries;
	bloomidx::SegmentEntry *entries;
	/* The headers, in the order they were kept. */
	uint32		nheaders;
	uint32		header_room;
	KeptHeader *headers;
	char	   *bytes;
	Size		bytes_used;
	Size		bytes_room;
	uint32		next_guess;		/* where the next lookup probably is */
} IndexPages;

static IndexPages kept[CACHED_INDEXES];
static MemoryContext cache_cxt = NULL;
static uint64 scans_seen = 0;

/* Forgets what the slot keeps (its memory back to the context). */
static void
forget(IndexPages *p)
{
	if (p->entries != NULL)
		pfree(p->entries);
	if (p->headers != NULL)
		pfree(p->headers);
	if (p->bytes != NULL)
		pfree(p->bytes);
	memset(p, 0, sizeof(*p));
}

static Size
kept_bytes(const IndexPages *p)
{
	return (Size) p->nentries * sizeof(bloomidx::SegmentEntry) +
		(Size) p->header_room * sizeof(KeptHeader) + p->bytes_room;
}

/*
 * The slot of the index at `generation`: what it keeps, if it kept that
 * generation of that file; with `take`, a slot made for it (emptied, or
 * the least recently used one's) when it has none.  NULL: none (or
 * the cache is off).
 */
static IndexPages *
slot_of(Relation index, uint32 generation, bool take)
{
	const BloomidxRelLocator *locator = &BLOOMIDX_REL_LOCATOR(index);
	IndexPages *oldest = &kept[0];

	if (bloomidx_debug_no_directory_cache)
		return NULL;

	for (int i = 0; i < CACHED_INDEXES; i++)
	{
		IndexPages *p = &kept[i];

		if (p->relid == RelationGetRelid(index))
		{
			if (memcmp(&p->locator, locator, sizeof(*locator)) == 0 &&
				p->generation == generation)
			{
				p->last_used = ++scans_seen;
				return p;
			}
			if (!take)
				return NULL;
			forget(p);
			oldest = p;
			break;
		}
		if (p->last_used < oldest->last_used)
			oldest = p;
	}
	if (!take)
		return NULL;
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "bloomidx directory cache",
										  ALLOCSET_SMALL_SIZES);
	if (oldest->relid != InvalidOid)
		forget(oldest);
	oldest->relid = RelationGetRelid(index);
	oldest->locator = *locator;
	oldest->generation = generation;
	oldest->last_used = ++scans_seen;
	return oldest;
}

/*
 * Fills the copy's entries past the metapage's from the cache, when it
 * kept those of the copy's generation (the copy's header and page list
 * are the metapage's, just read): true, else the caller reads the pages.
 */
bool
bloomidx_cached_directory_pages(Relation index, DirectoryCopy *copy)
{
	IndexPages *p = slot_of(index, copy->header.generation, false);
	uint32		n = copy->header.nsegments;

	if (p == NULL || !p->entries_kept || n <= bloomidx::kInlineSegments ||
		p->nentries != n - bloomidx::kInlineSegments ||
		memcmp(&p->pages, &copy->pages, sizeof(copy->pages)) != 0)
		return false;
	memcpy(&copy->entries[bloomidx::kInlineSegments], p->entries,
		   (Size) p->nentries * sizeof(bloomidx::SegmentEntry));
	return true;
}

/* Keeps the copy's entries past the metapage's (read and checked just now). */
void
bloomidx_keep_directory_pages(Relation index, const DirectoryCopy *copy)
{
	uint32		n = copy->header.nsegments;

	if (n <= bloomidx::kInlineSegments)
		return;

	uint32		past = n - bloomidx::kInlineSegments;
	Size		need = (Size) past * sizeof(bloomidx::SegmentEntry);
	IndexPages *p = slot_of(index, copy->header.generation, true);

	if (p == NULL || p->entries_kept || kept_bytes(p) + need > DIRECTORY_CACHE_BYTES)
		return;
	p->entries = (bloomidx::SegmentEntry *) MemoryContextAlloc(cache_cxt, need);
	memcpy(p->entries, &copy->entries[bloomidx::kInlineSegments], need);
	p->nentries = past;
	p->pages = copy->pages;
	p->entries_kept = true;
}

/*
 * How much of a checked header page a scan reads: up to pd_lower, the
 * header and, for a listed group, its region pages' blocks.
 */
static uint32
header_length(const char *page)
{
	return Min((uint32) ((PageHeader) page)->pd_lower, (uint32) BLCKSZ);
}

/* The kept header of group group_id at blkno, if the index's slot has it. */
static const KeptHeader *
find_header(IndexPages *p, BlockNumber blkno, uint32 group_id)
{
	if (p == NULL || p->nheaders == 0)
		return NULL;
	/* Scans ask in block order, as they were kept: the next one first. */
	for (uint32 tried = 0, i = p->next_guess % p->nheaders; tried < p->nheaders;
		 tried++, i = (i + 1) % p->nheaders)
	{
		const KeptHeader *k = &p->headers[i];

		if (k->blkno != blkno)
			continue;
		if (k->group_id != group_id)
			return NULL;		/* the caller's check will say why */
		p->next_guess = i + 1;
		return k;
	}
	return NULL;
}

/*
 * Copies the header page of group group_id at blkno, as a scan of the
 * directory's `generation` read and checked it, into *copy (its first
 * bytes, all a scan reads of it): true when kept.
 */
bool
bloomidx_cached_group_header(Relation index, uint32 generation, BlockNumber blkno,
							 uint32 group_id, char *copy)
{
	IndexPages *p = slot_of(index, generation, false);
	const KeptHeader *k = find_header(p, blkno, group_id);

	if (k == NULL)
		return false;
	memcpy(copy, p->bytes + k->offset, k->length);
	return true;
}

/* Whether the header page of group group_id at blkno is kept (need not be read ahead). */
bool
bloomidx_group_header_kept(Relation index, uint32 generation, BlockNumber blkno, uint32 group_id)
{
	return find_header(slot_of(index, generation, false), blkno, group_id) != NULL;
}

/* Keeps the header page of group group_id at blkno (copy: checked just now). */
void
bloomidx_keep_group_header(Relation index, uint32 generation, BlockNumber blkno,
						   uint32 group_id, const char *copy)
{
	IndexPages *p = slot_of(index, generation, true);
	uint32		length = header_length(copy);

	if (p == NULL)
		return;
	for (uint32 i = 0; i < p->nheaders; i++)
		if (p->headers[i].blkno == blkno)
			return;
	if (p->nheaders == p->header_room || p->bytes_used + length > p->bytes_room)
	{
		/* Grown by doubling, within the index's share. */
		uint32		room = p->nheaders < p->header_room ? p->header_room
			: Max(p->header_room * 2, (uint32) 16);
		Size		bytes_room = Max(p->bytes_room, (Size) 16 * 1024);

		while (bytes_room < p->bytes_used + length)
			bytes_room *= 2;
		if ((Size) p->nentries * sizeof(bloomidx::SegmentEntry) + room * sizeof(KeptHeader) +
			bytes_room > DIRECTORY_CACHE_BYTES)
			return;
		if (room != p->header_room)
		{
			p->headers = (KeptHeader *)
				(p->headers == NULL ? MemoryContextAlloc(cache_cxt, room * sizeof(KeptHeader))
				 : repalloc(p->headers, room * sizeof(KeptHeader)));
			p->header_room = room;
		}
		if (bytes_room != p->bytes_room)
		{
			p->bytes = (char *) (p->bytes == NULL ? MemoryContextAlloc(cache_cxt, bytes_room)
								 : repalloc(p->bytes, bytes_room));
			p->bytes_room = bytes_room;
		}
	}

	KeptHeader *k = &p->headers[p->nheaders++];

	k->blkno = blkno;
	k->group_id = group_id;
	k->offset = (uint32) p->bytes_used;
	k->length = length;
	memcpy(p->bytes + p->bytes_used, copy, length);
	p->bytes_used += length;
}
