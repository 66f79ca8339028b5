/*
 * page.cpp: making pages (the layout is in core/page_layout.hpp), the
 * metapage (block 0: options frozen at build; storage/directory.cpp has its
 * directory part), and the checks every reader runs before trusting a page.
 */
#include "support/support.h"

using bloomidx::MetaPageData;
using bloomidx::PageOpaque;
using bloomidx::PageProblem;

void
bloomidx_init_page(Page page, uint16 flags)
{
	PageInit(page, BLCKSZ, sizeof(PageOpaque));
	PageOpaque *opaque = bloomidx::page_opaque((uint8 *) page);

	opaque->count = 0;
	opaque->flags = flags;
	opaque->format = bloomidx::kFormatRowWise;
	opaque->page_id = bloomidx::kPageId;
}

/* A data page with no entries: PageInit's pd_lower and pd_upper bound the hole. */
void
bloomidx_init_data_page(Page page)
{
	bloomidx_init_page(page, bloomidx::kPageData);
}

/*
 * The one report of a damaged page: an ERROR by scans, inserts and verify,
 * a WARNING by VACUUM, which skips the page (src/vacuum.cpp says why).
 */
static void
report_corrupted_page(int elevel, Relation index, BlockNumber blkno, const char *detail)
{
	ereport(elevel,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" contains a corrupted page at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail("%s", detail),
			 errhint("Please REINDEX it.")));
}

void
bloomidx_report_corrupted_page(Relation index, BlockNumber blkno, const char *detail)
{
	report_corrupted_page(ERROR, index, blkno, detail);
	pg_unreachable();
}

/*
 * An index whose file is empty: a CREATE INDEX CONCURRENTLY that failed or
 * was cancelled before its build, or has not reached it yet.
 */
void
bloomidx_report_not_built(Relation index)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("index \"%s\" is not built", RelationGetRelationName(index)),
			 errdetail("Its file is empty: CREATE INDEX CONCURRENTLY failed or was cancelled before building it, or is still running."),
			 errhint("REINDEX INDEX %s; builds it.",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
												RelationGetRelationName(index)))));
}

void
bloomidx_warn_corrupted_page(Relation index, BlockNumber blkno, const char *detail)
{
	report_corrupted_page(WARNING, index, blkno, detail);
}

void
bloomidx_report_page_problem(Relation index, BlockNumber blkno, PageProblem problem)
{
	bloomidx_report_corrupted_page(index, blkno,
								   psprintf("%s.", bloomidx::page_problem_text(problem)));
}

/*
 * What a backend keeps of an index in rd_amcache, one chunk that the
 * relcache frees whenever the index is rebuilt or altered (rel.h: the
 * relcache pfrees it alone, and keeps rd_indexcxt while the index is
 * open): the metapage's contents, read once, and per data page its scans
 * read the buffer where they last found it and the LSN at which its sums
 * last passed.
 *
 * With the buffer hint the next scan pins the page without a lookup in
 * the shared buffer table (ReadRecentBuffer checks that the buffer still
 * holds the page; a stale hint costs a normal read).  With the LSN a scan
 * need not read a whole slice, live or TID page again to verify its sum:
 * every change to the page is WAL-logged and moves its LSN on, so the
 * same LSN means the same image, already verified; the fields that say
 * what the page is are still checked on every read.  Only where data
 * checksums are on: a page can leave shared buffers and come back from
 * disk damaged with its LSN intact (even into the same buffer, unseen by
 * the hint), and then PostgreSQL's checksum is what catches it, as it
 * does for every page it reads; without them our sums are checked at
 * every read.  And only for a WAL-logged index (an unlogged one's LSNs
 * never move).
 *
 * The hints are a table of slots, one per block hashed, which a hint for
 * another block may overwrite (its page is then pinned and checked as
 * without one), made by the first scan (the planner, inserts and VACUUM
 * read the metapage's contents alone) at HINT_BITS_MIN.  A scan that
 * starts after scans overwrote as many hints as half its slots grows it,
 * to twice the slots and hints overwritten (an IN list that reads 1,800
 * pages: from 64 to 4,096 slots at its second scan), up to
 * HINT_BITS_MAX: it follows the pages the scans read, not the index's
 * size.  It was an array of a hint per block of the index, made on a
 * backend's first scan: for a 10 M-row index 410 kB written at once,
 * whose first touch (page faults) took about 1 ms of that scan, and up to
 * 12 MB.  (It grows only between scans: the chunk moves.)
 */
