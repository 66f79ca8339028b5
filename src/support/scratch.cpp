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
 * time (a scan's bitmap is made whole in one call, and nothing in the call
 * starts another scan), so memory from here is the caller's until its
 * amgetbitmap call returns, and is neither kept past it nor freed.  An
 * ERROR in the call leaves it as it was, for the next.
 */
#include "support/support.h"

typedef struct ScratchBuffer
{
	void	   *memory;
	Size		bytes;
} ScratchBuffer;

static ScratchBuffer scratch[SCRATCH_COUNT];

void *
bloomidx_scan_scratch(ScanScratch which, Size bytes)
{
	ScratchBuffer *b = &scratch[which];

	Assert(which >= 0 && which < SCRATCH_COUNT);
	Assert(bytes <= SCRATCH_MAX_BYTES);
	if (b->bytes < bytes || b->memory == NULL)
	{
		if (b->memory != NULL)
			pfree(b->memory);
		b->memory = NULL;
		b->bytes = 0;
		/* Some room to grow, so that an index growing by a segment at a time is not copied each time. */
		Size		want = Min(Max(bytes + bytes / 4, (Size) 1024), (Size) SCRATCH_MAX_BYTES);

		b->memory = MemoryContextAlloc(TopMemoryContext, want);
		b->bytes = want;
	}
	return b->memory;
}
