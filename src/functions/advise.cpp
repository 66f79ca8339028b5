/*
 * advise.cpp: bloomidx_advise(tab regclass, columns text[],
 * false_positive_rate float8): sizes a bloomidx index on the given columns
 * of a table from the statistics ANALYZE gathered (pg_statistic: the
 * fraction of NULLs, the number of distinct values, the most common
 * values' frequencies) and returns the CREATE INDEX that builds it, with
 * the bits per column, the signature length, each column's predicted
 * false-positive rate, the predicted size and a word on columns an index
 * serves poorly.
 *
 * Each column is held to a rate of its own: false_positive_rate, or a
 * tenth of the fraction of the rows a typical equality on it matches,
 * whichever is higher.  A query that already returns a fifth of the table
 * (a status with five values) loses nothing to a few false positives, so
 * its column gets few bits; a near-unique key gets many.  core/advise.cpp
 * finds the shortest signature that meets every column's rate.
 *
 * Like pg_stats, which shows a column's statistics only to those who may
 * read the column, it needs SELECT on every column it is asked about: the
 * statistics tell of the values.  And like pg_stats, it tells nothing of a
 * table whose row-level security applies to the caller: the statistics
 * tell of the rows the policies hide.
 */
#include "functions/functions.h"

#include <cmath>

#include "core/advise.hpp"
#include "core/hash.hpp"
#include "core/segment_filter.hpp"
#include "core/tid_codec.hpp"

extern "C" {
#include "catalog/pg_inherits.h"
#include "catalog/pg_statistic.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "utils/rls.h"

PG_FUNCTION_INFO_V1(bloomidx_advise);
}

/*
 * A column is held to at least this fraction of the share of the rows a
 * typical equality on it matches: its false positives stay under a tenth
 * of its true matches, so its rechecks add at most a tenth to the rows
 * the query reads anyway.
 */
#define SHARE_OF_MATCHES 0.1

/* An equality on a column matching at least this share: "no index helps". */
#define BROAD_SHARE 0.05

/*
 * The most common values whose real bits the rate prediction uses (the
 * list is in falling frequency; the rest count as values of random bits):
 * its cost grows with the square of their number over all columns, and
 * the lumps that real bits make come from the common values.
 */
#define MAX_LISTED_VALUES 100

/* A column with at least this share of distinct values: "nearly unique". */
#define UNIQUE_SHARE 0.9

/* What the statistics tell of one column. */
typedef struct ColumnStats
{
	char	   *name;
	AttrNumber	attnum;
	double		null_frac;
	double		distinct;		/* distinct values, NULL counted as one */
	double		top_frequency;	/* of the most common value (or NULL) */
	bool		top_is_null;
	/* Its most common values and NULL, hashed as the index would. */
	uint64	   *hashes;
	double	   *freqs;
	int			nlisted;
	double		rest;			/* the rows holding other values */
} ColumnStats;

/* The table to advise on: a table, a materialized view or a partitioned table. */
static Relation
open_advised_table(Oid relid)
{
	Relation	rel = bloomidx_open_relation(relid, AccessShareLock);
	char		relkind = rel->rd_rel->relkind;

	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW &&
		relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot create an index on relation \"%s\"", RelationGetRelationName(rel)),
				 errdetail_relkind_not_supported(relkind)));

	/* pg_stats' rule: no row_security_active() table. */
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the statistics of table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("Row-level security applies to the table, and its statistics tell of the rows it hides; pg_stats shows them to no one it applies to.")));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot create an index on temporary table \"%s\" of another session",
						RelationGetRelationName(rel))));
	return rel;
}

/*
 * A share of the rows from pg_statistic, as ANALYZE writes one: 0 to 1.
 * Statistics written by other means (pg_restore_attribute_stats takes any
 * number from a table's owner on PostgreSQL 18) may hold anything, NaN
 * too, which must not turn into NaN rates.
 */
static double
row_share(double share)
{
	return share > 0 ? Min(share, 1.0) : 0;
}

