/*
 * The differences between the PostgreSQL versions bloomidx builds against
 * (15 to 18), in one place: the only glue file that tests PG_VERSION_NUM.
 * Each is named for what it does, not for the version that changed it.
 */
#ifndef BLOOMIDX_COMPAT_H
#define BLOOMIDX_COMPAT_H

#include "support/pg.h"

/* Whether the current user owns relation relid (16 made the check generic). */
#if PG_VERSION_NUM >= 160000
#define bloomidx_owns_relation(relid) object_ownercheck(RelationRelationId, (relid), GetUserId())
#else
#define bloomidx_owns_relation(relid) pg_class_ownercheck((relid), GetUserId())
#endif

/*
 * The physical address of a relation (RelFileNode, RelFileLocator from 16
 * on), as ReadRecentBuffer takes it.
 */
#if PG_VERSION_NUM >= 160000
#define BLOOMIDX_REL_LOCATOR(rel)	((rel)->rd_locator)
typedef RelFileLocator BloomidxRelLocator;
#else
#define BLOOMIDX_REL_LOCATOR(rel)	((rel)->rd_node)
typedef RelFileNode BloomidxRelLocator;
#endif

/*
 * The subtransaction that gave the relation its current file in this
 * transaction, or InvalidSubTransactionId (16 renamed relfilenodes to
 * relfilelocators).
 */
#if PG_VERSION_NUM >= 160000
#define BLOOMIDX_NEW_FILE_SUBID(rel)	((rel)->rd_firstRelfilelocatorSubid)
#else
#define BLOOMIDX_NEW_FILE_SUBID(rel)	((rel)->rd_firstRelfilenodeSubid)
#endif

/*
 * A background worker that DROP DATABASE and the like may stop, rather
 * than wait for (19 on; before, a seal worker lasts a second or so).
 */
#ifdef BGWORKER_INTERRUPTIBLE
#define BLOOMIDX_BGWORKER_INTERRUPTIBLE BGWORKER_INTERRUPTIBLE
#else
#define BLOOMIDX_BGWORKER_INTERRUPTIBLE 0
#endif

/*
 * A search path that holds nothing a user could have put there, for code
 * run as a table's owner (17 on, as VACUUM does; before, nothing).
 */
#if PG_VERSION_NUM >= 170000
#define bloomidx_restrict_search_path() RestrictSearchPath()
#else
#define bloomidx_restrict_search_path() ((void) 0)
#endif

/*
 * A page buffer aligned for I/O, which direct I/O (16 on) needs of what
 * goes to smgrwrite and smgrextend.
 */
#if PG_VERSION_NUM >= 160000
typedef PGIOAlignedBlock BloomidxIOBlock;
#else
typedef PGAlignedBlock BloomidxIOBlock;
#endif

/* Memory (up to 1 GB or more) aligned as BloomidxIOBlock needs. */
static inline void *
bloomidx_alloc_io_aligned(Size size)
{
#if PG_VERSION_NUM >= 160000
	return palloc_aligned(size, PG_IO_ALIGN_SIZE, MCXT_ALLOC_HUGE);
#else
	return MemoryContextAllocHuge(CurrentMemoryContext, size);
#endif
}

/*
 * Adds blocks first .. first + n - 1 (zero) to the end of the index's
 * file, past shared buffers.  Their space allocated (from 16 on
 * smgrzeroextend, with fallocate for runs of more than a few; on 15 zeros
 * written block by block), so that a full disk fails the seal that adds
 * them, not a checkpoint's write of its pages later; unless `hole`: only
 * the last block written, the file system reading the blocks before it as
 * zeros (as hash indexes add their bucket runs), for a build, which writes
 * each block itself at once.  The caller holds the extension lock where
 * others may extend the index.
 */
static inline void
bloomidx_zero_extend(SMgrRelation smgr, BlockNumber first, uint32 n, bool hole)
{
	BloomidxIOBlock zero;

	Assert(n >= 1 && n <= (uint32) INT_MAX);
	memset(zero.data, 0, BLCKSZ);
	if (hole)
	{
		smgrextend(smgr, MAIN_FORKNUM, first + n - 1, zero.data, false);
		return;
	}
#if PG_VERSION_NUM >= 160000
	smgrzeroextend(smgr, MAIN_FORKNUM, first, (int) n, false);
#else
	for (uint32 i = 0; i < n; i++)
		smgrextend(smgr, MAIN_FORKNUM, first + i, zero.data, false);
#endif
}

