/*
 * The differences between the PostgreSQL versions bloomidx builds against
 * (15 to 18), in one place: the only glue file that tests PG_VERSION_NUM.
 * Each is named for what it does, not for the version that changed it.
 */
#ifndef BLOOMIDX_COMPAT_H
#define BLOOMIDX_COMPAT_H

#include "pg.h"

/*
 * The physical address of a relation (RelFileNode, RelFileLocator from 16
 * on), as ReadRecentBuffer and log_newpage take it.
 */
#if PG_VERSION_NUM >= 160000
#define BLOOMIDX_REL_LOCATOR(rel)	((rel)->rd_locator)
#define BLOOMIDX_SMGR_LOCATOR(smgr)	((smgr)->smgr_rlocator.locator)
#else
#define BLOOMIDX_REL_LOCATOR(rel)	((rel)->rd_node)
#define BLOOMIDX_SMGR_LOCATOR(smgr)	((smgr)->smgr_rnode.node)
#endif

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
 * btree only, and bloomidx asks the planner itself (parallel_build.cpp).
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

/* What IndexAmRoutine asks for beyond what every version has. */
static inline void
bloomidx_set_version_am_fields(IndexAmRoutine *am)
{
#if PG_VERSION_NUM >= 170000
	am->amcanbuildparallel = true;	/* index_build then sets ii_ParallelWorkers */
#endif
	(void) am;
}

#endif							/* BLOOMIDX_COMPAT_H */
