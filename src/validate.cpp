/*
 * validate.cpp: amvalidate, run by the opclass checks (and by users who
 * write their own opclass): strategy 1 is "=", support function 1 is a
 * 64-bit hash (type, int8) -> int8 for each type of the family.  As for
 * PostgreSQL's hash operator classes (hashvalidate), every type of every
 * operator needs a hash function, and more: since a key of one type must
 * set the bits that an equal value of the column's type set, each "=" must
 * belong to a hash operator family that hashes both its types with the
 * functions given here (a family whose functions disagree would answer
 * wrongly, so it is reported instead).
 */
#include "bloomidx.h"

extern "C" {
#include "access/hash.h"
}

/*
 * PostgreSQL hashes a few types with the function of another type of the
 * same representation (bool with hashcharextended, date with
 * hashint4extended...), whose argument type the opclass type does not
 * coerce to; its hash opclasses' amvalidate (hashvalidate) accepts exactly
 * these pairs, and so does ours.
 */
static bool
borrowed_hash_function(Oid funcid, Oid type)
{
	switch (funcid)
	{
		case F_HASHINT4EXTENDED:
			return type == DATEOID || type == XIDOID || type == CIDOID;
		case F_HASHINT8EXTENDED:
			return type == XID8OID;
		case F_TIMESTAMP_HASH_EXTENDED:
			return type == TIMESTAMPTZOID;
		case F_HASHCHAREXTENDED:
			return type == BOOLOID;
		case F_HASHVARLENAEXTENDED:
			return type == BYTEAOID;
		default:
			return false;
	}
}

/* Whether proc can be support function 1 of type: (type, int8) -> int8. */
static bool
hash_signature_ok(Oid proc, Oid type)
{
	return check_amproc_signature(proc, INT8OID, false, 2, 2, type, INT8OID) ||
		borrowed_hash_function(proc, type);
}

static bool
check_procedures(CatCList *procs, const char *family, Oid opcintype, bool *has_hash)
{
	bool		ok = true;

	for (int i = 0; i < procs->n_members; i++)
	{
		Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&procs->members[i]->tuple);

		if (proc->amprocnum != BLOOMIDX_HASH_PROC)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains function %s with invalid support number %d",
							family, format_procedure(proc->amproc), proc->amprocnum)));
			ok = false;
			continue;
		}
		if (proc->amproclefttype != proc->amprocrighttype ||
			!hash_signature_ok(proc->amproc, proc->amproclefttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains function %s with wrong signature for support number %d",
							family, format_procedure(proc->amproc), proc->amprocnum),
					 errhint("Support function 1 takes (type, int8) and returns int8, like hashint4extended.")));
			ok = false;
			continue;
		}
		if (proc->amproclefttype == opcintype)
			*has_hash = true;
	}
	return ok;
}

/* The family's support function 1 for type, or InvalidOid. */
static Oid
family_hash_proc(CatCList *procs, Oid type)
{
	for (int i = 0; i < procs->n_members; i++)
	{
		Form_pg_amproc proc = (Form_pg_amproc) GETSTRUCT(&procs->members[i]->tuple);

		if (proc->amprocnum == BLOOMIDX_HASH_PROC && proc->amproclefttype == type &&
			proc->amprocrighttype == type)
			return proc->amproc;
	}
	return InvalidOid;
}

/*
 * Checks that operator op of the family is an equality whose two types the
 * family hashes as one of PostgreSQL's hash operator families holding op
 * does (its support function 2, the extended hash).  A missing or malformed
 * function of the class's own type is reported by the caller already.
 */
