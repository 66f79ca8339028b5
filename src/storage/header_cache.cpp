/*
 * header_cache.cpp: the filter groups' header pages and the directory
 * pages' entries a backend's scans read, kept from one scan of an index
 * to the next.  Every scan read the
 * header page of each group it asked before the group's first region
 * page: at 1,953 segments 19 of a 2-column miss's 63 buffers, each pinned,
 * locked, checked and copied again for every query.  btree keeps its
 * metapage in rd_amcache for the same reason.
 *
 * Why a copy stays right: a filter group is written before the publish
 * that names it in the directory, never changed while named, and freed
 * only after a later publish; every publish moves the directory's
 * generation on (directory.cpp).  So while the generation stays, the
 * groups the directory names are the pages they were, and what one scan
 * read and checked at generation g is what a later scan of g would read.
 * The cache keeps one generation an index: a scan of another starts it
 * afresh.  The key is also the index's OID and file, and an index whose
 * file is rebuilt in place (a TRUNCATE of a table new in the transaction,
 * or ON COMMIT DELETE ROWS: the same file, its generations starting
 * again, with other groups) is forgotten by its build, in the only
 * backend that can have scanned it, and on its relcache invalidation, as
 * is an index dropped or rebuilt, so that the file in the key is a second
 * line of defence (an index given a dropped one's OID and file number
 * after OID wraparound, had this backend missed the invalidation).
 *
 * A pending group's header is kept too, though it changes within a
 * generation, with the pending tail and page count it was read at: see
 * pending_group_tag.
 *
 * The directory pages' entries (past the metapage's 224) are what a scan
 * read of them at the generation; VACUUM alone changes them within one,
 * lowering live counts in place, and it moves the generation on after a
 * pass that lowered one (vacuum.cpp), so a kept count is at most a running
 * VACUUM's removals behind, as a copy taken before that VACUUM would be,
 * and none survives into the table's truncation.  Only scans keep them
 * (bloomidx_read_directory_for_scan), and scans and the planner's sums
 * (bloomidx_directory_stats, an estimate) take them: a publish, and
 * everything that acts on the counts, reads the pages.
 *
 * What it costs: a context under TopMemoryContext ("bloomidx filter group
 * headers"), at most HEADER_CACHE_BYTES an index (a full build group's
 * header takes 4,236 bytes, so about 60 groups, 61,000 segments, beside
 * their 24 bytes each in the sorted array) for the last CACHED_INDEXES indexes a
 * backend scanned, and DIRECTORY_CACHE_BYTES of directory entries; what
 * does not fit is read as before, and so is every header when the arrays
 * cannot grow.  A scan copies out
 * of it and keeps no pointer into it; the planner reads the entries in
 * place (bloomidx_kept_directory_entries), nothing in between.  bloomidx.debug_group_header_cache
 * turns it off, for comparisons.
 */
#include "storage/storage.h"

#include <algorithm>

extern "C" {
#include "utils/inval.h"
}

/* Indexes a backend keeps headers of (the least recently scanned goes first). */
#define CACHED_INDEXES 8
/* An index's kept headers, at most. */
#define HEADER_CACHE_BYTES ((Size) 256 * 1024)
/* An index's kept directory entries past the metapage's, at most (all of 32,228 segments'). */
#define DIRECTORY_CACHE_BYTES ((Size) 1024 * 1024)

/*
 * A kept header page: its block and group, and where its bytes are; for a
 * pending group, the pending list's state it was read at (its tag).
 */
typedef struct KeptHeader
{
	BlockNumber blkno;
	uint32		group_id;
	uint32		offset;			/* into bytes */
	uint32		length;			/* the page's first `length` bytes */
	uint64		tag;			/* 0: a group of segments; else pending_group_tag */
} KeptHeader;

typedef struct IndexHeaders
{
	Oid			relid;			/* InvalidOid: a free slot */
	BloomidxRelLocator locator;
	uint32		generation;
	uint64		last_used;
	uint32		nheaders;		/* sorted by block */
	uint32		header_room;
	KeptHeader *headers;
	char	   *bytes;
	Size		bytes_used;
	Size		bytes_room;
	/* The directory pages' entries (those past the metapage's), if kept. */
	bloomidx::SegmentEntry *dir_entries;
	uint32		dir_nentries;
} IndexHeaders;

static IndexHeaders kept[CACHED_INDEXES];
static MemoryContext cache_cxt = NULL;
static uint64 uses = 0;

