/*
 * ddl_check.cpp: the event trigger bloomidx_ddl_check, fired at the end of
 * CREATE INDEX, ALTER INDEX, ALTER TABLE and CREATE SCHEMA (which can hold
 * a CREATE INDEX).  amoptions cannot know how
 * many columns an index has, so it checks options only for the fewest
 * columns they allow (src/options.cpp); what the real number of columns makes
 * impossible (a colN past the last column, a rate that more columns cannot
 * reach) is checked here, once the command has made the index and its
 * options visible.  Without it, ALTER INDEX ... SET would store options
 * that every later REINDEX, TRUNCATE, VACUUM FULL and restore of a dump
 * builds with a WARNING, ignoring them, and a partitioned index options
 * that every new partition ignores.  The check raises the error a CREATE
 * INDEX's build would, naming the index, so the command is rolled back
 * instead.  Not while check_function_bodies is off, as in a restore: there
 * the builds warn and go on (bloomidx_options_elevel says why).  Enabled
 * ALWAYS (1.2), so it fires under session_replication_role = replica too:
 * skipped there, it let such options in, silently where nothing was built
 * (a partitioned table without partitions).
 */
#include "functions/functions.h"

extern "C" {
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"

PG_FUNCTION_INFO_V1(bloomidx_ddl_check);
}

/* The relations the current command created or altered, in *oids; how many. */
static int
commands_relations(Oid **oids)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "bloomidx: SPI_connect failed");
	/*
	 * No operator, and only a schema-qualified function: the trigger runs
	 * for every such command of every user, under the caller's search_path,
	 * where an operator could resolve to anyone's function (as superuser).
	 * The rows are filtered here instead.
	 */
	if (SPI_execute("SELECT classid, objid, objsubid FROM pg_catalog.pg_event_trigger_ddl_commands()",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "bloomidx: could not read the event trigger's commands");

	int			n = 0;

	/* In the caller's context: SPI_finish frees SPI's. */
	*oids = (Oid *) MemoryContextAlloc(CurTransactionContext,
									   Max(SPI_processed, 1) * sizeof(Oid));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		null_class;
		bool		null_id;
		bool		null_sub;
		Oid			classid = DatumGetObjectId(SPI_getbinval(row, desc, 1, &null_class));
		Oid			objid = DatumGetObjectId(SPI_getbinval(row, desc, 2, &null_id));
		int32		objsubid = DatumGetInt32(SPI_getbinval(row, desc, 3, &null_sub));

		if (!null_class && !null_id && !null_sub && classid == RelationRelationId && objsubid == 0)
			(*oids)[n++] = objid;
	}
	SPI_finish();
	return n;
}

Datum
bloomidx_ddl_check(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloomidx_ddl_check must be called as an event trigger")));

	if (!check_function_bodies)
		PG_RETURN_VOID();

	Oid			am = get_am_oid("bloomidx", true);
	Oid		   *oids;
	int			n = commands_relations(&oids);

	for (int i = 0; i < n && OidIsValid(am); i++)
	{
		Relation	rel = OidIsValid(oids[i]) ? try_relation_open(oids[i], AccessShareLock) : NULL;

		if (rel == NULL)
			continue;
		if ((rel->rd_rel->relkind == RELKIND_INDEX ||
			 rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX) && rel->rd_rel->relam == am)
		{
			uint16		signature_bits;
			uint16		column_bits[INDEX_MAX_KEYS];

			bloomidx_options_for_build(rel, ERROR, &signature_bits, column_bits);
		}
		relation_close(rel, AccessShareLock);
	}
	pfree(oids);
	PG_RETURN_VOID();
}