typedef struct IndexCache
{
	MetaPageData meta;
	BufferHints hints;
	BufferHint	slots[FLEXIBLE_ARRAY_MEMBER];	/* hints.slots: 1 << hints.bits, or none */
} IndexCache;

#define HINT_BITS_MIN 6			/* 64 slots, 1 kB */
#define HINT_BITS_MAX 16		/* 65,536 slots, 1 MB */

/* Block blkno's slot (Fibonacci hashing: neighbouring blocks spread over the table). */
static inline BufferHint *
hint_slot(const BufferHints *hints, BlockNumber blkno)
{
	return &hints->slots[(uint32) (blkno * (uint32) 2654435769U) >> (32 - hints->bits)];
}

/* Block blkno's hint, or NULL when its slot holds another's or none. */
static inline BufferHint *
find_hint(const BufferHints *hints, BlockNumber blkno)
{
	BufferHint *h = hint_slot(hints, blkno);

	return BufferIsValid(h->buffer) && h->blkno == blkno ? h : NULL;
}

/*
 * A new rd_amcache chunk: the metapage's contents, and an empty table of
 * 1 << bits hints (none for bits 0).
 */
static IndexCache *
new_index_cache(Relation index, const MetaPageData *meta, int bits)
{
	Size		nslots = bits > 0 ? (Size) 1 << bits : 0;
	IndexCache *cache = (IndexCache *)
		MemoryContextAllocZero(index->rd_indexcxt,
							   offsetof(IndexCache, slots) + nslots * sizeof(BufferHint));

	cache->meta = *meta;
	cache->hints.bits = bits;
	cache->hints.slots = nslots > 0 ? cache->slots : NULL;
	return cache;
}

/*
 * The bits of the table the next scan should have: the least, for the
 * first; once scans overwrote half its slots' worth of hints, enough for
 * twice the slots and hints overwritten.
 */
static int
hint_bits_wanted(const BufferHints *hints)
{
	if (hints->bits == 0)
		return HINT_BITS_MIN;

	Size		slots = (Size) 1 << hints->bits;
	int			bits = hints->bits;

	if (hints->evictions < slots / 2)
		return bits;
	while (bits < HINT_BITS_MAX && ((Size) 1 << bits) < 2 * (slots + hints->evictions))
		bits++;
	return bits;
}

/*
 * The buffer hints of the index, for a scan; valid until the relcache
 * entry next changes (never within a scan) or the next scan begins.
 */
BufferHints *
bloomidx_buffer_hints(Relation index)
{
	(void) bloomidx_cached_meta(index);
	IndexCache *cache = (IndexCache *) index->rd_amcache;
	int			bits = hint_bits_wanted(&cache->hints);

	if (bits != cache->hints.bits)
	{
		IndexCache *grown = new_index_cache(index, &cache->meta, bits);

		for (Size i = 0; cache->hints.bits > 0 && i < ((Size) 1 << cache->hints.bits); i++)
			if (BufferIsValid(cache->slots[i].buffer))
				*hint_slot(&grown->hints, cache->slots[i].blkno) = cache->slots[i];
		pfree(cache);
		index->rd_amcache = grown;
		cache = grown;
	}

	/*
	 * Without data checksums (or with their failures ignored) nothing
	 * checks a page read back from disk but our sums; and an LSN tells page
	 * images apart only when every change is WAL-logged.
	 */
	const char *ignored = GetConfigOption("ignore_checksum_failure", true, false);

	cache->hints.trust_sums = RelationNeedsWAL(index) && DataChecksumsEnabled() &&
		!(ignored != NULL && strcmp(ignored, "on") == 0);
	return &cache->hints;
}

