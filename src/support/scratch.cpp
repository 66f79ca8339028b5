/*
 * scratch.cpp: the memory a scan reuses from one query to the next.
 *
 * A scan's arrays grow with the index's segments: its directory copy (32
 * bytes a segment), the filter scan's group order and slot sets (38 more),
 * beside its per-segment work (47 kB whatever the index): 210 kB at 1,953
 * segments.  Made in the query's memory and freed at its end, they went
 * back to the kernel after every query once they passed 128 kB: glibc
 * gives the heap's top back past that, a brk call whose TLB flush reaches
 * every CPU the backend has run on.  A 2-column lookup over 1,953
 * segments took 0.26 ms here, 0.6 while another process kept the other
 * CPU busy, of which the trim was half or more (perf; 0.13 ms without it).
 * So a backend keeps them in TopMemoryContext, each grown to the most it
 * was asked for, a quarter more, and reuses them: about 200 kB after an
 * index of 100 M rows, 3 MB at the format's 32,228 segments, and up to
 * SCRATCH_MAX_BYTES more of IN list masks (larger ones are the query's).
 *
 * One set serves every scan: a backend runs one amgetbitmap call at a
 * time (a scan's bitmap is made whole in one call, and nothing in it that
 * runs after the query's keys are hashed starts another scan), so memory
 * from here is the caller's between bloomidx_scan_scratch_begin and _end,
 * and is neither kept past it nor freed.  Begin checks that no call holds
 * it: a nested one would share the buffers silently otherwise.  An ERROR
 * in the call leaves the buffers as they were, for the next, and the
 * transaction's or subtransaction's abort lets go of them.  They live in
 * a context of their own under TopMemoryContext ("bloomidx scan scratch",
 * seen in pg_backend_memory_contexts).
 */
#include "support/support.h"

extern "C" {
#include "access/xact.h"
}

typedef struct ScratchBuffer
{
	void	   *memory;
	Size		bytes;
} ScratchBuffer;

static ScratchBuffer scratch[SCRATCH_COUNT];
static MemoryContext scratch_cxt = NULL;
static bool scratch_busy = false;

/*
 * Let go at abort (a scan that failed); at commit a scan still holding it
 * is a leak (a path out of amgetbitmap that missed _end): warned, as
 * core warns of leaked buffer pins, and let go, so that it cannot refuse
 * every later scan of this backend.
 */
static void
scratch_xact_end(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			scratch_busy = false;
			break;
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (scratch_busy)
				elog(WARNING, "bloomidx: a scan's memory was not let go before commit");
			scratch_busy = false;
			break;
		default:
			break;
	}
}

static void
scratch_abort_subxact(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		scratch_busy = false;
}

/* The scratch is the caller's until bloomidx_scan_scratch_end. */
void
bloomidx_scan_scratch_begin(void)
{
	if (scratch_cxt == NULL)
	{
		scratch_cxt = AllocSetContextCreate(TopMemoryContext, "bloomidx scan scratch",
											ALLOCSET_SMALL_SIZES);
		RegisterXactCallback(scratch_xact_end, NULL);
		RegisterSubXactCallback(scratch_abort_subxact, NULL);
	}
	if (scratch_busy)
		elog(ERROR, "bloomidx: a scan's memory is already in use by another scan in this backend");
	scratch_busy = true;
}

void
bloomidx_scan_scratch_end(void)
{
	scratch_busy = false;
}

void *
bloomidx_scan_scratch(ScanScratch which, Size bytes)
{
	ScratchBuffer *b = &scratch[which];

	Assert(which >= 0 && which < SCRATCH_COUNT);
	if (!scratch_busy)
		elog(ERROR, "bloomidx: scan memory asked for outside a scan");
	if (bytes > SCRATCH_MAX_BYTES)
		elog(ERROR, "bloomidx: %zu bytes of scan memory asked for, more than its %zu",
			 (size_t) bytes, (size_t) SCRATCH_MAX_BYTES);
	if (b->bytes < bytes || b->memory == NULL)
	{
		if (b->memory != NULL)
			pfree(b->memory);
		b->memory = NULL;
		b->bytes = 0;
		/* Some room to grow, so that an index growing by a segment at a time is not copied each time. */
		Size		want = Min(Max(bytes + bytes / 4, (Size) 1024), (Size) SCRATCH_MAX_BYTES);

		b->memory = MemoryContextAlloc(scratch_cxt, want);
		b->bytes = want;
	}
	return b->memory;
}
