/*
 * options.cpp: the reloptions `length` and `col1`..`col32`, with the names,
 * defaults and bounds of contrib/bloom.  They are read once, at build, and
 * frozen in the metapage; ALTER INDEX ... SET only takes effect at REINDEX
 * (alter_notice.cpp tells the user so).
 */
#include "bloomidx.h"

static relopt_kind options_kind;
static relopt_parse_elt options_table[INDEX_MAX_KEYS + 1];

void
bloomidx_register_options(void)
{
	options_kind = add_reloption_kind();

	add_int_reloption(options_kind, "length",
					  "Length of the signature in bits",
					  BLOOMIDX_DEFAULT_LENGTH, 1, bloomidx::kMaxSignatureBits,
					  AccessExclusiveLock);
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
						  BLOOMIDX_DEFAULT_BITS, 1, bloomidx::kMaxColumnBits,
						  AccessExclusiveLock);
		options_table[i + 1].optname = kept;
		options_table[i + 1].opttype = RELOPT_TYPE_INT;
		options_table[i + 1].offset = offsetof(BloomidxOptions, column_bits) + sizeof(int) * i;
	}
}

bytea *
bloomidx_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, options_kind,
									  sizeof(BloomidxOptions), options_table,
									  lengthof(options_table));
}

/*
 * The signature length and bits per column a new index is built with.
 * A column cannot set more distinct bits than the signature has.
 */
void
bloomidx_options_for_build(Relation index, uint16 *signature_bits, uint16 *column_bits)
{
	BloomidxOptions *opts = (BloomidxOptions *) index->rd_options;
	int			ncolumns = RelationGetNumberOfAttributes(index);
	int			length = opts ? opts->length : BLOOMIDX_DEFAULT_LENGTH;

	for (int i = 0; i < ncolumns; i++)
	{
		int			bits = opts ? opts->column_bits[i] : BLOOMIDX_DEFAULT_BITS;

		if (bits > length)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("col%d = %d is larger than length = %d", i + 1, bits, length),
					 errdetail("Each value sets that many distinct bits of a signature of \"length\" bits."),
					 errhint("Raise \"length\" or lower \"col%d\".", i + 1)));
		column_bits[i] = (uint16) bits;
	}
	*signature_bits = (uint16) length;
}
