/*
 * state.cpp: from a row's values to its signature.  Knows, per column,
 * how a value becomes a 64-bit hash that agrees with the type's equality;
 * the bits it sets come from core/positions.cpp.
 */
#include "bloomidx.h"

#include "core/hash.hpp"
#include "core/positions.hpp"

/*
 * Types whose equality is byte equality skip the fmgr call: the opclass's
 * extended hash function tells which type it is.  Integers of every width
 * hash as int64, so int2, int4 and int8 agree (cross-type "=").  Any other
 * function is called, and its result hashed again with the column's seed,
 * so that equal values in different columns still set different bits.
 */
void
bloomidx_init_hasher(ValueHasher *hasher, Oid hash_proc, Oid collation, int column)
{
	switch (hash_proc)
	{
		case F_HASHINT2EXTENDED:
			hasher->kind = VALUE_INT2;
			break;
		case F_HASHINT4EXTENDED:
			hasher->kind = VALUE_INT4;
			break;
		case F_HASHINT8EXTENDED:
			hasher->kind = VALUE_INT8;
			break;
		case F_HASHTEXTEXTENDED:
			hasher->kind = OidIsValid(collation) && get_collation_isdeterministic(collation)
				? VALUE_TEXT_BYTES : VALUE_HASH_FUNCTION;
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
		case VALUE_TEXT_BYTES:
			{
				text	   *t = DatumGetTextPP(value);
				uint64		h = bloomidx::hash_bytes(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
													 hasher->seed);

				if ((Pointer) t != DatumGetPointer(value))
					pfree(t);
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

void
bloomidx_form_signature(const BloomidxState *state, const Datum *values,
						const bool *isnull, uint8 *signature)
{
	memset(signature, 0, state->meta.signature_bytes);
	for (int i = 0; i < state->ncolumns; i++)
	{
		/* A NULL sets bits of its own, so that IS NULL can be searched. */
		uint64		h = isnull[i] ? bloomidx::null_hash(i)
			: bloomidx_hash_value(&state->hasher[i], values[i]);

		bloomidx::add_value(signature, state->meta.signature_bits,
							state->meta.column_bits[i], h);
	}
}