/*
 * Reads exactly size bytes of a temporary file, or raises an error that
 * says how many came (16 added BufFileReadExact, which raises its own).
 */
static inline void
bloomidx_buffile_read_exact(BufFile *file, void *ptr, Size size)
{
#if PG_VERSION_NUM >= 160000
	BufFileReadExact(file, ptr, size);
#else
	Size		got = BufFileRead(file, ptr, size);

	if (got != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from temporary file: read only %zu of %zu bytes",
						got, size)));
#endif
}

/* The length of an array expression (17 takes the planner, for statistics). */
static inline double
bloomidx_estimate_array_length(PlannerInfo *root, Node *array)
{
#if PG_VERSION_NUM >= 170000
	return estimate_array_length(root, array);
#else
	(void) root;
	return estimate_array_length(array);
#endif
}

/*
 * Whether index_build decides the workers of a parallel build for this
 * access method (amcanbuildparallel, 17 on); before, it decides them for
 * btree only, and bloomidx asks the planner itself (src/parallel_build.cpp).
 */
#if PG_VERSION_NUM >= 170000
#define BLOOMIDX_INDEX_BUILD_PLANS_WORKERS 1
#else
#define BLOOMIDX_INDEX_BUILD_PLANS_WORKERS 0
#endif

/* A function that never returns (ereport(ERROR) helpers). */
#if PG_VERSION_NUM >= 180000
#define BLOOMIDX_NORETURN pg_noreturn
#else
#define BLOOMIDX_NORETURN pg_attribute_noreturn()
#endif

/* VACUUM's cost-based delay (18 asks whether it is ANALYZE). */
static inline void
bloomidx_vacuum_delay_point(void)
{
#if PG_VERSION_NUM >= 180000
	vacuum_delay_point(false);
#else
	vacuum_delay_point();
#endif
}

/*
 * The extended hash function PostgreSQL 15 uses for the same values: 18
 * gave bool, bytea, date and timestamptz hash functions of their own,
 * which hash exactly as the ones their hash opclasses borrowed before (and
 * bloomidx's opclasses still name, so that an index hashes alike on every
 * version).  amvalidate and cross-type keys compare functions through it.
 */
static inline Oid
bloomidx_canonical_hash_proc(Oid proc)
{
#if PG_VERSION_NUM >= 180000
	switch (proc)
	{
		case F_HASHBOOLEXTENDED:
			return F_HASHCHAREXTENDED;
		case F_HASHBYTEAEXTENDED:
			return F_HASHVARLENAEXTENDED;
		case F_HASHDATEEXTENDED:
			return F_HASHINT4EXTENDED;
		case F_TIMESTAMPTZ_HASH_EXTENDED:
			return F_TIMESTAMP_HASH_EXTENDED;
	}
#endif
	return proc;
}

/*
 * Counts a page found in shared buffers without ReadBuffer (through
 * ReadRecentBuffer, which counts it in EXPLAIN's buffers only) as
 * ReadBuffer would: a read and a hit of the index, and from 16 on a hit in
 * pg_stat_io.
 */
static inline void
bloomidx_count_buffer_hit(Relation index)
{
	pgstat_count_buffer_read(index);
	pgstat_count_buffer_hit(index);
#if PG_VERSION_NUM >= 180000
	pgstat_count_io_op(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT, 1, 0);
#elif PG_VERSION_NUM >= 160000
	pgstat_count_io_op(IOOBJECT_RELATION, IOCONTEXT_NORMAL, IOOP_HIT);
#endif
}

/*
 * Counts a scan of the index: in pg_stat_user_indexes.idx_scan, and (18
 * on) in the "Index Searches" EXPLAIN ANALYZE shows, which counts the
 * descents into the index: one per amgetbitmap call here.
 */
static inline void
bloomidx_count_index_search(IndexScanDesc scan)
{
	pgstat_count_index_scan(scan->indexRelation);
#if PG_VERSION_NUM >= 180000
	if (scan->instrument != NULL)
		scan->instrument->nsearches++;
#endif
}

#if PG_VERSION_NUM >= 180000
/*
 * What a strategy number means in PostgreSQL's generic terms (18 on): the
 * only strategy is equality.  Code that works across access methods
 * asks this instead of assuming btree's numbers.
 */
