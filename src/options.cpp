/*
 * options.cpp: the reloptions `length` and `col1`..`col32` (the names and
 * bounds of contrib/bloom) and `false_positive_rate`.  What is not given
 * is chosen by core/sizing.cpp: by default so that an equality on any one
 * column keeps at most 0.03% of non-matching rows.  The result is frozen in
 * the metapage at build: as with btree's fillfactor or contrib/bloom's
 * options, ALTER INDEX ... SET takes effect at the next REINDEX.
 */
#include "bloomidx.h"

extern "C" {
#include "tcop/pquery.h"
}

#include "core/segment_filter.hpp"
#include "core/sizing.hpp"

static relopt_kind options_kind;
static relopt_parse_elt options_table[INDEX_MAX_KEYS + 3];

/*
 * Options not given read as 0, below their lower bound, so they can be told
 * from given ones (the bounds checked on input are those passed here).
 */
void
bloomidx_register_options(void)
{
	options_kind = add_reloption_kind();

	add_int_reloption(options_kind, "length",
					  "Length of the signature in bits",
					  0, 1, bloomidx::kMaxSignatureBits, AccessExclusiveLock);
	options_table[0].optname = "length";
	options_table[0].opttype = RELOPT_TYPE_INT;
	options_table[0].offset = offsetof(BloomidxOptions, length);

	for (int i = 0; i < INDEX_MAX_KEYS; i++)
	{
		char		name[16];

		snprintf(name, sizeof(name), "col%d", i + 1);
		const char *kept = MemoryContextStrdup(TopMemoryContext, name);

		add_int_reloption(options_kind, kept,
						  "Number of bits each value of this index column sets",
						  0, 1, bloomidx::kMaxColumnBits, AccessExclusiveLock);
		options_table[i + 1].optname = kept;
		options_table[i + 1].opttype = RELOPT_TYPE_INT;
		options_table[i + 1].offset = offsetof(BloomidxOptions, column_bits) + sizeof(int) * i;
	}

	add_real_reloption(options_kind, "false_positive_rate",
					   "Highest fraction of non-matching rows an equality on one column may keep",
					   0, 0.000001, 0.5, AccessExclusiveLock);
	options_table[INDEX_MAX_KEYS + 1].optname = "false_positive_rate";
	options_table[INDEX_MAX_KEYS + 1].opttype = RELOPT_TYPE_REAL;
	options_table[INDEX_MAX_KEYS + 1].offset = offsetof(BloomidxOptions, false_positive_rate);

	add_real_reloption(options_kind, "segment_filter_rate",
					   "Fraction of the segments holding no row with a value that its segment filter lets through (0: no filters)",
					   BLOOMIDX_DEFAULT_SEGMENT_FILTER_RATE, 0, 0.5, AccessExclusiveLock);
	options_table[INDEX_MAX_KEYS + 2].optname = "segment_filter_rate";
	options_table[INDEX_MAX_KEYS + 2].opttype = RELOPT_TYPE_REAL;
	options_table[INDEX_MAX_KEYS + 2].offset = offsetof(BloomidxOptions, segment_filter_rate);
}

/*
 * Without a false_positive_rate, options are taken as given even where they
 * miss the default target; but an index that keeps more than this fraction
 * of the rows an equality on one column does not match is most likely a
 * mistake, and the build warns.  contrib/bloom's own defaults (length 80,
 * 2 bits per column: 1.84% on six columns) stay below it.
 */
#define WARN_FALSE_POSITIVE_RATE 0.05

/*
 * The request for an index of ncolumns columns, from its options (NULL:
 * none); a colN larger than length is an error whatever the columns.
 */
static void
sizing_request(const BloomidxOptions *opts, int ncolumns, bloomidx::SizingRequest *req)
{
	req->ncolumns = ncolumns;
	req->rate_given = opts && opts->false_positive_rate > 0;
	req->target_rate = req->rate_given ? opts->false_positive_rate
		: BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE;
	req->length = opts ? opts->length : 0;
	for (int i = 0; i < INDEX_MAX_KEYS; i++)
	{
		int			bits = opts ? opts->column_bits[i] : 0;

		if (req->length && bits > req->length)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("col%d = %d is larger than length = %d", i + 1, bits, req->length),
					 errdetail("Each value sets that many distinct bits of a signature of \"length\" bits."),
					 errhint("Raise \"length\" or lower \"col%d\".", i + 1)));
		if (i < ncolumns)
			req->bits[i] = (uint16) bits;
	}
}

/*
 * What a build that ignores an unreachable rate says instead of the hint
 * to change the options: it names the index, as a client shows a WARNING
 * without its context.
 */
static int
ignored_rate_hint(const char *index_name)
{
	return errhint("Index \"%s\" is built as if \"false_positive_rate\" were not given; "
				   "change its options with ALTER INDEX ... SET, then REINDEX.", index_name);
}