/* The column's statistics, after the checks CREATE INDEX would make. */
static void
read_column_stats(Relation rel, Oid amoid, double rows, const char *name, int column,
				  ColumnStats *out)
{
	Oid			relid = RelationGetRelid(rel);
	AttrNumber	attnum = get_attnum(relid, name);

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						name, RelationGetRelationName(rel))));
	if (attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("index creation on system columns is not supported")));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(relid, attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for column \"%s\" of relation \"%s\"",
						name, RelationGetRelationName(rel)),
				 errdetail("Its statistics tell of its values, which need SELECT on it.")));

	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	Oid			type = att->atttypid;
	Oid			opclass = GetDefaultOpClass(type, amoid);

	if (!OidIsValid(opclass))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("data type %s has no default operator class for access method \"bloomidx\"",
						format_type_be(type)),
				 errhint("bloomidx indexes types with a hash function and equality; see the README's list.")));

	/* The hash function CREATE INDEX would take, on a type it would take. */
	ValueHasher hasher;

	bloomidx_opclass_hasher(&hasher, opclass, att->attcollation, column);
	if (bloomidx_hash_breaks_equality(type, att->attcollation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloomidx cannot hash type %s of column \"%s\"",
						format_type_be_qualified(type), name),
				 errdetail(BLOOMIDX_HASH_BREAKS_EQUALITY_DETAIL),
				 errhint(BLOOMIDX_HASH_BREAKS_EQUALITY_HINT)));
	bloomidx_check_array_hashing(hasher.proc.fn_oid, type);

	bool		inherited = rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE;
	HeapTuple	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
										Int16GetDatum(attnum), BoolGetDatum(inherited));

	/* ANALYZE of an empty table stores no statistics, and says it found 0 rows. */
	if (!HeapTupleIsValid(tuple) && rel->rd_rel->reltuples == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" is empty, so its columns have no statistics",
						RelationGetRelationName(rel)),
				 errhint("Load its rows and run ANALYZE, or ask about a table that holds such data.")));
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of relation \"%s\" has no statistics",
						name, RelationGetRelationName(rel)),
				 errhint("Run ANALYZE %s; first.",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));

	Form_pg_statistic stats = (Form_pg_statistic) GETSTRUCT(tuple);
	AttStatsSlot sslot;
	double		distinct = std::isfinite(stats->stadistinct) ? stats->stadistinct : 0;

	out->name = pstrdup(name);
	out->attnum = attnum;
	out->null_frac = row_share(stats->stanullfrac);
	if (distinct < 0)
		distinct = row_share(-distinct) * rows;
	out->distinct = Max(distinct, 0.0) + (out->null_frac > 0 ? 1 : 0);
	out->distinct = Max(out->distinct, 1.0);
	out->top_frequency = out->null_frac;
	out->top_is_null = out->null_frac > 0;

	/* The values ANALYZE found most common, and NULL. */
	int			nvalues = 0;
	bool		have_mcv = get_attstatsslot(&sslot, tuple, STATISTIC_KIND_MCV, InvalidOid,
											ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS);

	if (have_mcv)
		nvalues = Min(Min(sslot.nvalues, sslot.nnumbers), MAX_LISTED_VALUES);
	out->hashes = (uint64 *) palloc(sizeof(uint64) * (nvalues + 1));
	out->freqs = (double *) palloc(sizeof(double) * (nvalues + 1));
	out->nlisted = 0;
	out->rest = 1;
	if (out->null_frac > 0)
	{
		out->hashes[0] = bloomidx::null_hash(column);
		out->freqs[0] = out->null_frac;
		out->nlisted = 1;
		out->rest -= out->null_frac;
	}
	for (int i = 0; i < nvalues; i++)
	{
		out->hashes[out->nlisted] = bloomidx_hash_value(&hasher, sslot.values[i]);
		double		freq = row_share(sslot.numbers[i]);

		out->freqs[out->nlisted] = freq;
		out->nlisted++;
		out->rest -= freq;
		if (freq > out->top_frequency)
		{
			out->top_frequency = freq;
			out->top_is_null = false;
		}
	}
	/* Every value listed: the rest is rounding. */
	if (out->rest < 0 || out->distinct <= out->nlisted)
		out->rest = 0;
	if (have_mcv)
		free_attstatsslot(&sslot);
	ReleaseSysCache(tuple);
}

/* What to say of a column, or NULL. */
static char *
column_advice(const ColumnStats *c, double rows)
{
	double		share = 1.0 / c->distinct;

	if (rows >= 1000 && c->distinct >= UNIQUE_SHARE * rows)
		return psprintf("nearly unique: an equality on \"%s\" alone finds about one row, "
						"which a btree index finds exactly in a few page reads; "
						"bloomidx serves it in queries that combine it with other columns",
						c->name);
	if (share >= BROAD_SHARE)
	{
		if (c->distinct < 1.5)
			return psprintf("a single value: an equality on \"%s\" matches every row or none, "
							"which no index helps with", c->name);
		return psprintf("%.0f distinct values: an equality on \"%s\" alone matches about %.0f%% "
						"of the rows, which a sequential scan reads as fast; "
						"it gets few bits, as it mostly narrows queries on other columns",
						c->distinct, c->name, 100 * share);
	}
	if (c->top_frequency >= 0.2 && c->top_is_null)
		return psprintf("%.0f%% of the rows are NULL, "
						"and a query for IS NULL reads them whatever the index",
						100 * c->top_frequency);
	if (c->top_frequency >= 0.2)
		return psprintf("skewed: %.0f%% of the rows hold its most common value, "
						"and a query for that value reads them whatever the index",
						100 * c->top_frequency);
	return NULL;
}

