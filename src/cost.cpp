/*
 * cost.cpp: what a bitmap scan of a bloomidx index costs the planner: the
 * pages it reads and the work on them (storage/README.md, "Reading").
 *
 * The segment filters rule out the segments that hold no match (but for
 * their rate); per sealed segment read a scan reads one slice per bit
 * position its keys test (an IN list's elements each their own, only
 * those the segment's filters may hold where the list is asked), and,
 * where rows are left, its header, its live page and the TID pages of its
 * candidates (the header and live page charged to every segment read: a
 * bound, as a segment its slices rule out reads neither); these are
 * scattered reads (random_page_cost).  The
 * pending pages are read whole, in list order, each signature tested as
 * before segments (seq_page_cost).  The directory's counts come from the
 * metapage, read under a share lock as GIN's estimate reads its own.
 * The heap rows sent to recheck are the true matches plus the false
 * positives the signature lets through in the segments and pending rows
 * read, which core/sizing.cpp predicts for the columns the query tests
 * (once per combination of the IN lists' elements tested).  An IN list whose distinct elements do not fit in work_mem,
 * or so many that most rows would pass one of them, tests no bits at run
 * time (scan.cpp): it is costed so, as keeping every row.
 *
 * Calibration, by EXPLAIN ANALYZE on a cached table of 1 M rows: a
 * sequential scan spends about 65 ns a row on its cpu_tuple_cost +
 * cpu_operator_cost (0.0125), a row-wise bloomidx pass about 1 ns a
 * signature, all page handling included, so a signature costs a tenth of
 * an operator (rounded up from 0.08); an element of an IN list about half
 * a signature.  A slice page (65,024 rows: checked against its sum, then
 * ANDed) takes about 1 us, 80 operators.  Hashing an element before the
 * scan is an operator call.
 */
#include "bloomidx.h"

#include "core/in_list.hpp"
#include "core/sizing.hpp"
#include "core/tid_codec.hpp"

#include <cmath>

extern "C" {
#include "catalog/pg_statistic.h"
}

static const double kSignatureTest = 0.1;	/* in cpu_operator_cost */
static const double kElementTest = 0.05;	/* in cpu_operator_cost */
static const double kSliceTest = 80.0;	/* in cpu_operator_cost */

