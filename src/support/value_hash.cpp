/*
 * value_hash.cpp: from a row's values to its signature.  Knows, per column,
 * how a value becomes a 64-bit hash that agrees with the type's equality;
 * the bits it sets come from core/positions.cpp.
 */
#include "support/support.h"

extern "C" {
#include "access/hash.h"
#include "utils/typcache.h"
#include "utils/rangetypes.h"
#include "utils/uuid.h"
}

#include "core/hash.hpp"
#include "core/positions.hpp"

/*
 * Types whose equality is byte equality skip the fmgr call: the family's
 * extended hash function tells which type it is (PostgreSQL's own hash
 * function for a type hashes exactly these bytes, so a type that uses it
 * has this equality).  Any other function is called, and its result
 * hashed again with the column's seed, so that equal values in different
 * columns still set different bits.
 *
 * A type must never take a byte path if two equal values can have
 * different bytes: float (-0 = 0, NaN = NaN), numeric (1.0 = 1.00),
 * interval ('1 day' = '24 hours'), jsonb, inet, arrays, text under a
 * nondeterministic collation all go through their function.  char(n)
 * ignores trailing blanks: its byte path drops them, and its function is
 * given the value without them, because PostgreSQL 15's
 * hashbpcharextended keeps them under a nondeterministic collation (and
 * would then hash 'abc' and 'abc  ' apart although they are equal).
 *
 * A cross-type key (int8col = 5::int2) is hashed by its own type's
 * function in the column's family, so the whole family must hash alike:
 * a column takes byte paths only when every member of its family has a
 * byte path of one class (below), and calls every member's function
 * otherwise, which a valid hash family guarantees to agree.  The choice is
 * frozen in the metapage at build (column_hashing), since the family may
 * gain members later: a key whose type's function is outside the frozen
 * class tests no bits (every row stays a candidate), never wrong bits.
 */
typedef enum ByteClass
{
	BYTES_NONE = 0,				/* no byte path: call the function */
	BYTES_INTEGER,				/* int2, int4, int8, date: widened to int64 */
	BYTES_TIMESTAMP,			/* timestamp, timestamptz */
	BYTES_TIME,
	BYTES_OID,
	BYTES_UUID,
	BYTES_BYTEA,
	BYTES_TEXT,					/* under a deterministic collation */
	BYTES_BPCHAR				/* under a deterministic collation */
} ByteClass;

static bool
is_deterministic(Oid collation)
{
	return OidIsValid(collation) && get_collation_isdeterministic(collation);
}

static ByteClass
byte_class(Oid hash_proc, Oid collation)
{
	switch (hash_proc)
	{
		case F_HASHINT2EXTENDED:
		case F_HASHINT4EXTENDED:
		case F_HASHINT8EXTENDED:
			return BYTES_INTEGER;
		case F_TIMESTAMP_HASH_EXTENDED:
			return BYTES_TIMESTAMP;
		case F_TIME_HASH_EXTENDED:
			return BYTES_TIME;
		case F_HASHOIDEXTENDED:
			return BYTES_OID;
		case F_UUID_HASH_EXTENDED:
			return BYTES_UUID;
		case F_HASHVARLENAEXTENDED:
			return BYTES_BYTEA;
		case F_HASHTEXTEXTENDED:
			return is_deterministic(collation) ? BYTES_TEXT : BYTES_NONE;
		case F_HASHBPCHAREXTENDED:
			return is_deterministic(collation) ? BYTES_BPCHAR : BYTES_NONE;
		default:
			return BYTES_NONE;
	}
}