static bool
check_operator_hashing(Form_pg_amop op, CatCList *procs, const char *family, Oid opcintype)
{
	Oid			types[2] = {op->amoplefttype, op->amoprighttype};
	Oid			ours[2];
	bool		ok = true;

	for (int t = 0; t < 2; t++)
	{
		ours[t] = family_hash_proc(procs, types[t]);
		if (OidIsValid(ours[t]) && hash_signature_ok(ours[t], types[t]))
			continue;
		ok = false;
		if (!OidIsValid(ours[t]) && types[t] != opcintype && (t == 0 || types[1] != types[0]))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" lacks support function 1 for type %s, which operator %s needs",
							family, format_type_be(types[t]), format_operator(op->amopopr))));
		}
	}
	if (!ok)
		return false;

	bool		hashable;
	bool		agree = bloomidx_hash_family_agrees(op->amopopr, types[0], types[1], ours[0], ours[1],
													&hashable);

	if (!hashable)
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("operator %s of bloomidx operator family \"%s\" is not an equality that PostgreSQL can hash",
						format_operator(op->amopopr), family),
				 errdetail("No hash operator family contains it."),
				 errhint("Strategy 1 must be the \"=\" of a hash operator class.")));
	else if (!agree)
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator family \"%s\" hashes the types of operator %s with other functions than PostgreSQL's hash operator family for it",
						family, format_operator(op->amopopr)),
				 errdetail("Here: %s for %s and %s for %s.",
						   format_procedure(ours[0]), format_type_be(types[0]),
						   format_procedure(ours[1]), format_type_be(types[1])),
				 errhint("Use the extended hash functions (support function 2) of the hash operator family that contains the operator.")));
	return hashable && agree;
}

static bool
check_operators(CatCList *operators, CatCList *procs, const char *family, Oid opcintype,
				bool *has_equal)
{
	bool		ok = true;

	for (int i = 0; i < operators->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&operators->members[i]->tuple);

		if (op->amopstrategy != BLOOMIDX_EQUAL_STRATEGY)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains operator %s with invalid strategy number %d",
							family, format_operator(op->amopopr), op->amopstrategy)));
			ok = false;
		}
		else if (op->amoppurpose != AMOP_SEARCH || OidIsValid(op->amopsortfamily))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains invalid ORDER BY specification for operator %s",
							family, format_operator(op->amopopr))));
			ok = false;
		}
		else if (!check_amop_signature(op->amopopr, BOOLOID, op->amoplefttype, op->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomidx operator family \"%s\" contains operator %s with wrong signature",
							family, format_operator(op->amopopr))));
			ok = false;
		}
		else
		{
			if (!check_operator_hashing(op, procs, family, opcintype))
				ok = false;
			if (op->amoplefttype == opcintype && op->amoprighttype == opcintype)
				*has_equal = true;
		}
	}
	return ok;
}

static char *
family_name(Oid family_oid)
{
	HeapTuple	tuple = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(family_oid));

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for operator family %u", family_oid);
	char	   *name = pstrdup(NameStr(((Form_pg_opfamily) GETSTRUCT(tuple))->opfname));

	ReleaseSysCache(tuple);
	return name;
}

bool
bloomidx_validate(Oid opclassoid)
{
	HeapTuple	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));

	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	Form_pg_opclass opclass = (Form_pg_opclass) GETSTRUCT(classtup);
	Oid			family_oid = opclass->opcfamily;
	Oid			opcintype = opclass->opcintype;
	const char *opclass_name = NameStr(opclass->opcname);
	const char *family = family_name(family_oid);
	CatCList   *operators = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(family_oid));
	CatCList   *procs = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(family_oid));
	bool		has_hash = false;
	bool		has_equal = false;
	bool		ok = check_procedures(procs, family, opcintype, &has_hash);

	ok = check_operators(operators, procs, family, opcintype, &has_equal) && ok;
	if (!has_equal)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" is missing the = operator for its type %s",
						opclass_name, format_type_be(opcintype))));
		ok = false;
	}
	if (!has_hash)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomidx operator class \"%s\" is missing support function 1 (a 64-bit hash of %s)",
						opclass_name, format_type_be(opcintype))));
		ok = false;
	}

	ReleaseCatCacheList(procs);
	ReleaseCatCacheList(operators);
	ReleaseSysCache(classtup);
	return ok;
}
