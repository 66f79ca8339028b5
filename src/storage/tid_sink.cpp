/*
 * tid_sink.cpp: where a scan's TIDs go.  Each is checked against the
 * table before it reaches the bitmap, and they are added in batches of
 * TID_BATCH, marked recheck (a Bloom signature only says "maybe").
 */
#include "storage/storage.h"

/*
 * Adds a TID that entry `entry` of block blkno holds.  A damaged TID must
 * not reach the bitmap (which rejects a bad offset without naming the
 * index) or the heap (a block past its end).  The table may have grown
 * since the scan began: a concurrent insert's row is past the length read
 * then.
 */
void
bloomidx_sink_add(Relation index, TidSink *sink, BlockNumber blkno, uint32 entry,
				  const ItemPointerData *tid)
{
	OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(tid);
	BlockNumber target = ItemPointerGetBlockNumberNoCheck(tid);

	if (target >= sink->heap_blocks)
		sink->heap_blocks = RelationGetNumberOfBlocks(sink->heap);
	if (offset == InvalidOffsetNumber || offset > MaxHeapTuplesPerPage ||
		target >= sink->heap_blocks)
		bloomidx_report_corrupted_page(index, blkno,
									   psprintf("Entry %u holds an invalid heap TID.", entry));
	sink->tids[sink->n++] = *tid;
	if (sink->n == TID_BATCH)
		bloomidx_sink_flush(sink);
}

void
bloomidx_sink_flush(TidSink *sink)
{
	if (sink->n > 0)
		tbm_add_tuples(sink->tbm, sink->tids, sink->n, true);
	sink->found += sink->n;
	sink->n = 0;
}