/* CREATE INDEX ON table USING bloomidx (columns) WITH (length, colN). */
static char *
create_index_statement(Relation rel, const ColumnStats *cols, int n,
					   const bloomidx::SizingResult *sizing)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "CREATE INDEX ON %s USING bloomidx (",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)));
	for (int i = 0; i < n; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", quote_identifier(cols[i].name));
	appendStringInfo(&s, ") WITH (length = %d", sizing->length);
	for (int i = 0; i < n; i++)
		appendStringInfo(&s, ", col%d = %d", i + 1, (int) sizing->bits[i]);
	appendStringInfoChar(&s, ')');
	return s.data;
}

/* The column names, checked: one-dimensional, 1..32 of them, no NULL, none twice. */
static int
advised_columns(ArrayType *columns, Datum **names)
{
	bool	   *nulls;
	int			n;

	if (ARR_NDIM(columns) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("columns must be a one-dimensional array")));
	deconstruct_array(columns, TEXTOID, -1, false, TYPALIGN_INT, names, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name at least one column")));
	if (n > bloomidx::kMaxColumns)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("a bloomidx index has at most %d columns, not %d", bloomidx::kMaxColumns, n)));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("columns must not contain NULL")));
		char	   *name = TextDatumGetCString((*names)[i]);

		for (int j = 0; j < i; j++)
			if (strcmp(name, TextDatumGetCString((*names)[j])) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is named twice", name)));
	}
	return n;
}


/*
 * The pages the index will take: on a partitioned table, the sum of its
 * leaves' indexes, each of its own rows (reltuples), with the tree's
 * statistics for the distinct values (a leaf holds at most its rows').
 */
static double
predicted_pages(Relation rel, double rows, int length, int n, const double *distinct)
{
	double		bits_per_key = bloomidx::filter_bits_per_key(BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE);

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return bloomidx::predicted_index_pages(rows, length, n, distinct, bits_per_key,
											   bloomidx::typical_tid_bytes(rows / Max(rel->rd_rel->relpages, 1)));

	List	   *tree = find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL);
	ListCell   *lc;
	double		pages = 0;

	foreach(lc, tree)
	{
		Oid			relid = lfirst_oid(lc);
		HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (!HeapTupleIsValid(tuple))
			continue;			/* dropped meanwhile */

		Form_pg_class leaf = (Form_pg_class) GETSTRUCT(tuple);
		double		leaf_rows = Max(leaf->reltuples, 0.0);
		double		leaf_pages = leaf->relpages;
		bool		indexed = leaf->relkind == RELKIND_RELATION || leaf->relkind == RELKIND_MATVIEW;

		ReleaseSysCache(tuple);
		if (!indexed)
			continue;

		double		leaf_distinct[bloomidx::kMaxColumns];

		for (int i = 0; i < n; i++)
			leaf_distinct[i] = Min(distinct[i], Max(leaf_rows, 1.0));
		pages += bloomidx::predicted_index_pages(leaf_rows, length, n, leaf_distinct, bits_per_key,
												 bloomidx::typical_tid_bytes(leaf_rows / Max(leaf_pages, 1)));
	}
	return pages;
}