/* The kind of a function with a byte path (byte_class is not BYTES_NONE). */
static ValueHashKind
byte_kind(Oid hash_proc)
{
	switch (hash_proc)
	{
		case F_HASHINT2EXTENDED:
			return VALUE_INT2;
		case F_HASHINT4EXTENDED:
			return VALUE_INT4;
		case F_HASHINT8EXTENDED:
		case F_TIMESTAMP_HASH_EXTENDED:
		case F_TIME_HASH_EXTENDED:
			return VALUE_INT8;
		case F_HASHOIDEXTENDED:
			return VALUE_OID;
		case F_UUID_HASH_EXTENDED:
			return VALUE_UUID;
		case F_HASHBPCHAREXTENDED:
			return VALUE_BPCHAR_BYTES;
		default:
			return VALUE_VARLENA_BYTES; /* bytea, text */
	}
}

static ValueHashKind
function_kind(Oid hash_proc)
{
	switch (hash_proc)
	{
		case F_HASHBPCHAREXTENDED:
			return VALUE_BPCHAR_FUNCTION;
		case F_HASH_ARRAY_EXTENDED:
			return VALUE_ARRAY_FUNCTION;
		default:
			return VALUE_HASH_FUNCTION;
	}
}

/*
 * Whether values of type, compared under collation, hold a char(n) under a
 * nondeterministic collation anywhere (in an array, a composite, a range).
 */
static bool
holds_nondeterministic_bpchar(Oid type, Oid collation)
{
	check_stack_depth();
	type = getBaseType(type);
	if (type == BPCHAROID)
		return OidIsValid(collation) && !is_deterministic(collation);

	Oid			element = get_element_type(type);

	if (OidIsValid(element))
		return holds_nondeterministic_bpchar(element, collation);
	if (type_is_rowtype(type) && type != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(type, -1);
		bool		found = false;

		for (int i = 0; i < desc->natts && !found; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			found = !att->attisdropped &&
				holds_nondeterministic_bpchar(att->atttypid, att->attcollation);
		}
		ReleaseTupleDesc(desc);
		return found;
	}
	if (type_is_range(type))
		return holds_nondeterministic_bpchar(get_range_subtype(type), get_range_collation(type));
	if (type_is_multirange(type))
		return holds_nondeterministic_bpchar(get_multirange_range(type), InvalidOid);
	return false;
}

/*
 * Whether PostgreSQL's hash functions can hash equal values of type, under
 * collation, apart: char(n) under a nondeterministic collation nested in a
 * composite or a range, whose hash reaches hashbpcharextended with its
 * trailing blanks.  (A char(n), or an array of them, is hashed without
 * them by bpchar_function_hash.)
 */
bool
bloomidx_hash_breaks_equality(Oid type, Oid collation)
{
	Oid			base = getBaseType(type);
	Oid			element = get_element_type(base);

	if (base == BPCHAROID || (OidIsValid(element) && getBaseType(element) == BPCHAROID))
		return false;
	return holds_nondeterministic_bpchar(base, collation);
}

/* Refuses a type bloomidx_hash_breaks_equality says is hashed wrongly. */
static void
check_hashable_type(Relation index, int column, Oid type, Oid collation)
{
	/*
	 * The type is a user's composite, range or domain (or an array of one);
	 * its name is given qualified, as CREATE INDEX may run under a search
	 * path of its own (pg_catalog only, from PostgreSQL 17).
	 */
	if (bloomidx_hash_breaks_equality(type, collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloomidx cannot hash type %s in column %d of index \"%s\"",
						format_type_be_qualified(type), column + 1, RelationGetRelationName(index)),
				 errdetail(BLOOMIDX_HASH_BREAKS_EQUALITY_DETAIL),
				 errhint(BLOOMIDX_HASH_BREAKS_EQUALITY_HINT)));
}

/*
 * Refuses an array type whose elements have no extended hash function
 * (point[], xml[], an array of composites holding one), when the column's
 * hash function is hash_array_extended, which the array operator class
 * gives every array type: it fails on the first array it hashes, so that
 * an index built on an empty table would refuse every INSERT.  (A type
 * with no hash function of its own has no bloomidx operator class.)
 */