/* Forgets what the slot keeps (its memory back to the context). */
static void
forget(IndexHeaders *p)
{
	if (p->headers != NULL)
		pfree(p->headers);
	if (p->bytes != NULL)
		pfree(p->bytes);
	if (p->dir_entries != NULL)
		pfree(p->dir_entries);
	memset(p, 0, sizeof(*p));
}

/* A relcache invalidation of an index (or of every relation) forgets it. */
static void
forget_invalidated(Datum arg, Oid relid)
{
	for (int i = 0; i < CACHED_INDEXES; i++)
		if (kept[i].relid != InvalidOid && (relid == InvalidOid || kept[i].relid == relid))
			forget(&kept[i]);
}

/* At load (_PG_init): relcache invalidations forget what they name. */
void
bloomidx_header_cache_init(void)
{
	CacheRegisterRelcacheCallback(forget_invalidated, (Datum) 0);
}

/* Forgets the index's headers: its file is being built (again). */
void
bloomidx_forget_group_headers(Relation index)
{
	forget_invalidated((Datum) 0, RelationGetRelid(index));
}

/*
 * The slot of the index at `generation`: what it keeps, if it kept that
 * generation of that file; with `take`, a slot made for it (emptied, or
 * the least recently used one's) when it has none.  NULL: none (or the
 * cache is off).
 */
static IndexHeaders *
slot_of(Relation index, uint32 generation, bool take)
{
	const BloomidxRelLocator *locator = &BLOOMIDX_REL_LOCATOR(index);
	IndexHeaders *oldest = &kept[0];

	if (!bloomidx_debug_group_header_cache)
		return NULL;
	for (int i = 0; i < CACHED_INDEXES; i++)
	{
		IndexHeaders *p = &kept[i];

		if (p->relid == RelationGetRelid(index))
		{
			if (memcmp(&p->locator, locator, sizeof(*locator)) == 0 &&
				p->generation == generation)
			{
				p->last_used = ++uses;
				return p;
			}
			if (!take)
				return NULL;
			oldest = p;
			break;
		}
		if (p->last_used < oldest->last_used)
			oldest = p;
	}
	if (!take)
		return NULL;
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext, "bloomidx filter group headers",
										  ALLOCSET_SMALL_SIZES);
	forget(oldest);
	oldest->relid = RelationGetRelid(index);
	oldest->locator = *locator;
	oldest->generation = generation;
	oldest->last_used = ++uses;
	return oldest;
}

/* Where the header at blkno is, or would go, in the slot's sorted array. */
static uint32
position_of(const IndexHeaders *p, BlockNumber blkno)
{
	const KeptHeader *at =
		std::lower_bound(p->headers, p->headers + p->nheaders, blkno,
						 [](const KeptHeader &k, BlockNumber b) { return k.blkno < b; });

	return (uint32) (at - p->headers);
}

/* The kept header of group group_id at blkno, read at `tag`, if the slot has it. */
static const KeptHeader *
find_header(const IndexHeaders *p, BlockNumber blkno, uint32 group_id, uint64 tag)
{
	if (p == NULL)
		return NULL;

	uint32		i = position_of(p, blkno);

	if (i < p->nheaders && p->headers[i].blkno == blkno && p->headers[i].group_id == group_id &&
		p->headers[i].tag == tag)
		return &p->headers[i];
	return NULL;
}

static bool
copy_kept(Relation index, uint32 generation, BlockNumber blkno, uint32 group_id, uint64 tag,
		  char *copy)
{
	IndexHeaders *p = slot_of(index, generation, false);
	const KeptHeader *k = find_header(p, blkno, group_id, tag);

	if (k == NULL)
		return false;
	memcpy(copy, p->bytes + k->offset, k->length);
	return true;
}

/*
 * Copies the header page of group group_id at blkno, as a scan of the
 * directory's `generation` read and checked it, into *copy: its bytes up
 * to pd_lower (the header and a listed group's region blocks, all a scan
 * reads of it; the rest of *copy is left as it was).  True when kept.
 */
bool
bloomidx_cached_group_header(Relation index, uint32 generation, BlockNumber blkno,
							 uint32 group_id, char *copy)
{
	return copy_kept(index, generation, blkno, group_id, 0, copy);
}

/* Whether the header page of group group_id at blkno is kept (need not be read ahead). */
bool
bloomidx_group_header_kept(Relation index, uint32 generation, BlockNumber blkno, uint32 group_id)
{
	return find_header(slot_of(index, generation, false), blkno, group_id, 0) != NULL;
}

