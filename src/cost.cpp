/*
 * cost.cpp: what a bitmap scan of a bloomidx index costs the planner.
 * Every page is read, in order (seq_page_cost, not random_page_cost), and
 * every signature is tested once.  The heap rows it sends to recheck are
 * the true matches plus the false positives the signature lets through,
 * which core/sizing.cpp predicts for the columns the query tests.
 */
#include "bloomidx.h"

#include "core/sizing.hpp"

/* The predicted false-positive rate for the columns path tests. */
static double
path_false_positive_rate(IndexPath *path)
{
	uint32		columns = 0;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
		columns |= 1u << ((IndexClause *) lfirst(lc))->indexcol;

	Relation	index = index_open(path->indexinfo->indexoid, NoLock);
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	double		rate = bloomidx::false_positive_rate(meta->signature_bits, meta->column_bits,
													 meta->ncolumns, columns);

	index_close(index, NoLock);
	return rate < 0 ? 1.0 : rate;
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

	/* For the selectivity of the quals and the number of = ANY scans. */
	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = index->tuples;
	genericcostestimate(root, path, loop_count, &costs);

	get_tablespace_page_costs(index->reltablespace, NULL, &seq_page_cost_here);
	double		pages = Max(index->pages, 1);
	double		one_scan = pages * seq_page_cost_here + index->tuples * cpu_operator_cost;
	double		selectivity = costs.indexSelectivity;

	selectivity += (1.0 - selectivity) * path_false_positive_rate(path);
	CLAMP_PROBABILITY(selectivity);

	/* A bitmap scan returns nothing before it has read the whole index. */
	*indexStartupCost = one_scan * costs.num_sa_scans;
	*indexTotalCost = *indexStartupCost;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = pages;
}