void
bloomidx_check_array_hashing(Oid hash_proc, Oid type)
{
	Oid			base = getBaseType(type);

	if (hash_proc == F_HASH_ARRAY_EXTENDED &&
		lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC)->hash_extended_proc !=
		F_HASH_ARRAY_EXTENDED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("bloomidx cannot hash type %s: its elements have no extended hash function",
						format_type_be_qualified(type)),
				 errdetail("An array is hashed by its elements' extended hash functions (hash_array_extended)."),
				 errhint("Index an array of a type that has a hash operator class.")));
}

/*
 * How a column of operator family `opfamily` under `collation` is hashed:
 * bloomidx::kHashByValue where every member of the family has a byte path
 * of one class, else kHashByFunction.
 */
static uint8
family_hashing(Oid opfamily, Oid collation)
{
	CatCList   *procs = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamily));
	ByteClass	common = BYTES_NONE;
	bool		by_value = true;

	for (int i = 0; i < procs->n_members; i++)
	{
		Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&procs->members[i]->tuple);

		if (proc->amprocnum != BLOOMIDX_HASH_PROC)
			continue;
		ByteClass	c = byte_class(proc->amproc, collation);

		if (c == BYTES_NONE || (common != BYTES_NONE && c != common))
			by_value = false;
		common = c;
	}
	ReleaseCatCacheList(procs);
	return by_value && common != BYTES_NONE ? bloomidx::kHashByValue : bloomidx::kHashByFunction;
}

/* How CREATE INDEX hashes column `column`: bloomidx::kHashByValue or kHashByFunction. */
uint8
bloomidx_column_hashing(Relation index, int column)
{
	Oid			collation = index->rd_indcollation[column];

	/* Once, at build: a column's type and collation live as long as the index. */
	Oid			type = TupleDescAttr(RelationGetDescr(index), column)->atttypid;

	check_hashable_type(index, column, type, collation);
	bloomidx_check_array_hashing(index_getprocid(index, column + 1, BLOOMIDX_HASH_PROC), type);
	return family_hashing(index->rd_opfamily[column], collation);
}

static void
init_hasher(ValueHasher *hasher, Oid hash_proc, Oid collation, int column, uint8 hashing)
{
	hasher->byte_class = (uint8) byte_class(hash_proc, collation);
	hasher->kind = hashing == bloomidx::kHashByValue ? byte_kind(hash_proc) : function_kind(hash_proc);
	hasher->collation = collation;
	hasher->seed = bloomidx::column_seed(column);
	fmgr_info(hash_proc, &hasher->proc);
}

/*
 * The hasher a build would give column `column` of an index whose column
 * has operator class `opclass` and collation `collation`, for
 * bloomidx_advise, which hashes a table's most common values as an index
 * on it would.
 */
void
bloomidx_opclass_hasher(ValueHasher *hasher, Oid opclass, Oid collation, int column)
{
	Oid			family = get_opclass_family(opclass);
	Oid			type = get_opclass_input_type(opclass);
	Oid			proc = get_opfamily_proc(family, type, type, BLOOMIDX_HASH_PROC);

	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator class with OID %u has no hash support function", opclass)));
	init_hasher(hasher, proc, collation, column, family_hashing(family, collation));
}

/*
 * The hasher of a key of type key_type compared with column `column`: the
 * column's own, or one made in *scratch for a cross-type key; NULL when the
 * key cannot be hashed the way the column's values were (its type joined
 * the family after the build with another byte class), so that it must
 * test no bits.
 */