/*
 * Whether the sums of page blkno (pinned and locked) passed at its
 * present LSN before: the caller may then check it with Sums::Trust.
 */
bool
bloomidx_sums_checked_at_lsn(const BufferHints *hints, BlockNumber blkno, Page page)
{
	if (hints == NULL || !hints->trust_sums || XLogRecPtrIsInvalid(PageGetLSN(page)))
		return false;

	const BufferHint *h = find_hint(hints, blkno);

	return h != NULL && h->checked == PageGetLSN(page);
}

/* Records that the sums of page blkno (pinned and locked) passed. */
void
bloomidx_remember_sums_checked(BufferHints *hints, BlockNumber blkno, Page page)
{
	BufferHint *h = hints != NULL && hints->trust_sums ? find_hint(hints, blkno) : NULL;

	/* (None when another page's hint took the slot since this one was read: checked again.) */
	if (h != NULL)
		h->checked = PageGetLSN(page);
}

/*
 * An index of another format (an older bloomidx, or a newer one after a
 * downgrade) is not damaged: it needs to be rebuilt, or the release that
 * wrote it, which the error says.  As btree's version mismatch, XX002: the
 * index cannot be read.
 */
BLOOMIDX_NORETURN static void
bloomidx_report_bad_version(Relation index, uint32 version)
{
	char	   *name = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
												  RelationGetRelationName(index));

	if (version < bloomidx::kMetaVersionOldest)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has on-disk format version %u, older than the oldest version %u this bloomidx reads",
						RelationGetRelationName(index), version, bloomidx::kMetaVersionOldest),
				 errdetail("An earlier bloomidx built it."),
				 errhint("REINDEX INDEX %s; rebuilds it in the current format.", name)));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has on-disk format version %u, newer than the version %u this bloomidx writes",
					RelationGetRelationName(index), version, bloomidx::kMetaVersion),
			 errdetail("A later bloomidx built it; the server now runs an older one."),
			 errhint("Install the bloomidx release that built it, or run REINDEX INDEX %s to rebuild the index in this one's format.",
					 name)));
}

/*
 * What check_meta_page found on the metapage, as an ERROR; `version` is
 * the page's format version (the caller may have released the page).
 */
void
bloomidx_report_meta_problem(Relation index, PageProblem problem, uint32 version)
{
	if (problem == PageProblem::BadVersion)
		bloomidx_report_bad_version(index, version);
	bloomidx_report_page_problem(index, bloomidx::kMetaBlock, problem);
}

/*
 * The metapage, pinned and locked in `mode` (BUFFER_LOCK_SHARE or
 * _EXCLUSIVE), checked first: damage, or another on-disk format, is an
 * ERROR.
 */
Buffer
bloomidx_lock_metapage(Relation index, BloomidxLockMode mode)
{
	Buffer		buffer = ReadBuffer(index, bloomidx::kMetaBlock);

	LockBuffer(buffer, mode);

	const uint8 *page = (const uint8 *) BufferGetPage(buffer);
	PageProblem problem = bloomidx::check_meta_page(page);

	if (problem != PageProblem::None)
	{
		/* Reported with no lock held: the report looks up the schema. */
		uint32		version = bloomidx::meta_data(page)->version;

		UnlockReleaseBuffer(buffer);
		bloomidx_report_meta_problem(index, problem, version);
	}
	return buffer;
}

/* The index's metapage contents (see IndexCache). */
const MetaPageData *
bloomidx_cached_meta(Relation index)
{
	if (index->rd_amcache != NULL)
		return &((const IndexCache *) index->rd_amcache)->meta;

	if (RelationGetNumberOfBlocks(index) == 0)
		bloomidx_report_not_built(index);

	Buffer		buffer = bloomidx_lock_metapage(index, BUFFER_LOCK_SHARE);
	MetaPageData copy = *bloomidx::meta_data((const uint8 *) BufferGetPage(buffer));

	UnlockReleaseBuffer(buffer);
	if (copy.ncolumns != RelationGetNumberOfAttributes(index))
		bloomidx_report_page_problem(index, bloomidx::kMetaBlock, PageProblem::BadOptions);

	IndexCache *cache = new_index_cache(index, &copy, 0);

	index->rd_amcache = cache;
	return &cache->meta;
}

