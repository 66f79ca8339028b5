/*
 * index_info.cpp: what the metapage tells of an index, for users and tests:
 * bloomidx_index_info(index regclass), like GIN's gin_metapage_info or
 * pgstatindex: its format version, its segments and their rows, its
 * pending pages and their rows.  Like pg_relation_size, it takes only an
 * AccessShareLock on the index (and share locks on one page at a time)
 * and needs no privilege: it reveals sizes, not values.
 */
#include "functions/functions.h"

extern "C" {
#include "funcapi.h"

PG_FUNCTION_INFO_V1(bloomidx_index_info);
}

Datum
bloomidx_index_info(PG_FUNCTION_ARGS)
{
	Oid			indexoid = bloomidx_index_argument(fcinfo, "bloomidx_index_info");
	TupleDesc	tupdesc = bloomidx_result_row_type(fcinfo, "bloomidx_index_info");
	Relation	index = bloomidx_open_metapage_reader(indexoid, "pages", AccessShareLock);
	const bloomidx::MetaPageData *meta = bloomidx_cached_meta(index);
	bloomidx::RowPageGeometry g = bloomidx::meta_row_geometry(*meta);
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	DirectoryCopy *dir = bloomidx_directory_copy_new();
	Buffer		buffer;

	int64		segment_rows;
	int64		live_rows;
	int64		pending_rows;
	int32		pending_pages;
	int32		filtered;
	bool		again;

	/*
	 * The directory copied, then the pending list as it is now (pages
	 * linked since the copy included); copied again when a seal or VACUUM
	 * reused a page of the list meanwhile (a seal frees the pages it
	 * sealed), as a scan does, rather than reporting the reused page as
	 * damage.
	 */
	do
	{
		again = false;
		segment_rows = live_rows = pending_rows = 0;
		pending_pages = filtered = 0;
		nblocks = RelationGetNumberOfBlocks(index);
		bloomidx_read_directory(index, &nblocks, dir);
		for (uint32 i = 0; i < dir->header.nsegments; i++)
		{
			segment_rows += dir->entries[i].rows;
			live_rows += dir->entries[i].live_rows;
			filtered += dir->entries[i].filter_block != 0;
		}

		PendingWalk walk;

		bloomidx_pending_walk_init(&walk, index, dir->header.pending_head, nblocks);
		while (bloomidx_pending_walk_more(&walk))
		{
			CHECK_FOR_INTERRUPTS();
			buffer = ReadBuffer(index, walk.blkno);
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
			if (bloomidx_pending_page_recycled(index, walk.blkno, &buffer, dir->header.generation, &g))
			{
				again = true;
				break;
			}
			Page		page = BufferGetPage(buffer);

			bloomidx_check_data_page(index, walk.blkno, page, &g, bloomidx::EntryChecks::None);
			pending_rows += bloomidx::page_opaque((const uint8 *) page)->count;
			pending_pages++;
			bloomidx_pending_walk_follow(&walk, bloomidx::pending_next((const uint8 *) page));
			UnlockReleaseBuffer(buffer);
		}
	} while (again);

	/* A seal meanwhile (the generation moved) shortens the list: no damage. */
	(void) bloomidx_check_pending_count(index, dir, (uint32) pending_pages);

	Datum		values[8];
	bool		nulls[8] = {false, false, false, false, false, false, false, false};

	values[0] = Int32GetDatum(meta->version);
	values[1] = Int32GetDatum((int32) dir->header.nsegments);
	values[2] = Int64GetDatum(segment_rows);
	values[3] = Int64GetDatum(live_rows);
	values[4] = Int32GetDatum(pending_pages);
	values[5] = Int64GetDatum(pending_rows);
	values[6] = Int64GetDatum((int64) dir->header.generation);
	values[7] = Int32GetDatum(filtered);
	bloomidx_directory_copy_free(dir);
	relation_close(index, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