const ValueHasher *
bloomidx_key_hasher(Relation index, const BloomidxState *state, int column, Oid key_type,
					ValueHasher *scratch)
{
	const ValueHasher *own = &state->hasher[column];

	if (!OidIsValid(key_type) || key_type == index->rd_opcintype[column])
		return own;

	Oid			proc = get_opfamily_proc(index->rd_opfamily[column], key_type, key_type,
										 BLOOMIDX_HASH_PROC);

	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator family of column %d of index \"%s\" has no hash function for type %s",
						column + 1, RelationGetRelationName(index), format_type_be(key_type))));
	check_hashable_type(index, column, key_type, own->collation);
	uint8		hashing = state->meta.column_hashing[column];

	if (hashing == bloomidx::kHashByValue && byte_class(proc, own->collation) != own->byte_class)
		return NULL;

	/*
	 * The family may be one amvalidate rejects (nothing stops a user from
	 * building on it): the key's "=" must belong to a hash family that hashes
	 * both types with these functions.  And under a nondeterministic
	 * collation only one function can agree with itself: another type's
	 * (name's hashnameextended beside text's ICU sort keys) hashes bytes
	 * that compare equal apart.
	 */
	Oid			opcintype = index->rd_opcintype[column];
	Oid			opno = get_opfamily_member(index->rd_opfamily[column], opcintype, key_type,
										   BLOOMIDX_EQUAL_STRATEGY);
	bool		hashable;

	if (!OidIsValid(opno) ||
		!bloomidx_hash_family_agrees(opno, opcintype, key_type, own->proc.fn_oid, proc, &hashable) ||
		(OidIsValid(own->collation) && !is_deterministic(own->collation) && proc != own->proc.fn_oid))
		return NULL;
	init_hasher(scratch, proc, own->collation, column, hashing);
	return scratch;
}

/* The length of a char(n) payload without its trailing blanks (bcTruelen). */
static int
bpchar_true_length(const char *data, int len)
{
	while (len > 0 && data[len - 1] == ' ')
		len--;
	return len;
}

/* The hash function's answer for a char(n) value, given without its trailing blanks. */
static uint64
bpchar_function_hash(FmgrInfo *proc, Oid collation, Datum value)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
	int			len = VARSIZE_ANY_EXHDR(v);
	int			kept = bpchar_true_length(VARDATA_ANY(v), len);
	Datum		arg = PointerGetDatum(v);

	if (kept != len)
	{
		struct varlena *stripped = (struct varlena *) palloc(VARHDRSZ + kept);

		SET_VARSIZE(stripped, VARHDRSZ + kept);
		memcpy(VARDATA(stripped), VARDATA_ANY(v), kept);
		arg = PointerGetDatum(stripped);
	}
	uint64		h = DatumGetUInt64(FunctionCall2Coll(proc, collation, arg, Int64GetDatum(0)));

	if (arg != PointerGetDatum(v))
		pfree(DatumGetPointer(arg));
	if ((Pointer) v != DatumGetPointer(value))
		pfree(v);
	return h;
}

/*
 * An array's hash: hash_array_extended's, except for char(n) elements,
 * which go through bpchar_function_hash and are combined as it combines
 * its elements' hashes.
 */
