/*
 * wal.cpp: WAL records the glue writes itself.
 *
 * Every page change is Generic WAL.  Most go through generic_xlog.c's API,
 * which finds what changed by comparing each registered page before and
 * after, byte by byte over every used byte: cheap for a seal or a VACUUM,
 * which change much of a page, but for an append of one row to a pending
 * page it was half an INSERT's time (perf; contrib/bloom pays the same).
 * An append knows the few bytes it changes (core/page_delta.hpp), so its
 * record is written here, as is a pending group's slots' (a few blocks in
 * each of its 20 to 40 region pages, which generic_xlog.c's comparison
 * made a third of a bulk INSERT's time where every filled page gets its
 * slot): an RM_GENERIC_ID record in Generic WAL's delta
 * format, which generic_redo replays like any other and
 * wal_consistency_checking = 'generic' checks like any other.
 */
#include "support/support.h"

#include "core/page_delta.hpp"

/* Room for an append's delta, with the longest signature and every filter key. */
#define APPEND_DELTA_ROOM \
	bloomidx::append_delta_size(bloomidx::row_page_geometry( \
		bloomidx::signature_bytes(bloomidx::kMaxSignatureBits), bloomidx::kMaxColumns))

/*
 * Appends one entry (its signature, and its tail: TID and filter keys) to
 * the pending page in `buffer` (exclusively locked, with room: the caller
 * checked) and WAL-logs the bytes it changed.
 */
void
bloomidx_append_logged(Relation index, Buffer buffer, const bloomidx::RowPageGeometry *g,
					   const uint8 *signature, const uint8 *tail)
{
	uint8	   *page = (uint8 *) BufferGetPage(buffer);
	bloomidx::PageRange ranges[bloomidx::kAppendRanges];
	const bloomidx::PageRange *range_list = ranges;
	const uint32 nranges = bloomidx::kAppendRanges;
	uint8		delta[APPEND_DELTA_ROOM];

	Assert(bloomidx::append_delta_size(*g) <= sizeof(delta));
	bloomidx::row_page_append_ranges(*g, bloomidx::page_opaque(page)->count, ranges);

	START_CRIT_SECTION();
	bloomidx::row_page_append(page, *g, signature, tail);
	MarkBufferDirty(buffer);
	bloomidx_log_page_ranges(index, &buffer, 1, &range_list, &nranges, delta, sizeof(delta));
	END_CRIT_SECTION();
}

/*
 * WAL-logs the changes of buffers[0 .. n) (n <= MAX_GENERIC_XLOG_PAGES),
 * each exclusively locked, changed and marked dirty by the caller within
 * its critical section, in no byte outside its ranges[k][0 .. nranges[k]),
 * as one Generic WAL record; room: n * room_a_page bytes the caller
 * allocated before it (BLOOMIDX_PAGE_DELTA_ROOM a page holds any ranges).
 * Nothing for a relation without WAL.
 */
void
bloomidx_log_page_ranges(Relation index, const Buffer *buffers, uint32 n,
						 const bloomidx::PageRange *const *ranges, const uint32 *nranges,
						 uint8 *room, Size room_a_page)
{
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0 && n <= MAX_GENERIC_XLOG_PAGES);
	if (!RelationNeedsWAL(index))
		return;
	Assert(room != NULL);
	XLogBeginInsert();
	for (uint32 k = 0; k < n; k++)
	{
		uint8	   *delta = room + (Size) k * room_a_page;
		uint32		len = bloomidx::write_page_delta((const uint8 *) BufferGetPage(buffers[k]),
													 ranges[k], nranges[k], delta, room_a_page);

		/* An empty delta would lose the change on replay, silently. */
		if (len == 0)
			elog(PANIC, "bloomidx: the WAL record of a change to index \"%s\" does not fit",
				 RelationGetRelationName(index));
		XLogRegisterBuffer((uint8) k, buffers[k], REGBUF_STANDARD);
		XLogRegisterBufData((uint8) k, (char *) delta, len);
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	/* Not PageSetLSN(page, XLogInsert(...)): in PostgreSQL 15 a macro that reads it twice. */
	for (uint32 k = 0; k < n; k++)
		PageSetLSN(BufferGetPage(buffers[k]), lsn);
}
