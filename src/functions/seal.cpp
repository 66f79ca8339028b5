/*
 * seal.cpp: bloomidx_seal(index regclass), which seals every pending page
 * but the tail, as gin_clean_pending_list does for GIN (the seal itself:
 * storage/seal.cpp).
 */
#include "functions/functions.h"

extern "C" {
PG_FUNCTION_INFO_V1(bloomidx_seal);
}

/*
 * bloomidx_seal(index): seals every pending page but the tail, a segment
 * at a time; returns the rows sealed.  Needs the rights VACUUM needs on
 * the table (its owner), as gin_clean_pending_list does.
 */
Datum
bloomidx_seal(PG_FUNCTION_ARGS)
{
	Oid			indexoid = bloomidx_index_argument(fcinfo, "bloomidx_seal");
	Relation	index = bloomidx_open_metapage_reader(indexoid, "pending list", RowExclusiveLock);

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("Pending rows cannot be sealed during recovery.")));
	if (!bloomidx_owns_relation(index->rd_index->indrelid))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, RelationGetRelationName(index));

	/*
	 * Not while CREATE INDEX CONCURRENTLY (or REINDEX CONCURRENTLY) builds
	 * it: the build's pages are its own until it is done, when the index
	 * becomes ready for inserts.
	 */
	bloomidx_check_index_ready(index);

	LockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	int64		rows = bloomidx_seal_all(index, 1);

	bloomidx_pending_filters_if_full(index);
	UnlockPage(index, bloomidx::kMetaBlock, ExclusiveLock);
	relation_close(index, RowExclusiveLock);
	PG_RETURN_INT64(rows);
}
