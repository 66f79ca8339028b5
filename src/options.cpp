/*
 * options.cpp: the reloptions `length` and `col1`..`col32` (the names and
 * bounds of contrib/bloom) and `false_positive_rate`.  What is not given
 * is chosen by core/sizing.cpp: by default so that an equality on any one
 * column keeps at most 0.1% of non-matching rows.  The result is frozen in
 * the metapage at build; ALTER INDEX ... SET only takes effect at REINDEX
 * (alter_notice.cpp tells the user so).
 */
#include "bloomidx.h"

#include "core/sizing.hpp"

static relopt_kind options_kind;
static relopt_parse_elt options_table[INDEX_MAX_KEYS + 2];

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
}

bytea *
bloomidx_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, options_kind,
									  sizeof(BloomidxOptions), options_table,
									  lengthof(options_table));
}

static void
report_sizing_error(const bloomidx::SizingRequest *req, const bloomidx::SizingResult *res)
{
	int			col = res->worst_column + 1;

	switch (res->status)
	{
		case bloomidx::SizingStatus::LengthTooShort:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("length = %d is too short for false_positive_rate = %g",
							req->length, req->target_rate),
					 errdetail("With %d bits, an equality on column %d keeps at least %.3g of non-matching rows.",
							   req->length, col, res->worst_rate),
					 errhint("Raise \"length\", or leave it out to let bloomidx choose it.")));
			break;
		case bloomidx::SizingStatus::Unreachable:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("false_positive_rate = %g cannot be reached", req->target_rate),
					 errdetail("Even at length = %d, an equality on column %d (col%d = %d) keeps %.3g of non-matching rows.",
							   res->length, col, col, res->bits[col - 1], res->worst_rate),
					 errhint("Give that column more bits, leave \"col%d\" out, or raise \"false_positive_rate\".", col)));
			break;
		case bloomidx::SizingStatus::Contradiction:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("length = %d and the bits given for every column contradict false_positive_rate = %g",
							req->length, req->target_rate),
					 errdetail("An equality on column %d keeps %.3g of non-matching rows.",
							   col, res->worst_rate),
					 errhint("Leave out \"length\" or a \"colN\", or raise \"false_positive_rate\".")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid bloomidx options")));
	}
}

/*
 * The signature length and bits per column a new index is built with:
 * what the options give, and the rest chosen for the target rate.
 */
void
bloomidx_options_for_build(Relation index, uint16 *signature_bits, uint16 *column_bits)
{
	BloomidxOptions *opts = (BloomidxOptions *) index->rd_options;
	bloomidx::SizingRequest req;

	req.ncolumns = RelationGetNumberOfAttributes(index);
	req.rate_given = opts && opts->false_positive_rate > 0;
	req.target_rate = req.rate_given ? opts->false_positive_rate
		: BLOOMIDX_DEFAULT_FALSE_POSITIVE_RATE;
	req.length = opts ? opts->length : 0;
	for (int i = 0; i < req.ncolumns; i++)
	{
		req.bits[i] = (uint16) (opts ? opts->column_bits[i] : 0);
		if (req.length && req.bits[i] > req.length)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("col%d = %d is larger than length = %d", i + 1, req.bits[i], req.length),
					 errdetail("Each value sets that many distinct bits of a signature of \"length\" bits."),
					 errhint("Raise \"length\" or lower \"col%d\".", i + 1)));
	}

	bloomidx::SizingResult res = bloomidx::choose_sizing(req);

	if (res.status != bloomidx::SizingStatus::Ok)
		report_sizing_error(&req, &res);

	StringInfoData bits_text;

	initStringInfo(&bits_text);
	*signature_bits = (uint16) res.length;
	for (int i = 0; i < req.ncolumns; i++)
	{
		column_bits[i] = res.bits[i];
		appendStringInfo(&bits_text, "%s%d", i ? ", " : "", res.bits[i]);
	}
	ereport(DEBUG1,
			(errmsg_internal("bloomidx index \"%s\": length %d, bits per column %s, highest single-column false-positive rate %.3g",
							 RelationGetRelationName(index), res.length, bits_text.data,
							 res.worst_rate)));
	pfree(bits_text.data);
}
