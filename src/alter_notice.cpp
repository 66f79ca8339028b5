/*
 * alter_notice.cpp: ALTER INDEX ... SET (length = ..., colN = ...) cannot
 * change an index whose signatures were made with the old settings, and
 * must not look as if it had.  The new options are stored (REINDEX builds
 * with them); meanwhile the index keeps answering with the options frozen
 * in its metapage, and the user is told.
 *
 * PostgreSQL calls the object-access hook after the catalog update; the
 * hook is installed by _PG_init, which has always run by then because
 * ALTER INDEX has opened the index through this access method.
 */
#include "bloomidx.h"

static object_access_hook_type previous_hook = NULL;

/* The signature length and bits the index's reloptions ask for. */
typedef struct AskedOptions
{
	uint16		signature_bits;
	uint16		column_bits[INDEX_MAX_KEYS];
} AskedOptions;

static bool
is_bloomidx_index(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_INDEX && rel->rd_indam != NULL &&
		rel->rd_indam->ambuild == bloomidx_build;
}

/* Reads rel's options; false when rel is not a bloomidx index. */
static bool
asked_options(Oid relid, AskedOptions *asked)
{
	Relation	rel = RelationIdGetRelation(relid);

	if (!RelationIsValid(rel))
		return false;
	bool		ours = is_bloomidx_index(rel);

	/* Also rejects a new colN larger than the new length. */
	if (ours)
		bloomidx_options_for_build(rel, &asked->signature_bits, asked->column_bits);
	RelationClose(rel);
	return ours;
}

static bool
same_options(const AskedOptions *a, const AskedOptions *b, int ncolumns)
{
	if (a->signature_bits != b->signature_bits)
		return false;
	for (int i = 0; i < ncolumns; i++)
		if (a->column_bits[i] != b->column_bits[i])
			return false;
	return true;
}

static void
alter_notice_hook(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (previous_hook)
		previous_hook(access, classId, objectId, subId, arg);
	if (access != OAT_POST_ALTER || classId != RelationRelationId || subId != 0)
		return;

	/* The relcache still has the options from before this command... */
	AskedOptions before;
	AskedOptions after;

	if (!asked_options(objectId, &before))
		return;
	/* ... until the new pg_class row is made visible. */
	CommandCounterIncrement();
	if (!asked_options(objectId, &after))
		return;

	Relation	rel = RelationIdGetRelation(objectId);
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(rel);
	AskedOptions built;

	built.signature_bits = meta->signature_bits;
	memcpy(built.column_bits, meta->column_bits, sizeof(built.column_bits));
	if (!same_options(&before, &after, meta->ncolumns) &&
		!same_options(&after, &built, meta->ncolumns))
		ereport(NOTICE,
				(errmsg("new options of bloomidx index \"%s\" take effect at its next REINDEX",
						RelationGetRelationName(rel)),
				 errdetail("Until then the index keeps the signature length and bits it was built with."),
				 errhint("Run REINDEX INDEX %s;",
						 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													RelationGetRelationName(rel)))));
	RelationClose(rel);
}

void
bloomidx_install_alter_notice(void)
{
	previous_hook = object_access_hook;
	object_access_hook = alter_notice_hook;
}