/* What the planner needs to know of a path's keys. */
typedef struct KeyShape
{
	uint32		columns;		/* columns whose bits are tested */
	uint32		base_columns;	/* of them, by equalities and IS NULL */
	double		alternatives;	/* product of the tested IN lists' lengths */
	double		elements;		/* elements of the tested IN lists */
	double		hashed;			/* elements hashed before the scan */
	double		slices;			/* bit positions tested: slices per segment */
	int			filter_keys;	/* keys the segment filters are asked (storage/filter_scan.cpp) */
	double		element_words;	/* words of a segment's element mask (core/query.hpp) */
	/* The IN lists asked of the filters element by element (each a filter key). */
	int			lists;
	double		list_elements[INDEX_MAX_KEYS];
	double		list_element_selectivity[INDEX_MAX_KEYS];	/* one element's */
	double		list_bits[INDEX_MAX_KEYS];	/* its column's bits */
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
 * Whether an IN list of n distinct elements fits in work_mem with what the
 * query keeps of each (its mask and slice positions), as scan.cpp needs it
 * to be tested.
 */
static bool
in_list_fits(const bloomidx::MetaPageData *meta, int column, double n)
{
	size_t		slots = bloomidx::hash_set_slots(MaxArraySize,
												 bloomidx::list_element_bytes(*meta, column),
												 (size_t) work_mem * 1024);

	return n <= (double) bloomidx::HashSet::capacity(slots);
}

static KeyShape
key_shape(PlannerInfo *root, IndexPath *path, const bloomidx::MetaPageData *meta)
{
	KeyShape	shape;

	memset(&shape, 0, sizeof(shape));
	shape.alternatives = 1.0;
	ListCell   *lc;

	foreach(lc, path->indexclauses)
	{
		IndexClause *iclause = (IndexClause *) lfirst(lc);
		uint32		column = 1u << iclause->indexcol;
		ListCell   *lc2;

		foreach(lc2, iclause->indexquals)
		{
			RestrictInfo *rinfo = (RestrictInfo *) lfirst(lc2);
			Expr	   *clause = rinfo->clause;

			if (IsA(clause, NullTest) && ((NullTest *) clause)->nulltesttype == IS_NOT_NULL)
				continue;		/* no bits to test */
			if (IsA(clause, ScalarArrayOpExpr))
			{
				Node	   *array = (Node *) lsecond(((ScalarArrayOpExpr *) clause)->args);
				double		n = array_length(root, array);

				if (n < 0 || !in_list_fits(meta, iclause->indexcol, n))
					continue;	/* every row a candidate */
				shape.hashed += n;
				/* So many that most rows pass: not tested either (core/query.cpp). */
				if (n > 1 &&
					!bloomidx::in_list_worth_testing(n, bloomidx::false_positive_rate(*meta, column)))
					continue;
				/* Asked of the filters while the elements' masks have room (core/query.cpp). */
				if (n <= 1)
					shape.filter_keys++;
				else if (n <= bloomidx::kMaxFilterElements &&
						 shape.element_words + bloomidx::list_mask_words((uint32) n) <=
						 bloomidx::kMaxFilterElementWords &&
						 shape.lists < INDEX_MAX_KEYS)
				{
					int			l = shape.lists++;

					shape.filter_keys++;
					shape.element_words += bloomidx::list_mask_words((uint32) n);
					shape.list_elements[l] = n;
					shape.list_element_selectivity[l] =
						clause_selectivity(root, (Node *) rinfo, 0, JOIN_INNER, NULL) / n;
					shape.list_bits[l] = meta->column_bits[iclause->indexcol];
				}
				if (n > 1)
				{
					shape.alternatives *= n;
					shape.elements += n;
					shape.columns |= column;
					shape.slices += n * meta->column_bits[iclause->indexcol];
					continue;
				}
			}
			if (!(shape.base_columns & column))
				shape.slices += meta->column_bits[iclause->indexcol];
			if (!IsA(clause, ScalarArrayOpExpr))
				shape.filter_keys++;
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

	/* For the selectivity of the quals (and of the partial index predicate). */
	MemSet(&costs, 0, sizeof(costs));
	costs.numIndexTuples = index->tuples;
	genericcostestimate(root, path, loop_count, &costs);

	Relation	rel = index_open(index->indexoid, NoLock);
	bloomidx::MetaPageData meta = *bloomidx_cached_meta(rel);
	DirectoryStats dir;

	bloomidx_directory_stats(rel, &dir);

	const BloomidxOptions *opts = (const BloomidxOptions *) rel->rd_options;
	double		filter_rate = opts ? opts->segment_filter_rate : BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE;
	double		bits_per_key = bloomidx_filter_bits_per_key(rel);	/* its last answer kept */

	index_close(rel, NoLock);

	KeyShape	shape = key_shape(root, path, &meta);
	double		random_page_cost_here;
	double		seq_page_cost_here;

	get_tablespace_page_costs(index->reltablespace, &random_page_cost_here, &seq_page_cost_here);

	/*
	 * Segment filters (storage/filter_scan.cpp): a group's header and a
	 * region page per key for every group (up to 1,016 segments a build
	 * wrote, or one a seal or merge wrote), an IN list's elements each
	 * their own; of the segments, only those that hold a match (a segment
	 * of R rows holds one with 1 - (1 - s)^R, s the selectivity of the
	 * quals, true matches only) or that every key's filter lets through
	 * by chance (an IN list's when one of its elements' does).  A segment
	 * read tests only the elements of a list its filters may hold: each
	 * element held there, or let through at the index's rate.
	 */
	double		rows_per_segment = dir.segments > 0 ? dir.segment_rows / dir.segments : 0;
	double		filtered = shape.filter_keys > 0 ? dir.filtered_segments : 0;
	double		groups = shape.filter_keys > 0 ? dir.filter_groups : 0;
	double		holding = -std::expm1(rows_per_segment * std::log1p(-Min(costs.indexSelectivity, 0.999999)));
	double		plain_chance = std::pow(filter_rate, shape.filter_keys - shape.lists);
	double		chance = plain_chance;
	double		tested_alternatives = shape.alternatives;	/* in a filtered segment read */
	double		tested_slices = shape.slices;
	double		element_pages = 0;	/* a group's, beyond a page a key */

	/*
	 * The element masks a scan keeps only where they fit in work_mem
	 * (scan.cpp); else a list is asked as one key, every element tested.
	 * A list is asked after the keys of one value (filter_scan.cpp), in the
	 * groups they let through (taken as at the query's own rate), each
	 * element a region page of its column there, those of a group's few
	 * pages shared (a group's slots times a segment's blocks, a block row
	 * of 1,016 slots a page).
	 */
	bool		masks = (double) dir.segments * shape.element_words * sizeof(uint64) <=
		(double) work_mem * 1024;
	double		slots_per_group = groups > 0 ? filtered / groups : 0;
	double		column_pages = Max(1.0, std::ceil(rows_per_segment * Max(bits_per_key, 1.0) /
												  bloomidx::kFilterBlockBits * slots_per_group /
												  bloomidx::kGroupSlots));
	double		lists_reached = shape.filter_keys > shape.lists
		? Min(1.0, slots_per_group * Min(1.0, holding + plain_chance)) : 1.0;

	for (int l = 0; l < shape.lists; l++)
	{
		double		n = shape.list_elements[l];
		double		held = -std::expm1(rows_per_segment *
									   std::log1p(-Min(shape.list_element_selectivity[l], 0.999999)));
		double		p = Min(held + filter_rate, 0.999999);
		double		some = -std::expm1(n * std::log1p(-p));	/* one element or more passes */
		double		tested = some > 0 ? Max(1.0, Min(n, n * p / some)) : n;

		chance *= -std::expm1(n * std::log1p(-Min(filter_rate, 0.999999)));
		if (!masks)
			continue;
		tested_alternatives *= tested / n;
		tested_slices -= (n - tested) * shape.list_bits[l];
		element_pages += lists_reached *
			Max(0.0, -column_pages * std::expm1(n * std::log1p(-1.0 / column_pages)) - 1);
	}

	double		filter_pages = groups * (1 + shape.filter_keys + element_pages);
	double		passing = Min(1.0, holding + chance);
	double		unfiltered = dir.segments - filtered;
	double		filtered_read = filtered * passing;
	double		segments = unfiltered + filtered_read;

	/*
	 * Pending pages: every signature tested against the base mask, and
	 * those that pass it (all, without equalities) against the IN lists'
	 * elements.  Their rows: the table's beyond the segments', at most
	 * what the pages hold.
	 */
	double		pending_pages = dir.pending_pages;
	double		pending_rows = Min(Max(index->tuples - dir.live_rows, 0.0),
								   pending_pages * meta.capacity);

	/*
	 * The rows sent to recheck: the true matches, and the rows the
	 * signature lets through by chance (core/sizing.cpp's rate for the
	 * columns tested, once per combination of the elements tested) in the
	 * segments read and the pending rows, not in the segments the filters
	 * ruled out.
	 */
	double		column_rate = bloomidx::false_positive_rate(meta, shape.columns);
	double		chance_in_filtered = Min(1.0, column_rate * tested_alternatives);
	double		chance_elsewhere = Min(1.0, column_rate * shape.alternatives);
	double		chance_rows = rows_per_segment * (filtered_read * chance_in_filtered +
												  unfiltered * chance_elsewhere) +
		pending_rows * chance_elsewhere;
	double		selectivity = costs.indexSelectivity;

	selectivity += (1.0 - selectivity) * Min(1.0, chance_rows / Max(index->tuples, 1.0));
	CLAMP_PROBABILITY(selectivity);

	/*
	 * Segments: the slices tested (no more than there are), header and
	 * live page (at most), and a TID page per candidate up to all of them.
	 */
	double		slices = Min(shape.slices, (double) meta.signature_bits);
	double		filtered_slices = Min(tested_slices, (double) meta.signature_bits);
	double		tid_bytes = bloomidx::typical_tid_bytes(index->rel->tuples / Max(index->rel->pages, 1));
	double		tid_pages = std::ceil(rows_per_segment * tid_bytes / BLCKSZ);
	double		matches = costs.indexSelectivity * index->tuples / Max(segments, 1.0);
	double		candidates = Min(rows_per_segment, matches + rows_per_segment * chance_elsewhere);
	double		filtered_candidates = Min(rows_per_segment,
										  matches + rows_per_segment * chance_in_filtered);
	double		segment_pages = filter_pages +
		unfiltered * (2 + slices + Min(tid_pages, std::ceil(candidates))) +
		filtered_read * (2 + filtered_slices + Min(tid_pages, std::ceil(filtered_candidates)));

	/*
	 * Pending groups (storage/pending_filters.cpp), where the metapage names
	 * some: taken as covering all but the list's last two pages (inserts
	 * give pages their slots as they fill), each group costing its header
	 * and a region page a key (an IN list's elements each one), and of the
	 * pages it covers only those holding a match or let through by chance,
	 * all read at random; the rows tested, those of the pages read.
	 */
	double		pending_read = pending_pages;	/* pending pages read */
	double		group_pages = 0;	/* their groups' pages read */

	if (dir.pending_groups && shape.filter_keys > 0 && bits_per_key > 0 && pending_pages > 2)
	{
		double		covered = pending_pages - 2;
		double		holding_page = -std::expm1(meta.capacity *
											   std::log1p(-Min(costs.indexSelectivity, 0.999999)));
		double		passing_page = Min(1.0, holding_page +
									   std::pow(filter_rate, shape.filter_keys) * Max(shape.elements, 1.0));

		group_pages = std::ceil(covered / bloomidx::kPendingGroupSlots) *
			(1 + shape.filter_keys + Max(shape.elements - 1, 0.0));
		pending_read = 2 + covered * passing_page;
	}
	double		reaching_lists = shape.elements > 0 && shape.base_columns
		? bloomidx::false_positive_rate(meta, shape.base_columns) : 1.0;
	double		per_signature = cpu_operator_cost *
		(kSignatureTest + kElementTest * shape.elements * reaching_lists);

	/* A bitmap scan returns nothing before it has read everything it reads. */
	*indexStartupCost = shape.hashed * cpu_operator_cost +
		(1 + segment_pages) * random_page_cost_here +
		(unfiltered * slices + filtered_read * filtered_slices) * kSliceTest * cpu_operator_cost +
		(pending_read < pending_pages ? (pending_read + group_pages) * random_page_cost_here
		 : pending_pages * seq_page_cost_here) +
		pending_rows * (pending_read / Max(pending_pages, 1.0)) * per_signature;
	*indexTotalCost = *indexStartupCost;
	*indexSelectivity = selectivity;
	*indexCorrelation = 0;
	*indexPages = 1 + segment_pages + pending_read + group_pages;
}
