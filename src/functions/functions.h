/*
 * functions.h: the SQL-callable functions (bloomidx--*.sql declares them),
 * which live outside the access method as pageinspect, pgstattuple and
 * amcheck do: they call down into the AM's files, the storage, support
 * and the core, and nothing there calls into them.  Sectioned by file.
 */
#ifndef BLOOMIDX_FUNCTIONS_H
#define BLOOMIDX_FUNCTIONS_H

#include "bloomidx.h"

/*
 * ---------------------------------------------------------------------
 * relation.cpp: a function's arguments: the relation one names, opened
 * and checked, and the row a function returns.
 * ---------------------------------------------------------------------
 */
Oid			bloomidx_index_argument(FunctionCallInfo fcinfo, const char *function);
TupleDesc	bloomidx_result_row_type(FunctionCallInfo fcinfo, const char *function);
Relation	bloomidx_open_relation(Oid relid, LOCKMODE lockmode);
void		bloomidx_check_is_index(Oid relid);
void		bloomidx_check_index_argument(Relation index, Oid indexoid, const char *what);
void		bloomidx_check_index_ready(Relation index);
Relation	bloomidx_open_metapage_reader(Oid indexoid, const char *what, LOCKMODE lockmode);

/*
 * ---------------------------------------------------------------------
 * page_items.cpp: bloomidx_page_items, and the kind of a page, which
 * bloomidx_stats counts pages by.
 * ---------------------------------------------------------------------
 */
bloomidx::PageProblem bloomidx_page_kind(Page page, uint16 *kind);

/*
 * The functions themselves, one file each (PG_FUNCTION_INFO_V1 there
 * declares them with C linkage).
 */
extern "C" {
PGDLLEXPORT Datum bloomidx_verify(PG_FUNCTION_ARGS);	/* verify.cpp */
PGDLLEXPORT Datum bloomidx_stats(PG_FUNCTION_ARGS); /* stats.cpp */
PGDLLEXPORT Datum bloomidx_page_items(PG_FUNCTION_ARGS);	/* page_items.cpp */
PGDLLEXPORT Datum bloomidx_index_info(PG_FUNCTION_ARGS);	/* index_info.cpp */
PGDLLEXPORT Datum bloomidx_false_positive_rate(PG_FUNCTION_ARGS);	/* false_positive_rate.cpp */
PGDLLEXPORT Datum bloomidx_advise(PG_FUNCTION_ARGS);	/* advise.cpp */
PGDLLEXPORT Datum bloomidx_seal(PG_FUNCTION_ARGS);	/* seal.cpp */
PGDLLEXPORT Datum bloomidx_ddl_check(PG_FUNCTION_ARGS); /* ddl_check.cpp */
}

#endif							/* BLOOMIDX_FUNCTIONS_H */
