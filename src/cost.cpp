/*
 * cost.cpp: what a bitmap scan of a bloomidx index costs the planner.
 * Every page is read once, in order (seq_page_cost, not random_page_cost),
 * whatever the keys: IN lists are answered in the same single pass.  The
 * heap rows it sends to recheck are the true matches plus the false
 * positives the signature lets through, which core/sizing.cpp predicts
 * for the columns the query tests.
 */
#include "bloomidx.h"

#include "core/sizing.hpp"

/* What the planner needs to know of a path's keys. */
typedef struct KeyShape
{
	uint32		columns;		/* columns whose bits are tested */
	double		alternatives;	/* product of the IN lists' lengths */
	double		masks;			/* masks tested per signature, at most */
} KeyShape;

static KeyShape
key_shape(PlannerInfo *root, IndexPath *path)
{
	KeyShape	shape = {0, 1.0, 1.0};
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = (IndexClause *) lfirst(lc);
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			Expr	   *clause = ((RestrictInfo *) lfirst(lc2))->clause;

			if (IsA(clause, NullTest) && ((NullTest *) clause)->nulltesttype == IS_NOT_NULL)
				continue;		/* no bits to test */
			if (IsA(clause, ScalarArrayOpExpr))
			{
				Node	   *array = (Node *) lsecond(((ScalarArrayOpExpr *) clause)->args);
				double		n = Max(estimate_array_length(array), 1);

				shape.alternatives *= n;
				shape.masks += n;
			}
			shape.columns |= 1u << iclause->indexcol;
		}
	}
	return shape;
}

/* The predicted false-positive rate of the path's keys. */
static double
path_false_positive_rate(IndexPath *path, const KeyShape *shape)
{
	Relation	index = index_open(path->indexinfo->indexoid, NoLock);
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	double		rate = bloomidx::false_positive_rate(meta->signature_bits, meta->column_bits,
													 meta->ncolumns, shape->columns);

	index_close(index, NoLock);
	if (rate < 0)
		return 1.0;
	/* A row passes if any combination of the IN lists' elements does. */
	return Min(1.0, rate * shape->alternatives);
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

	KeyShape	shape = key_shape(root, path);

	get_tablespace_page_costs(index->reltablespace, NULL, &seq_page_cost_here);
	double		pages = Max(index->pages, 1);

	/* One pass; a signature test costs one operator, IN lists a bit more. */
	double		per_tuple = cpu_operator_cost * (1.0 + 0.25 * (shape.masks - 1.0));
	double		selectivity = costs.indexSelectivity;

	selectivity += (1.0 - selectivity) * path_false_positive_rate(path, &shape);
	CLAMP_PROBABILITY(selectivity);

	/* A bitmap scan returns nothing before it has read the whole index. */
	*indexStartupCost = pages * seq_page_cost_here + index->tuples * per_tuple;
	*indexTotalCost = *indexStartupCost;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = pages;
}