/*
 * Says which option given is in the way (core/sizing.hpp finds it), so
 * that no message blames an option that was left out, nor asks for a
 * longer signature than there can be.  Raised at elevel; below ERROR,
 * the index named `ignoring` is built as if no rate were given, which its
 * hint says.
 */
static void
report_sizing_error(const bloomidx::SizingRequest *req, const bloomidx::SizingResult *res,
					int elevel, const char *ignoring)
{
	int			col = res->worst_column + 1;
	int			blamed = res->blamed_column + 1;

	if (res->status == bloomidx::SizingStatus::BadRequest)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid bloomidx options")));
	switch (res->blame)
	{
		case bloomidx::SizingBlame::Length:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("length = %d is too short for false_positive_rate = %g",
							req->length, req->target_rate),
					 errdetail("With %d bits, an equality on column %d keeps at least %.3g of non-matching rows.",
							   req->length, col, res->worst_rate),
					 elevel >= ERROR ?
					 errhint("Raise \"length\", or leave it out to let bloomidx choose it.") :
					 ignored_rate_hint(ignoring)));
			break;
		case bloomidx::SizingBlame::Column:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("false_positive_rate = %g cannot be reached with col%d = %d",
							req->target_rate, blamed, req->bits[blamed - 1]),
					 errdetail("With length = %d, an equality on column %d keeps at least %.3g of non-matching rows.",
							   res->length, col, res->worst_rate),
					 elevel >= ERROR ?
					 errhint("Leave \"col%d\" out to let bloomidx choose it, or raise \"false_positive_rate\".",
							 blamed) :
					 ignored_rate_hint(ignoring)));
			break;
		case bloomidx::SizingBlame::None:
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("false_positive_rate = %g cannot be reached with the options given",
							req->target_rate),
					 errdetail("With length = %d, an equality on column %d keeps at least %.3g of non-matching rows.",
							   res->length, col, res->worst_rate),
					 elevel >= ERROR ?
					 errhint("Leave out some of \"length\" and the \"colN\" given, or raise \"false_positive_rate\".") :
					 ignored_rate_hint(ignoring)));
			break;
	}
}

static void
check_sizing(const bloomidx::SizingRequest *req, bloomidx::SizingResult *res)
{
	*res = bloomidx::choose_sizing(*req);
	if (res->status != bloomidx::SizingStatus::Ok)
		report_sizing_error(req, res, ERROR, NULL);
}

/*
 * Options are checked when given (CREATE INDEX, ALTER INDEX ... SET), not
 * only when a build reads them: otherwise a partitioned index, or an index
 * given new options, would keep options that fail every later build
 * (PARTITION OF, ATTACH PARTITION, REINDEX).  The number of columns is not
 * known here, so the sizing is checked for the fewest the options allow:
 * the highest colN given, or 1.  choose_sizing cannot succeed for more
 * columns where it fails for fewer (core/sizing.hpp says why), so nothing
 * is rejected here that a build could accept; the build checks again with
 * the index's own columns.
 */
bytea *
bloomidx_options(Datum reloptions, bool validate)
{
	BloomidxOptions *opts = (BloomidxOptions *)
		build_reloptions(reloptions, validate, options_kind, sizeof(BloomidxOptions),
						 options_table, lengthof(options_table));

	if (validate && opts != NULL)
	{
		int			ncolumns = 1;
		bloomidx::SizingRequest req;
		bloomidx::SizingResult res;

		for (int i = 0; i < INDEX_MAX_KEYS; i++)
			if (opts->column_bits[i] > 0)
				ncolumns = i + 1;
		sizing_request(opts, ncolumns, &req);
		check_sizing(&req, &res);
	}
	return (bytea *) opts;
}

static void
options_error_context(void *arg)
{
	errcontext("options of bloomidx index \"%s\"", RelationGetRelationName((Relation) arg));
}

/*
 * How strictly a build takes the index's stored options.  Refusing options
 * that cannot apply is the job of the statement that gives them, CREATE
 * INDEX or ALTER INDEX, which sees the index they are for (and the event
 * trigger in ddl_check.cpp, for what amoptions cannot see).  Every other
 * build (TRUNCATE, VACUUM FULL, CLUSTER, REINDEX, a new partition, ALTER
 * TABLE's rebuild after ALTER COLUMN TYPE, CREATE TABLE ... LIKE ...
 * INCLUDING INDEXES, a restore) must succeed on whatever options were
 * stored, or a dump would restore without the index and a TRUNCATE would
 * fail for good: there what cannot apply is ignored with a WARNING that
 * names it.
 *
 * So a build refuses them when the statement running is a CREATE INDEX
 * (the portal's command tag): its own index, a partitioned index's
 * partitions, the build of CREATE INDEX CONCURRENTLY (which then leaves
 * an invalid index, as any failure of it does).  A CREATE INDEX inside a
 * function or DO block runs under that statement's tag: its build warns,
 * and the event trigger refuses it at the end.  Not while
 * check_function_bodies is off: pg_dump's scripts and pg_restore turn it
 * off, as they do to load what might not validate out of context, and a
 * restore must not lose an index (so a migration script that turns it off
 * gets the WARNING too).
 */