/*
 * A pending group's header changes within a generation, but only grows:
 * a pass gives pages that filled their slots (appended, `after` moved
 * on), and a full group gets its successor's link once
 * (pending_filters.cpp); every drop of the groups is a publish, which
 * moves the generation, and group ids are never reused.  A backend's
 * scans run one after another, so a kept copy is an earlier state of the
 * header a later scan would read: its slots were written and checked, and
 * the scan walks the pages past its `after` row by row.  So any kept copy
 * answers right; the tag only decides when it is read again.  Most passes
 * come right after the insert that links a new tail, which moves the
 * directory's pending tail and page count: a header is kept with the tail
 * and count it was read at, and given to a scan that copied the same.
 * Passes that come otherwise (a seal's, after its publish, in batches; a
 * concurrent insert's, after another's link; one a scan met between its
 * link and its header) leave a copy behind: the scan walks more pages
 * past the run than a pass leaves, and has the next read it again
 * (bloomidx_forget_pending_group_header).
 */
static uint64
pending_group_tag(const bloomidx::DirectoryHeader *dir)
{
	/* Never 0: a pending group names pending pages, so pending_pages > 0. */
	return ((uint64) dir->pending_tail << 32) | dir->pending_pages;
}

/* Copies pending group group_id's header at blkno as kept for dir's state: true when kept. */
bool
bloomidx_cached_pending_group_header(Relation index, const bloomidx::DirectoryHeader *dir,
									 BlockNumber blkno, uint32 group_id, char *copy)
{
	uint64		tag = pending_group_tag(dir);

	return tag != 0 && copy_kept(index, dir->generation, blkno, group_id, tag, copy);
}

/* Memory of the cache's context, or NULL when there is none to spare: the cache is optional. */
static void *
alloc_or_null(Size size)
{
	return MemoryContextAllocExtended(cache_cxt, size, MCXT_ALLOC_NO_OOM);
}

/*
 * Grows the slot's arrays, by doubling, for one more header of `length`
 * bytes: false when its share or the memory is used up.
 */
static bool
make_room(IndexHeaders *p, uint32 length)
{
	uint32		room = p->nheaders < p->header_room ? p->header_room
		: Max(p->header_room * 2, (uint32) 16);
	Size		bytes_room = Max(p->bytes_room, (Size) 16 * 1024);

	while (bytes_room < p->bytes_used + length)
		bytes_room *= 2;
	/* The last growth takes what is left of the share, not a doubling past it. */
	if (room * sizeof(KeptHeader) + bytes_room > HEADER_CACHE_BYTES)
	{
		if (room * sizeof(KeptHeader) >= HEADER_CACHE_BYTES)
			return false;
		bytes_room = HEADER_CACHE_BYTES - room * sizeof(KeptHeader);
		if (bytes_room < p->bytes_used + length)
			return false;
	}
	if (room != p->header_room)
	{
		KeptHeader *headers = (KeptHeader *) alloc_or_null(room * sizeof(KeptHeader));

		if (headers == NULL)
			return false;
		if (p->nheaders > 0)
			memcpy(headers, p->headers, p->nheaders * sizeof(KeptHeader));
		if (p->headers != NULL)
			pfree(p->headers);
		p->headers = headers;
		p->header_room = room;
	}
	if (bytes_room != p->bytes_room)
	{
		char	   *bytes = (char *) alloc_or_null(bytes_room);

		if (bytes == NULL)
			return false;
		if (p->bytes_used > 0)
			memcpy(bytes, p->bytes, p->bytes_used);
		if (p->bytes != NULL)
			pfree(p->bytes);
		p->bytes = bytes;
		p->bytes_room = bytes_room;
	}
	return true;
}

/*
 * Keeps the header page of group group_id at blkno, which a scan of the
 * directory's `generation` read and checked just now into *copy (a whole
 * page): its bytes up to pd_lower.
 */
static void
keep_header(Relation index, uint32 generation, BlockNumber blkno, uint32 group_id, uint64 tag,
			const char *copy)
{
	IndexHeaders *p = slot_of(index, generation, true);
	uint32		length = Min((uint32) ((PageHeader) copy)->pd_lower, (uint32) BLCKSZ);

	if (p == NULL)
		return;

	uint32		i = position_of(p, blkno);

	if (i < p->nheaders && p->headers[i].blkno == blkno)
	{
		KeptHeader *k = &p->headers[i];

		/* A group of segments never changes within a generation. */
		if (tag == 0 || (k->group_id == group_id && k->tag == tag))
			return;
		/*
		 * A pending group read at another state: its new copy in place
		 * (its length, the header and its region list, does not change),
		 * else none.
		 */
		if (length != k->length)
		{
			k->tag = 0;
			k->group_id = 0;	/* matches no group */
			return;
		}
		memcpy(p->bytes + k->offset, copy, length);
		k->group_id = group_id;
		k->tag = tag;
		return;
	}
	if ((p->nheaders == p->header_room || p->bytes_used + length > p->bytes_room) &&
		!make_room(p, length))
		return;
	memmove(&p->headers[i + 1], &p->headers[i], (p->nheaders - i) * sizeof(KeptHeader));
	p->headers[i].blkno = blkno;
	p->headers[i].group_id = group_id;
	p->headers[i].offset = (uint32) p->bytes_used;
	p->headers[i].length = length;
	p->headers[i].tag = tag;
	memcpy(p->bytes + p->bytes_used, copy, length);
	p->bytes_used += length;
	p->nheaders++;
}