static uint64
array_function_hash(const ValueHasher *hasher, Datum value)
{
	ArrayType  *array = DatumGetArrayTypeP(value);
	TypeCacheEntry *element = lookup_type_cache(ARR_ELEMTYPE(array),
												TYPECACHE_HASH_EXTENDED_PROC_FINFO);

	if (element->hash_extended_proc != F_HASHBPCHAREXTENDED)
		return DatumGetUInt64(FunctionCall2Coll((FmgrInfo *) &hasher->proc, hasher->collation,
												PointerGetDatum(array), Int64GetDatum(0)));

	ArrayIterator it = array_create_iterator(array, 0, NULL);
	uint64		result = 0;
	Datum		item;
	bool		isnull;

	while (array_iterate(it, &item, &isnull))
		result = (result << 5) - result +
			(isnull ? 0 : bpchar_function_hash(&element->hash_extended_proc_finfo,
											   hasher->collation, item));
	array_free_iterator(it);
	return result;
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
		case VALUE_BPCHAR_BYTES:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
				int			len = VARSIZE_ANY_EXHDR(v);

				if (hasher->kind == VALUE_BPCHAR_BYTES)
					len = bpchar_true_length(VARDATA_ANY(v), len);
				uint64		h = bloomidx::hash_bytes(VARDATA_ANY(v), len, hasher->seed);

				if ((Pointer) v != DatumGetPointer(value))
					pfree(v);
				return h;
			}
		case VALUE_BPCHAR_FUNCTION:
			return bloomidx::hash_int((int64) bpchar_function_hash((FmgrInfo *) &hasher->proc,
																	hasher->collation, value),
									  hasher->seed);
		case VALUE_ARRAY_FUNCTION:
			return bloomidx::hash_int((int64) array_function_hash(hasher, value), hasher->seed);
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
	state->geometry = bloomidx::meta_row_geometry(state->meta);
	state->ncolumns = state->meta.ncolumns;
	state->filter_bits_per_key = 0;	/* only what writes segments asks */

	for (int i = 0; i < state->ncolumns; i++)
	{
		Oid			proc = index_getprocid(index, i + 1, BLOOMIDX_HASH_PROC);

		if (!OidIsValid(proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("operator class of column %d of index \"%s\" has no hash support function",
							i + 1, RelationGetRelationName(index))));
		init_hasher(&state->hasher[i], proc, index->rd_indcollation[i], i,
					state->meta.column_hashing[i]);
		/* Frozen as a byte path, which the column's own type must have. */
		if (state->meta.column_hashing[i] == bloomidx::kHashByValue &&
			state->hasher[i].byte_class == BYTES_NONE)
			bloomidx_report_page_problem(index, bloomidx::kMetaBlock,
										 bloomidx::PageProblem::BadOptions);
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
						const bool *isnull, uint8 *signature, uint32 *keys)
{
	uint32		m = state->meta.signature_bits;
	uint64		h[INDEX_MAX_KEYS];

	for (int i = 0; i < state->ncolumns; i++)
		h[i] = column_hash(state, i, values, isnull);
	if (keys != NULL)
		for (int i = 0; i < state->ncolumns; i++)
			keys[i] = bloomidx::filter_key(h[i]);
	if (m <= bloomidx::kShortLength)
	{
		/* The whole row in four words: the columns' walks overlap. */
		uint64		words[4] = {0, 0, 0, 0};

		for (int i = 0; i < state->ncolumns; i++)
			bloomidx::add_value_short(words, m, state->meta.column_bits[i], h[i]);
		bloomidx::or_short_words(signature, words, m);
		return;
	}
	for (int i = 0; i < state->ncolumns; i++)
		bloomidx::add_value(signature, m, state->meta.column_bits[i], h[i]);
}

/*
 * Whether one of PostgreSQL's hash operator families that holds opno as
 * its equality hashes lefttype with left_proc and righttype with
 * right_proc (its support function 2, the extended hash): then equal
 * values of the two types hash alike through them.  *hashable says whether
 * any hash family holds opno.  Also used by scans, for cross-type keys.
 */
bool
bloomidx_hash_family_agrees(Oid opno, Oid lefttype, Oid righttype, Oid left_proc,
							Oid right_proc, bool *hashable)
{
	CatCList   *memberships = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(opno));
	bool		agree = false;

	*hashable = false;
	for (int i = 0; i < memberships->n_members && !agree; i++)
	{
		Form_pg_amop member = (Form_pg_amop) GETSTRUCT(&memberships->members[i]->tuple);

		if (member->amopmethod != HASH_AM_OID || member->amopstrategy != HTEqualStrategyNumber)
			continue;
		*hashable = true;
		agree = bloomidx_canonical_hash_proc(get_opfamily_proc(member->amopfamily, lefttype,
															   lefttype, HASHEXTENDED_PROC)) ==
			bloomidx_canonical_hash_proc(left_proc) &&
			bloomidx_canonical_hash_proc(get_opfamily_proc(member->amopfamily, righttype,
														   righttype, HASHEXTENDED_PROC)) ==
			bloomidx_canonical_hash_proc(right_proc);
	}
	ReleaseCatCacheList(memberships);
	return agree;
}