static inline CompareType
bloomidx_translate_strategy(StrategyNumber strategy, Oid opfamily)
{
	(void) opfamily;
	return strategy == BLOOMIDX_EQUAL_STRATEGY ? COMPARE_EQ : COMPARE_INVALID;
}

static inline StrategyNumber
bloomidx_translate_cmptype(CompareType cmptype, Oid opfamily)
{
	(void) opfamily;
	return cmptype == COMPARE_EQ ? BLOOMIDX_EQUAL_STRATEGY : InvalidStrategy;
}
#endif

/*
 * What IndexAmRoutine asks for beyond what every version has (makeNode
 * leaves the rest false or NULL):
 * - 16: amsummarizing stays false: every row has its own entry.
 * - 17: amcanbuildparallel, so that index_build plans the workers and
 *   sets ii_ParallelWorkers, as for btree; aminsertcleanup stays NULL, as
 *   an INSERT's cache (src/insert.cpp) holds memory of ii_Context only, no
 *   pinned buffer or other resource to release.
 * - 18: amtranslatestrategy/amtranslatecmptype (the one strategy is "=");
 *   amcanhash and amconsistentordering stay false (no hash AM API, no
 *   order), and so does amconsistentequality, as for contrib/bloom: true
 *   would let the planner take any two "=" that share a bloomidx operator
 *   family for the same equality (in proofs of uniqueness and the like),
 *   and a user's family is trusted by no one but amvalidate, which
 *   nothing runs at CREATE INDEX; amgettreeheight stays NULL (no tree).
 */
static inline void
bloomidx_set_version_am_fields(IndexAmRoutine *am)
{
#if PG_VERSION_NUM >= 170000
	am->amcanbuildparallel = true;
	am->aminsertcleanup = NULL;
#endif
#if PG_VERSION_NUM >= 180000
	am->amtranslatestrategy = bloomidx_translate_strategy;
	am->amtranslatecmptype = bloomidx_translate_cmptype;
#endif
	(void) am;
}

/*
 * The table's vacuum_truncate, which VACUUM's truncation of the index
 * follows as the table's does: a reloption that may be unset, and from
 * PostgreSQL 18 a setting of the same name for tables without it (19 keeps
 * the reloption's "unset" in one ternary field).
 */
static inline bool
bloomidx_vacuum_truncate_option(Relation heap)
{
	const StdRdOptions *opts = (const StdRdOptions *) heap->rd_options;

#if PG_VERSION_NUM >= 190000
	if (opts != NULL && opts->vacuum_truncate != PG_TERNARY_UNSET)
		return opts->vacuum_truncate == PG_TERNARY_TRUE;
	return vacuum_truncate;
#elif PG_VERSION_NUM >= 180000
	if (opts != NULL && opts->vacuum_truncate_set)
		return opts->vacuum_truncate;
	return vacuum_truncate;
#else
	return opts == NULL || opts->vacuum_truncate;
#endif
}

/* A buffer lock's mode: an enum from 19 on, which C++ will not take from an int. */
#if PG_VERSION_NUM >= 190000
typedef BufferLockMode BloomidxLockMode;
#else
typedef int BloomidxLockMode;
#endif

/* A page's checksum, set in place before smgrwrite (19 renamed it). */
#if PG_VERSION_NUM >= 190000
#define bloomidx_page_set_checksum(page, blkno) PageSetChecksum((page), (blkno))
#else
#define bloomidx_page_set_checksum(page, blkno) PageSetChecksumInplace((page), (blkno))
#endif

/*
 * A participant's part of the parallel heap scan of a build.  PostgreSQL 19
 * takes scan options (none here: an ordinary scan, as btree's build).
 */
static inline TableScanDesc
bloomidx_beginscan_parallel(Relation heap, ParallelTableScanDesc pscan)
{
#if PG_VERSION_NUM >= 190000
	return table_beginscan_parallel(heap, pscan, SO_NONE);
#else
	return table_beginscan_parallel(heap, pscan);
#endif
}

/* A fetch of heap tuples by TID.  PostgreSQL 19 takes scan options (none here). */
static inline IndexFetchTableData *
bloomidx_index_fetch_begin(Relation heap)
{
#if PG_VERSION_NUM >= 190000
	return table_index_fetch_begin(heap, SO_NONE);
#else
	return table_index_fetch_begin(heap);
#endif
}

#endif							/* BLOOMIDX_COMPAT_H */

