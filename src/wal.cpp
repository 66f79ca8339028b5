/*
 * wal.cpp: WAL records the glue writes itself.
 *
 * Every page change is Generic WAL.  Most go through generic_xlog.c's API,
 * which finds what changed by comparing each registered page before and
 * after, byte by byte over every used byte: cheap for a seal or a VACUUM,
 * which change much of a page, but for an append of one row to a pending
 * page it was half an INSERT's time (perf; contrib/bloom pays the same).
 * An append knows the few bytes it changes (core/page_delta.hpp), so its
 * record is written here: an RM_GENERIC_ID record in Generic WAL's delta
 * format, which generic_redo replays like any other and
 * wal_consistency_checking = 'generic' checks like any other.
 */
#include "bloomidx.h"

#include "core/page_delta.hpp"

/* Room for an append's delta: its ranges, the longest signature among them. */
static constexpr uint32 APPEND_DELTA_ROOM =
	bloomidx::page_delta_size(bloomidx::kAppendRanges,
							  2 * sizeof(uint16) + bloomidx::kMaxSignatureBits / 8 +
							  bloomidx::kTidSize + sizeof(bloomidx::PageOpaque));

/*
 * Appends one entry to the pending page in `buffer` (exclusively locked,
 * with room: the caller checked) and WAL-logs the bytes it changed.
 */
void
bloomidx_append_logged(Relation index, Buffer buffer, const bloomidx::RowPageGeometry *g,
					   const uint8 *signature, const uint8 *tid)
{
	uint8	   *page = (uint8 *) BufferGetPage(buffer);
	bloomidx::PageRange ranges[bloomidx::kAppendRanges];
	uint8		delta[APPEND_DELTA_ROOM];
	bool		needs_wal = RelationNeedsWAL(index);

	bloomidx::row_page_append_ranges(*g, bloomidx::page_opaque(page)->count, ranges);
	if (bloomidx::page_delta_size(bloomidx::kAppendRanges,
								  g->signature_bytes + 2 * sizeof(uint16) + bloomidx::kTidSize +
								  sizeof(bloomidx::PageOpaque)) > sizeof delta)
		elog(ERROR, "bloomidx: signatures of %u bytes are longer than an append's WAL record allows",
			 g->signature_bytes);

	START_CRIT_SECTION();
	bloomidx::row_page_append(page, *g, signature, tid);
	MarkBufferDirty(buffer);
	if (needs_wal)
	{
		uint32		len PG_USED_FOR_ASSERTS_ONLY = bloomidx::write_page_delta(page, ranges, bloomidx::kAppendRanges,
													 delta, sizeof delta);

		Assert(len > 0);
		XLogBeginInsert();
		XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) delta, len);
		XLogRecPtr	lsn = XLogInsert(RM_GENERIC_ID, 0);

		PageSetLSN((Page) page, lsn);	/* a macro that reads its argument twice */
	}
	END_CRIT_SECTION();
}