int
bloomidx_options_elevel(void)
{
	return (check_function_bodies && ActivePortal != NULL &&
			ActivePortal->commandTag == CMDTAG_CREATE_INDEX) ? ERROR : WARNING;
}

/*
 * The signature length and bits per column a new index is built with:
 * what the options give, and the rest chosen for the target rate.  With
 * elevel ERROR, options that cannot apply to this index are refused;
 * below it they are reported at that level and ignored: a colN past the
 * columns, then a false_positive_rate the other options cannot reach.
 */
void
bloomidx_options_for_build(Relation index, int elevel, uint16 *signature_bits,
						   uint16 *column_bits)
{
	BloomidxOptions *opts = (BloomidxOptions *) index->rd_options;
	int			ncolumns = RelationGetNumberOfAttributes(index);
	bloomidx::SizingRequest req;
	bloomidx::SizingResult res;
	ErrorContextCallback callback;

	callback.callback = options_error_context;
	callback.arg = index;
	callback.previous = error_context_stack;
	error_context_stack = &callback;

	for (int i = ncolumns; opts && i < INDEX_MAX_KEYS; i++)
		if (opts->column_bits[i] > 0)
			ereport(elevel,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_plural("col%d = %d is given, but the index has only %d column",
								   "col%d = %d is given, but the index has only %d columns",
								   ncolumns, i + 1, opts->column_bits[i], ncolumns),
					 elevel < ERROR ?
					 errdetail("Index \"%s\" is built without it.", RelationGetRelationName(index)) : 0,
					 errhint("Leave out \"col%d\": \"colN\" gives the bits of the index's Nth column.",
							 i + 1)));
	sizing_request(opts, ncolumns, &req);
	res = bloomidx::choose_sizing(req);
	if (res.status != bloomidx::SizingStatus::Ok && res.status != bloomidx::SizingStatus::BadRequest)
	{
		report_sizing_error(&req, &res, elevel, RelationGetRelationName(index));
		/* Without a rate, the options given are taken as they are. */
		req.rate_given = false;
		req.target_rate = BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE;
		res = bloomidx::choose_sizing(req);
	}
	if (res.status != bloomidx::SizingStatus::Ok)
		report_sizing_error(&req, &res, ERROR, NULL);

	error_context_stack = callback.previous;

	*signature_bits = (uint16) res.length;
	for (int i = 0; i < ncolumns; i++)
		column_bits[i] = res.bits[i];
}

/*
 * What the index was built with (DEBUG1), and, when `warn` (the index is
 * being created, not rebuilt by REINDEX, VACUUM FULL or CLUSTER), a
 * WARNING where options given without a rate leave it far from the default
 * target.  ambuild calls this once its metapage is written, and not
 * bloomidx_options_for_build, which ambuildempty calls again for an
 * unlogged index's init fork.
 */
void
bloomidx_report_sizing(Relation index, bool warn)
{
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	BloomidxOptions *opts = (BloomidxOptions *) index->rd_options;
	StringInfoData bits_text;
	double		worst = 0;
	int			worst_column = 0;

	initStringInfo(&bits_text);
	for (int i = 0; i < meta->ncolumns; i++)
	{
		double		rate = bloomidx::false_positive_rate(*meta, 1u << i);

		if (rate > worst)
		{
			worst = rate;
			worst_column = i;
		}
		appendStringInfo(&bits_text, "%s%d", i ? ", " : "", meta->column_bits[i]);
	}
	ereport(DEBUG1,
			(errmsg_internal("bloomidx index \"%s\": length %d, bits per column %s, highest single-column false-positive rate %.3g",
							 RelationGetRelationName(index), meta->signature_bits, bits_text.data,
							 worst)));
	if (warn && worst > WARN_FALSE_POSITIVE_RATE && !(opts && opts->false_positive_rate > 0))
		ereport(WARNING,
				(errmsg("options of bloomidx index \"%s\" give a predicted false-positive rate of %.3g%%",
						RelationGetRelationName(index), worst * 100),
				 errdetail("At length %d with bits per column %s, an equality on column %d is predicted to keep %.3g%% of the rows it does not match; without options, at most %g%%.",
						   meta->signature_bits, bits_text.data, worst_column + 1, worst * 100,
						   BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE * 100),
				 errhint("Leave out \"length\" and the \"colN\" to let bloomidx choose them, or give \"false_positive_rate\".")));
	pfree(bits_text.data);
}
