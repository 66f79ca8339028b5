/*
 * The PostgreSQL headers the glue needs, included with C linkage.
 *
 * Every glue file includes this first.  Glue frames may be unwound by
 * ereport(ERROR)'s longjmp, so they hold plain data only: no C++ object
 * with a destructor lives in a function that calls into PostgreSQL.
 */
#ifndef BLOOMIDX_PG_H
#define BLOOMIDX_PG_H

/*
 * The module is built with -fvisibility=hidden, so calls inside it are
 * direct; what PostgreSQL must find (the magic block, _PG_init, the
 * handler and its info function) is declared PGDLLEXPORT, made visible here.
 */
#define PGDLLEXPORT __attribute__((visibility("default")))

extern "C" {
#include "postgres.h"

#include "access/amapi.h"
#include "access/amvalidate.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/reloptions.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/buffile.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"
#include "lib/stringinfo.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
#include "utils/syscache.h"
}

#endif
