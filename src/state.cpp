/*
 * state.cpp: from a row's values to its signature.  Knows, per column,
 * how a value becomes a 64-bit hash that agrees with the type's equality;
 * the bits it sets come from core/positions.cpp.
 */
#include "bloomidx.h"

extern "C" {
#include "utils/uuid.h"
}

#include "core/hash.hpp"
#include "core/positions.hpp"

/*
 * Types whose equality is byte equality skip the fmgr call: the opclass's
 * extended hash function tells which type it is (PostgreSQL's own hash
 * function for a type hashes exactly these bytes, so a type that uses it
 * has this equality).  Integers of every width hash as int64, so int2, int4
 * and int8 agree (cross-type "=").  Any other function is called, and its
 * result hashed again with the column's seed, so that equal values in
 * different columns still set different bits.
 *
 * A type must never take a byte path if two equal values can have
 * different bytes: float (-0 = 0, NaN = NaN), numeric (1.0 = 1.00), bpchar
 * (trailing spaces), interval ('1 day' = '24 hours'), jsonb, inet, arrays,
 * text under a nondeterministic collation all go through their function.
 * The hash of a cross-type key comes from its own type's function in the
 * column's family (scan.cpp), so a family must either take byte paths
 * that agree (the integers) or call functions that agree (the floats).
 */
void
bloomidx_init_hasher(ValueHasher *hasher, Oid hash_proc, Oid collation, int column)
{
	switch (hash_proc)
	{
		case F_HASHINT2EXTENDED:
			hasher->kind = VALUE_INT2;
			break;
		case F_HASHINT4EXTENDED:	/* int4, date */
			hasher->kind = VALUE_INT4;
			break;
		case F_HASHINT8EXTENDED:
		case F_TIMESTAMP_HASH_EXTENDED: /* timestamp, timestamptz: int64 */
		case F_TIME_HASH_EXTENDED:	/* time: int64 microseconds */
			hasher->kind = VALUE_INT8;
			break;
		case F_HASHOIDEXTENDED:
			hasher->kind = VALUE_OID;
			break;
		case F_UUID_HASH_EXTENDED:
			hasher->kind = VALUE_UUID;
			break;
		case F_HASHVARLENAEXTENDED: /* bytea */
			hasher->kind = VALUE_VARLENA_BYTES;
			break;
		case F_HASHTEXTEXTENDED:
			hasher->kind = OidIsValid(collation) && get_collation_isdeterministic(collation)
				? VALUE_VARLENA_BYTES : VALUE_HASH_FUNCTION;
			break;
		default:
			hasher->kind = VALUE_HASH_FUNCTION;
			break;
	}
	hasher->collation = collation;
	hasher->seed = bloomidx::column_seed(column);
	fmgr_info(hash_proc, &hasher->proc);
}

uint64
bloomidx_hash_value(const ValueHasher *hasher, Datum value)
{
	switch (hasher->kind)
	{
		case VALUE_INT2:
			return bloomidx::hash_int(DatumGetInt16(value), hasher->seed);
		case VALUE_INT4:
			return bloomidx::hash_int(DatumGetInt32(value), hasher->seed);
		case VALUE_INT8:
			return bloomidx::hash_int(DatumGetInt64(value), hasher->seed);
		case VALUE_OID:
			return bloomidx::hash_int(DatumGetObjectId(value), hasher->seed);
		case VALUE_UUID:
			return bloomidx::hash_bytes(DatumGetUUIDP(value)->data, UUID_LEN, hasher->seed);
		case VALUE_VARLENA_BYTES:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
				uint64		h = bloomidx::hash_bytes(VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
													 hasher->seed);

				if ((Pointer) v != DatumGetPointer(value))
					pfree(v);
				return h;
			}
		case VALUE_HASH_FUNCTION:
			break;
	}
	Datum		h = FunctionCall2Coll((FmgrInfo *) &hasher->proc, hasher->collation, value,
									  Int64GetDatum(0));

	return bloomidx::hash_int(DatumGetInt64(h), hasher->seed);
}

void
bloomidx_init_state(BloomidxState *state, Relation index)
{
	state->meta = *bloomidx_cached_meta(index);
	state->geometry = bloomidx::row_page_geometry(state->meta.signature_bytes);
	state->ncolumns = state->meta.ncolumns;

	for (int i = 0; i < state->ncolumns; i++)
	{
		Oid			proc = index_getprocid(index, i + 1, BLOOMIDX_HASH_PROC);

		if (!OidIsValid(proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("operator class of column %d of index \"%s\" has no hash support function",
							i + 1, RelationGetRelationName(index))));
		bloomidx_init_hasher(&state->hasher[i], proc, index->rd_indcollation[i], i);
	}
}

/* The hash column i's value stands for; a NULL has one of its own, so
 * that IS NULL can be searched. */
static inline uint64
column_hash(const BloomidxState *state, int i, const Datum *values, const bool *isnull)
{
	return isnull[i] ? bloomidx::null_hash(i) : bloomidx_hash_value(&state->hasher[i], values[i]);
}

/*
 * Sets the row's bits in signature, which the caller has zeroed (a build
 * writes into a fresh page's slots, which PageInit zeroed already).
 */
void
bloomidx_form_signature(const BloomidxState *state, const Datum *values,
						const bool *isnull, uint8 *signature)
{
	uint32		m = state->meta.signature_bits;

	if (m <= bloomidx::kShortLength)
	{
		/* The whole row in four words: the columns' walks overlap. */
		uint64		words[4] = {0, 0, 0, 0};

		for (int i = 0; i < state->ncolumns; i++)
			bloomidx::add_value_short(words, m, state->meta.column_bits[i],
									  column_hash(state, i, values, isnull));
		bloomidx::or_short_words(signature, words, m);
		return;
	}
	for (int i = 0; i < state->ncolumns; i++)
		bloomidx::add_value(signature, m, state->meta.column_bits[i],
							column_hash(state, i, values, isnull));
}