Datum
bloomidx_advise(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloomidx_advise needs a table, its columns and a false-positive rate, not NULL")));

	double		rate = PG_GETARG_FLOAT8(2);

	if (!(rate >= 0.000001 && rate <= 0.5))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_rate must be between 0.000001 and 0.5, not %g", rate)));

	TupleDesc	tupdesc = bloomidx_result_row_type(fcinfo, "bloomidx_advise");

	Datum	   *names;
	int			n = advised_columns(PG_GETARG_ARRAYTYPE_P(1), &names);
	Relation	rel = open_advised_table(PG_GETARG_OID(0));
	Oid			amoid = get_index_am_oid("bloomidx", false);
	double		rows = rel->rd_rel->reltuples;

	/*
	 * Statistics from before a TRUNCATE stay, but tell of rows that are
	 * gone (reltuples -1: unknown); a negative n_distinct, a share of the
	 * rows, needs the count.
	 */
	if (!(rows >= 0) || !std::isfinite(rows))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the row count of relation \"%s\" is unknown", RelationGetRelationName(rel)),
				 errhint("Run ANALYZE %s; first.",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
	/* ANALYZE of an empty table keeps the statistics of rows gone since. */
	if (rows == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" is empty, so there is nothing to size an index for",
						RelationGetRelationName(rel)),
				 errhint("Load its rows and run ANALYZE, or ask about a table that holds such data.")));
	ColumnStats *cols = (ColumnStats *) palloc0(sizeof(ColumnStats) * n);
	double		targets[bloomidx::kMaxColumns];
	double		rates[bloomidx::kMaxColumns];
	double		distinct[bloomidx::kMaxColumns];

	for (int i = 0; i < n; i++)
	{
		read_column_stats(rel, amoid, rows, TextDatumGetCString(names[i]), i, &cols[i]);
		targets[i] = Min(0.5, Max(rate, SHARE_OF_MATCHES / cols[i].distinct));
		distinct[i] = cols[i].distinct;
	}

	bloomidx::SizingResult sizing;

	/* The core stops when an interrupt is pending, to be served here. */
	do
	{
		CHECK_FOR_INTERRUPTS();
		sizing = bloomidx::advise_sizing(targets, n, rates, bloomidx_interrupt_pending, NULL);
	} while (sizing.status == bloomidx::SizingStatus::Interrupted);
	if (sizing.status != bloomidx::SizingStatus::Ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no signature of up to %d bits gives every column a false-positive rate of %g",
						bloomidx::kMaxSignatureBits, rate),
				 errhint("Ask for a higher false_positive_rate, or fewer columns.")));

	bloomidx::ColumnValues values_of[bloomidx::kMaxColumns];

	for (int i = 0; i < n; i++)
	{
		values_of[i].hashes = cols[i].hashes;
		values_of[i].freqs = cols[i].freqs;
		values_of[i].nlisted = cols[i].nlisted;
		values_of[i].rest = cols[i].rest;
		values_of[i].distinct = cols[i].distinct;
	}
	uint32	   *fill = (uint32 *) palloc(sizeof(uint32) * (sizing.length + 1));

	if (!bloomidx::sample_row_fill(sizing.length, sizing.bits, n, values_of, fill))
		elog(ERROR, "bloomidx_advise: sizing out of range");
	for (int i = 0; i < n; i++)
	{
		do
		{
			CHECK_FOR_INTERRUPTS();
			rates[i] = bloomidx::expected_column_rate(sizing.length, sizing.bits, n, values_of, i,
													  fill, bloomidx_interrupt_pending, NULL);
		} while (rates[i] == bloomidx::kRateInterrupted);
	}

	double		pages = predicted_pages(rel, rows, sizing.length, n, distinct);
	Datum	   *column_names = (Datum *) palloc(sizeof(Datum) * n);
	Datum	   *bits = (Datum *) palloc(sizeof(Datum) * n);
	Datum	   *column_rates = (Datum *) palloc(sizeof(Datum) * n);
	Datum	   *advice = (Datum *) palloc(sizeof(Datum) * n);
	bool	   *advice_nulls = (bool *) palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
	{
		char	   *said = column_advice(&cols[i], rows);

		column_names[i] = CStringGetTextDatum(cols[i].name);
		bits[i] = Int32GetDatum(sizing.bits[i]);
		column_rates[i] = Float8GetDatum(rates[i]);
		advice_nulls[i] = said == NULL;
		advice[i] = said ? CStringGetTextDatum(said) : (Datum) 0;
	}

	Datum		values[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};

	values[0] = CStringGetTextDatum(create_index_statement(rel, cols, n, &sizing));
	values[1] = Int32GetDatum(sizing.length);
	values[2] = Int64GetDatum((int64) (pages * BLCKSZ));
	values[3] = PointerGetDatum(construct_array(column_names, n, TEXTOID, -1, false, TYPALIGN_INT));
	values[4] = PointerGetDatum(construct_array(bits, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	values[5] = PointerGetDatum(construct_array(column_rates, n, FLOAT8OID, sizeof(float8),
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[6] = PointerGetDatum(construct_md_array(advice, advice_nulls, 1, dims, lbs, TEXTOID,
												   -1, false, TYPALIGN_INT));
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
