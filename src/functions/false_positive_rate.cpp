/*
 * false_positive_rate.cpp: bloomidx_false_positive_rate(index regclass, columns int[]),
 * the rate core/sizing.cpp predicts for a query that tests the given
 * columns (1-based) of the index: the fraction of the rows matching none
 * of the query's values that its signatures still let through.  It reads
 * the sizing frozen in the metapage (bloomidx_cached_meta), so it answers
 * for the index as built, whatever its options say now.
 *
 * The regression tests compare it with rates they measure; a user can ask
 * what an index with given options will cost in rechecks.  Like
 * pg_relation_size, it takes only an AccessShareLock on the index and
 * needs no privilege: the sizing it reveals follows from the index's
 * options, which pg_class shows everyone.
 */
#include "functions/functions.h"

#include "core/sizing.hpp"

extern "C" {

PG_FUNCTION_INFO_V1(bloomidx_false_positive_rate);
}

/* The columns as a bit set (bit i = column i + 1), checked against ncolumns. */
static uint32
query_columns(ArrayType *columns, Relation index, int ncolumns)
{
	Datum	   *elements;
	bool	   *nulls;
	int			n;
	uint32		set = 0;

	if (ARR_NDIM(columns) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("columns must be a one-dimensional array")));
	deconstruct_array(columns, INT4OID, sizeof(int32), true, TYPALIGN_INT,
					  &elements, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("columns must not contain NULL")));
		int32		column = DatumGetInt32(elements[i]);

		if (column < 1 || column > ncolumns)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("index \"%s\" has no column %d", RelationGetRelationName(index), column),
					 errdetail("Its columns are numbered 1 to %d.", ncolumns)));
		set |= (uint32) 1 << (column - 1);
	}
	return set;
}

Datum
bloomidx_false_positive_rate(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloomidx_false_positive_rate needs an index and its columns, not NULL")));

	Oid			indexoid = PG_GETARG_OID(0);
	ArrayType  *columns = PG_GETARG_ARRAYTYPE_P(1);
	Relation	index = bloomidx_open_metapage_reader(indexoid, "sizing", AccessShareLock);

	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	double		rate = bloomidx::false_positive_rate(*meta,
													 query_columns(columns, index, meta->ncolumns));

	relation_close(index, AccessShareLock);
	PG_RETURN_FLOAT8(rate);
}
