// Page deltas in Generic WAL's format, written from known changed ranges.
//
// GenericXLogFinish finds what changed on a page by comparing the page
// before and after byte by byte, over every used byte: for an append of
// one row (about 20 bytes) to a pending page that comparison was half the
// time of an INSERT in perf, as it is for contrib/bloom.  An append knows
// the bytes it changes, so the glue writes its record itself, with
// RM_GENERIC_ID and the delta built here from those ranges; PostgreSQL's
// generic_redo replays it like any Generic WAL record.
//
// The format (generic_xlog.c, the same from PostgreSQL 9.6 to 18): for each
// changed range, its offset and length as 16-bit numbers in the machine's
// order, then its bytes.  Replay copies each range, then zeroes the hole
// between pd_lower and pd_upper, so a range in the hole is pointless; a
// hole left non-zero on the primary (GenericXLogFinish zeroes it, this
// record does not) is harmless: nothing reads it, full-page images leave
// it out, and wal_consistency_checking masks it.
#pragma once

#include <cstdint>

namespace bloomidx {

struct PageRange {
    uint16_t offset;
    uint16_t length;
};

// The delta for `ranges` of `page` into out (room bytes).  Returns its
// length, or 0 when a range leaves the page or out is too small.
uint32_t write_page_delta(const uint8_t *page, const PageRange *ranges, uint32_t n, uint8_t *out,
                          uint32_t room) noexcept;

// Bytes write_page_delta needs for n ranges of `bytes` bytes in all.
constexpr uint32_t page_delta_size(uint32_t n, uint32_t bytes)
{
    return n * 2 * sizeof(uint16_t) + bytes;
}

} // namespace bloomidx
