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

static bool
options_differ(Relation index)
{
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	uint16		signature_bits;
	uint16		column_bits[INDEX_MAX_KEYS];

	/* Also rejects a new colN larger than the new length. */
	bloomidx_options_for_build(index, &signature_bits, column_bits);
	if (signature_bits != meta->signature_bits)
		return true;
	for (int i = 0; i < meta->ncolumns; i++)
		if (column_bits[i] != meta->column_bits[i])
			return true;
	return false;
}

static void
alter_notice_hook(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (previous_hook)
		previous_hook(access, classId, objectId, subId, arg);
	if (access != OAT_POST_ALTER || classId != RelationRelationId || subId != 0)
		return;

	/* Make the new pg_class row (and its reloptions) visible. */
	CommandCounterIncrement();

	Relation	rel = RelationIdGetRelation(objectId);

	if (!RelationIsValid(rel))
		return;
	bool		ours = rel->rd_rel->relkind == RELKIND_INDEX &&
		rel->rd_indam != NULL && rel->rd_indam->ambuild == bloomidx_build;

	if (ours && options_differ(rel))
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
