/*
 * cost.cpp: what a bitmap scan of a bloomidx index costs the planner.
 * Every page is read once, in order (seq_page_cost, not random_page_cost),
 * whatever the keys: IN lists are answered in the same single pass, with
 * each element's test on every signature that the other keys let through.
 * The heap rows it sends to recheck are the true matches plus the false
 * positives the signature lets through, which core/sizing.cpp predicts
 * for the columns the query tests (once per combination of the IN lists'
 * elements).  An IN list whose distinct elements do not fit in work_mem,
 * or so many that most rows would pass one of them, tests no bits at run
 * time (scan.cpp): it is costed so, as keeping every row.
 *
 * Calibration, by EXPLAIN ANALYZE on a cached table of 1 M rows: a
 * sequential scan spends about 65 ns a row on its cpu_tuple_cost +
 * cpu_operator_cost (0.0125), a bloomidx pass about 1 ns a signature, all
 * page handling included, so a signature costs a tenth of an operator
 * (rounded up from 0.08); an element of an IN list about half a signature.
 * Hashing an element before the scan is an operator call.
 */
#include "bloomidx.h"

#include "core/in_list.hpp"
#include "core/sizing.hpp"

extern "C" {
#include "catalog/pg_statistic.h"
}

static const double kSignatureTest = 0.1;	/* in cpu_operator_cost */
static const double kElementTest = 0.05;	/* in cpu_operator_cost */

/* What the planner needs to know of a path's keys. */
typedef struct KeyShape
{
	uint32		columns;		/* columns whose bits are tested */
	uint32		base_columns;	/* of them, by equalities and IS NULL */
	double		alternatives;	/* product of the tested IN lists' lengths */
	double		elements;		/* elements of the tested IN lists */
	double		hashed;			/* elements hashed before the scan */
} KeyShape;

/*
 * The length of an = ANY key's array, or -1 when it cannot be told.  A
 * constant or an ARRAY[...] tells it exactly; ARRAY(SELECT ...), an
 * initplan, by the rows its plan expects; a column of arrays (a join's
 * outer side) by the average distinct elements its statistics hold, as
 * PostgreSQL 17's estimate_array_length does.  A parameter of a generic
 * plan cannot be told: the caller then costs the list as too long to test,
 * so that such a plan never looks cheaper than a custom plan that knows
 * the list.
 */
static double
array_length(PlannerInfo *root, Node *array)
{
	while (IsA(array, RelabelType))
		array = (Node *) ((RelabelType *) array)->arg;

	if (IsA(array, Const) || (IsA(array, ArrayExpr) && !((ArrayExpr *) array)->multidims))
		return bloomidx_estimate_array_length(root, array);

	if (IsA(array, Param) && ((Param *) array)->paramkind == PARAM_EXEC)
	{
		int			paramid = ((Param *) array)->paramid;

		for (PlannerInfo *level = root; level != NULL; level = level->parent_root)
		{
			ListCell   *lc;

			foreach(lc, level->init_plans)
			{
				SubPlan    *subplan = lfirst_node(SubPlan, lc);

				if (subplan->subLinkType == ARRAY_SUBLINK &&
					list_member_int(subplan->setParam, paramid))
					return ((Plan *) list_nth(root->glob->subplans,
											  subplan->plan_id - 1))->plan_rows;
			}
		}
		return -1;
	}

	VariableStatData vardata;
	AttStatsSlot sslot;
	double		length = -1;

	examine_variable(root, array, 0, &vardata);
	if (HeapTupleIsValid(vardata.statsTuple) &&
		get_attstatsslot(&sslot, vardata.statsTuple, STATISTIC_KIND_DECHIST, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers > 0)
			length = clamp_row_est(sslot.numbers[sslot.nnumbers - 1]);
		free_attstatsslot(&sslot);
	}
	ReleaseVariableStats(vardata);
	return length;
}

/*
 * Whether an IN list of n distinct elements fits in work_mem with its
 * masks, as scan.cpp needs it to be tested.
 */
static bool
in_list_fits(const bloomidx::MetaPageData *meta, int column, double n)
{
	uint32		words = bloomidx::element_mask_words(meta->signature_bytes,
													 meta->column_bits[column]);
	size_t		slots = bloomidx::hash_set_slots(MaxArraySize, bloomidx::element_mask_stride(words),
												 (size_t) work_mem * 1024);

	return n <= (double) bloomidx::HashSet::capacity(slots);
}

static KeyShape
key_shape(PlannerInfo *root, IndexPath *path, const bloomidx::MetaPageData *meta)
{
	KeyShape	shape = {0, 0, 1.0, 0.0, 0.0};
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = (IndexClause *) lfirst(lc);
		uint32		column = 1u << iclause->indexcol;
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			Expr	   *clause = ((RestrictInfo *) lfirst(lc2))->clause;

			if (IsA(clause, NullTest) && ((NullTest *) clause)->nulltesttype == IS_NOT_NULL)
				continue;		/* no bits to test */
			if (IsA(clause, ScalarArrayOpExpr))
			{
				Node	   *array = (Node *) lsecond(((ScalarArrayOpExpr *) clause)->args);
				double		n = array_length(root, array);

				if (n < 0 || !in_list_fits(meta, iclause->indexcol, n))
					continue;	/* every row a candidate */
				shape.hashed += n;
				/* So many that most rows pass: not tested either (scan.cpp). */
				if (n > 1 &&
					!bloomidx::in_list_worth_testing(n, bloomidx::false_positive_rate(*meta, column)))
					continue;
				if (n > 1)
				{
					shape.alternatives *= n;
					shape.elements += n;
					shape.columns |= column;
					continue;
				}
			}
			shape.columns |= column;
			shape.base_columns |= column;
		}
	}
	return shape;
}

void
bloomidx_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					  Cost *indexStartupCost, Cost *indexTotalCost,
					  Selectivity *indexSelectivity, double *indexCorrelation,
					  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	double		seq_page_cost_here;

	/* For the selectivity of the quals (and of the partial index predicate). */
	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = index->tuples;
	genericcostestimate(root, path, loop_count, &costs);

	Relation	rel = index_open(index->indexoid, NoLock);
	bloomidx::MetaPageData meta = *bloomidx_cached_meta(rel);

	index_close(rel, NoLock);

	KeyShape	shape = key_shape(root, path, &meta);

	get_tablespace_page_costs(index->reltablespace, NULL, &seq_page_cost_here);
	double		pages = Max(index->pages, 1);

	/*
	 * One pass: every signature is tested against the base mask, and those
	 * that pass it (all, without equalities) against the IN lists'
	 * elements.
	 */
	double		reaching_lists = shape.elements > 0 && shape.base_columns
		? bloomidx::false_positive_rate(meta, shape.base_columns) : 1.0;
	double		per_signature = cpu_operator_cost *
		(kSignatureTest + kElementTest * shape.elements * reaching_lists);

	/* A row passes if any combination of the IN lists' elements does. */
	double		false_positives = Min(1.0, bloomidx::false_positive_rate(meta, shape.columns) *
									  shape.alternatives);
	double		selectivity = costs.indexSelectivity;

	selectivity += (1.0 - selectivity) * false_positives;
	CLAMP_PROBABILITY(selectivity);

	/* A bitmap scan returns nothing before it has read the whole index. */
	*indexStartupCost = shape.hashed * cpu_operator_cost +
		pages * seq_page_cost_here + index->tuples * per_signature;
	*indexTotalCost = *indexStartupCost;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = pages;
}