void
bloomidx_keep_group_header(Relation index, uint32 generation, BlockNumber blkno,
						   uint32 group_id, const char *copy)
{
	keep_header(index, generation, blkno, group_id, 0, copy);
}

/*
 * Keeps pending group group_id's header at blkno, which a scan of dir's
 * state read and checked just now into *copy (a whole page).
 */
void
bloomidx_keep_pending_group_header(Relation index, const bloomidx::DirectoryHeader *dir,
								   BlockNumber blkno, uint32 group_id, const char *copy)
{
	uint64		tag = pending_group_tag(dir);

	if (tag != 0)
		keep_header(index, dir->generation, blkno, group_id, tag, copy);
}

/* Forgets the pending group header at blkno kept for dir's generation, if any. */
void
bloomidx_forget_pending_group_header(Relation index, const bloomidx::DirectoryHeader *dir,
									 BlockNumber blkno)
{
	IndexHeaders *p = slot_of(index, dir->generation, false);

	if (p == NULL)
		return;

	uint32		i = position_of(p, blkno);

	if (i < p->nheaders && p->headers[i].blkno == blkno && p->headers[i].tag != 0)
	{
		p->headers[i].tag = 0;
		p->headers[i].group_id = 0;		/* matches no group */
	}
}

/*
 * Copies into copy->entries the entries past the metapage's that a scan
 * of the copy's generation read from the directory pages and checked
 * (bloomidx_keep_directory_pages): true when kept.  Within a generation
 * only VACUUM changes them, lowering live counts in place, and it moves
 * the generation on once its pass is done (vacuum.cpp), so a kept
 * count is one the directory had during this generation: at most a
 * VACUUM's removals behind, as a copy a scan took before that VACUUM.
 */
bool
bloomidx_cached_directory_pages(Relation index, DirectoryCopy *copy)
{
	uint32		n = copy->header.nsegments;
	const bloomidx::SegmentEntry *kept_entries =
		bloomidx_kept_directory_entries(index, copy->header.generation, n);

	if (kept_entries == NULL)
		return false;
	memcpy(&copy->entries[bloomidx::kInlineSegments], kept_entries,
		   (n - bloomidx::kInlineSegments) * sizeof(bloomidx::SegmentEntry));
	return true;
}

/*
 * The kept entries past the metapage's of an index of nsegments segments
 * at `generation` (read only, valid until the next scan): NULL when none
 * are kept.  For the planner's sums (bloomidx_directory_stats), which
 * then read no directory page.
 */
const bloomidx::SegmentEntry *
bloomidx_kept_directory_entries(Relation index, uint32 generation, uint32 nsegments)
{
	IndexHeaders *p = slot_of(index, generation, false);

	if (p == NULL || p->dir_entries == NULL || nsegments <= bloomidx::kInlineSegments ||
		p->dir_nentries != nsegments - bloomidx::kInlineSegments)
		return NULL;
	return p->dir_entries;
}

/* Keeps the directory pages' entries a scan just read and checked into copy. */
void
bloomidx_keep_directory_pages(Relation index, const DirectoryCopy *copy)
{
	uint32		n = copy->header.nsegments;

	if (n <= bloomidx::kInlineSegments ||
		(Size) (n - bloomidx::kInlineSegments) * sizeof(bloomidx::SegmentEntry) > DIRECTORY_CACHE_BYTES)
		return;

	IndexHeaders *p = slot_of(index, copy->header.generation, true);

	if (p == NULL || p->dir_entries != NULL)
		return;

	uint32		count = n - bloomidx::kInlineSegments;
	bloomidx::SegmentEntry *entries = (bloomidx::SegmentEntry *)
		alloc_or_null(count * sizeof(bloomidx::SegmentEntry));

	if (entries == NULL)
		return;
	memcpy(entries, &copy->entries[bloomidx::kInlineSegments],
		   count * sizeof(bloomidx::SegmentEntry));
	p->dir_entries = entries;
	p->dir_nentries = count;
}