/* The TIDs half of bloomidx_check_data_page, for a page checked without it. */
void
bloomidx_check_data_page_tids(Relation index, BlockNumber blkno, Page page)
{
	PageProblem problem =
		bloomidx::check_row_page_tids((const uint8 *) page,
									  bloomidx::meta_row_geometry(*bloomidx_cached_meta(index)));

	if (problem != PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
}

/*
 * Pins data page blkno: through the buffer this backend last found it in
 * when there is a hint (no buffer table lookup, which is a fifth of a
 * scan of a cached index), else through the ring or a normal read.
 */
Buffer
bloomidx_read_page(Relation index, BlockNumber blkno, BufferAccessStrategy bas,
				   BufferHints *hints)
{
	if (hints == NULL)
		return ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, bas);

	BufferHint *h = hint_slot(hints, blkno);

	if (BufferIsValid(h->buffer) && h->blkno == blkno &&
		ReadRecentBuffer(BLOOMIDX_REL_LOCATOR(index), MAIN_FORKNUM, blkno, h->buffer))
	{
		bloomidx_count_buffer_hit(index);
		return h->buffer;
	}

	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);

	/* Maybe read from disk again: its sums are to be checked again too. */
	bool		evicted = BufferIsValid(h->buffer) && h->blkno != blkno;

	h->blkno = blkno;
	h->buffer = buffer;
	h->checked = InvalidXLogRecPtr;
	if (evicted)
		hints->evictions++;
	return buffer;
}

/*
 * Asks for data page blkno ahead of its read (PrefetchBuffer: for a page
 * not in shared buffers, a hint to the kernel to start reading it), so
 * that a scan from disk waits for pages read together rather than one
 * after another.  Not for a page this backend has a hint for, most likely
 * still in a buffer (the lookup would cost what the hint saves), nor past
 * the index's end (a damaged reference: left to the read, which reports
 * it).  True when a read from outside shared buffers was started.
 */
bool
bloomidx_prefetch_page(Relation index, BlockNumber blkno, BlockNumber nblocks,
					   const BufferHints *hints)
{
	if (blkno >= nblocks || (hints != NULL && find_hint(hints, blkno) != NULL))
		return false;
	return PrefetchBuffer(index, MAIN_FORKNUM, blkno).initiated_io;
}

/* Blocks this backend has read from outside its buffers (shared and local). */
static inline int64
blocks_read(void)
{
	return pgBufferUsage.shared_blks_read + pgBufferUsage.local_blks_read;
}

/*
 * A scan's reading ahead, off until it meets a page outside shared
 * buffers.  Its distance follows the tablespace's effective_io_concurrency
 * as core scans' does (0: never), counted in segments and filter groups
 * (each some contiguous pages: a slice range, a group's region pages), up
 * to 16.
 */
void
bloomidx_read_ahead_init(ReadAhead *ra, Relation index)
{
	ra->distance = Min(get_tablespace_io_concurrency(index->rd_rel->reltablespace), 16);
	ra->reads_before = blocks_read();
	ra->on = false;
}

/* Whether the scan reads ahead now: once it has read a block from outside its buffers. */
bool
bloomidx_read_ahead_on(ReadAhead *ra)
{
	if (!ra->on && ra->distance > 0 && blocks_read() > ra->reads_before)
		ra->on = true;
	return ra->on;
}

/*
 * Raises ERRCODE_INDEX_CORRUPTED unless page is a sound pending page whose
 * entries (those `entries` says) match its sums.
 */
void
bloomidx_check_data_page(Relation index, BlockNumber blkno, Page page,
						 const bloomidx::RowPageGeometry *geometry,
						 bloomidx::EntryChecks entries)
{
	bloomidx::PageProblem problem =
		bloomidx::check_row_page((const uint8 *) page, *geometry, entries);

	if (problem != bloomidx::PageProblem::None)
		bloomidx_report_page_problem(index, blkno, problem);
}
