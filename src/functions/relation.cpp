/*
 * relation.cpp: opening the relation a SQL function's regclass argument
 * names, with the checks every function shares, so that each says the
 * same of a dropped relation, a relation that is not a bloomidx index, a
 * partitioned index and another session's temporary index.
 */
#include "functions/functions.h"

extern "C" {
#include "commands/defrem.h"
#include "funcapi.h"
}

/*
 * The index a function's first argument names.  The functions are not
 * STRICT, so that a NULL is an error that names the function, not a
 * silent NULL.
 */
Oid
bloomidx_index_argument(FunctionCallInfo fcinfo, const char *function)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s needs an index, not NULL", function)));
	return PG_GETARG_OID(0);
}

/* The row type a function returns (its OUT parameters). */
TupleDesc
bloomidx_result_row_type(FunctionCallInfo fcinfo, const char *function)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "%s must return a row", function);
	return tupdesc;
}

/*
 * Opens the relation a function's regclass argument names: a regclass
 * may hold the OID of a relation dropped since, which is an ERROR here,
 * not a NULL.
 */
Relation
bloomidx_open_relation(Oid relid, LOCKMODE lockmode)
{
	Relation	rel = try_relation_open(relid, lockmode);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return rel;
}

static void
check_index_relkind(char relkind, const char *name)
{
	if (relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name),
				 errdetail_relkind_not_supported(relkind)));
}

/*
 * Checks, from the catalogs and with no lock taken, that relid names an
 * index (or a partitioned one): a function may check rights next, before
 * it queues a lock.
 */
void
bloomidx_check_is_index(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_index_relkind(relkind, get_rel_name(relid));
}

/*
 * Checks that an open index (indexoid) is a bloomidx index with pages of
 * its own that this session can read: not a partitioned index, which has
 * no `what` of its own (each partition's index has its own), and not
 * another session's temporary index, whose pages sit in that session's
 * local buffers.
 */
void
bloomidx_check_index_argument(Relation index, Oid indexoid, const char *what)
{
	if (index->rd_indam == NULL || index->rd_indam->ambuild != bloomidx_build)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a bloomidx index", RelationGetRelationName(index)),
				 errdetail("It uses access method \"%s\".", get_am_name(index->rd_rel->relam))));
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		char	   *name = DatumGetCString(DirectFunctionCall1(regclassout,
															   ObjectIdGetDatum(indexoid)));

		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("partitioned index \"%s\" has no %s of its own",
						RelationGetRelationName(index), what),
				 errdetail("Each partition's index has its own metapage."),
				 errhint("Ask those: SELECT relid FROM pg_partition_tree(%s) WHERE isleaf;",
						 quote_literal_cstr(name))));
	}
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read index \"%s\" of another session's temporary table",
						RelationGetRelationName(index))));
}

/*
 * Refuses an index not ready for inserts: one CREATE or REINDEX INDEX
 * CONCURRENTLY is building (its pages are the build's until it is done),
 * or failed to build, or DROP INDEX CONCURRENTLY is dropping.
 */
void
bloomidx_check_index_ready(Relation index)
{
	if (!index->rd_index->indisready)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not ready: it does not receive new rows yet",
						RelationGetRelationName(index)),
				 errdetail("CREATE or REINDEX INDEX CONCURRENTLY is building it, or failed to, or DROP INDEX CONCURRENTLY is dropping it."),
				 errhint("Wait for that command to finish, or REINDEX the index.")));
}

/*
 * Opens a bloomidx index whose metapage a function reads or changes
 * (`what` it works on, for the error about a partitioned index), with
 * lockmode.  Not an unlogged index during recovery: a standby has only
 * its init fork, and reading the main fork would fail on a missing file
 * (the planner refuses such a relation the same way; bloomidx_verify,
 * which does not come here, says instead that it has nothing to verify).
 */
Relation
bloomidx_open_metapage_reader(Oid indexoid, const char *what, LOCKMODE lockmode)
{
	Relation	index = bloomidx_open_relation(indexoid, lockmode);

	check_index_relkind(index->rd_rel->relkind, RelationGetRelationName(index));
	bloomidx_check_index_argument(index, indexoid, what);
	if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read unlogged index \"%s\" during recovery",
						RelationGetRelationName(index)),
				 errdetail("Unlogged relations are not replicated: a standby has none of their pages.")));
	return index;
}
