// The heap TIDs of a sealed segment, compressed with random access.
//
// A segment's rows are numbered 0..n-1 (row r is bit r of every slice);
// a scan wants the TIDs of its few candidate rows only, so the TIDs are
// stored in groups of kTidGroupRows consecutive rows, each group decodable
// on its own: its first TID whole (6 bytes), then for the next rows
// varints relative to the row before:
//   a run of k >= kTidMinRun rows, each in the same heap block at the
//   offset after the row before's:  code = 0, then varint(k - kTidMinRun)
//   one row, same heap block, offset up by d (d >= 1):  code = d << 1
//   otherwise:  code = (zigzag(block delta) << 1) | 1, then varint(offset)
// The encoder writes every run of kTidMinRun rows or more as one (a
// shorter one as single steps); the decoder takes any spelling of the same
// TIDs (a run split in two, or written as steps, as format 18 did).  A
// change to the codes is a change of the on-disk format (kMetaVersion).
// A build's rows come in heap order, where most steps are "same block,
// offset + 1" and a new block costs two or three bytes: a group of 64 rows
// of a table loaded in one go takes 8 to 12 bytes at 64 rows a heap page
// or more (one or two runs; format 18 wrote a byte a row, 70 to 80), a
// byte a row or more at 4 rows a page, and a byte or two more for each
// gap deleted or updated rows left; rows sealed from pending pages may
// come in any order and cost more, never more than tid_group_bound().
//
// Where each group starts (a page and an offset) is the segment's
// business (segment format); the codec sees one group's bytes.  Decoding
// checks the bytes' structure (every code complete, offsets in range, the
// group's bytes used exactly), so damage mostly shows as an error rather
// than wrong TIDs; the entry sums of the segment catch the rest.
// Allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bloomidx {

// Bytes a build's TID takes, about, in a table of rows_per_page rows a
// heap page (its tuples over its pages; below 1, 1): each group's head and
// first run, then for each heap block it reaches a block step (two bytes)
// and its rows' run (two bytes; one a row under kTidMinRun).  Measured on
// whole segments: 0.149 a row at 157 rows a page (this gives 0.15), 0.188
// at 60 (0.19), 1.06 to 1.18 at 4 (1.13), 2.06 at 1 (2.13); gaps deleted
// or updated rows leave cost more (0.40 at 157 with one row in 10 gone).
double typical_tid_bytes(double rows_per_page) noexcept;

struct HeapTid {
    uint32_t block;
    uint16_t offset; // 1-based, as PostgreSQL's OffsetNumber
};

constexpr uint32_t kTidGroupRows = 64;

// The fewest rows a run code holds: it takes two bytes, a row's step one.
constexpr uint32_t kTidMinRun = 3;

// Offsets a heap page can hold, at most (8 kB pages: an item pointer takes
// 4 bytes).  Offsets outside 1..kMaxHeapOffset are damage.
constexpr uint16_t kMaxHeapOffset = 2048;

// Bytes a group of n TIDs takes at most: 6 for the first, then for each
// other a 5-byte code (a 33-bit zigzagged block delta and the flag bit)
// and a 2-byte offset.
constexpr size_t tid_group_bound(uint32_t n)
{
    return n == 0 ? 0 : 6 + static_cast<size_t>(n - 1) * 7;
}

// Encodes tids[0..n) (1 <= n <= kTidGroupRows, offsets in 1..kMaxHeapOffset)
// into out[0..cap); returns the bytes written, or 0 if n or a TID is out of
// range or cap is too small.
size_t tid_group_encode(const HeapTid *tids, uint32_t n, uint8_t *out, size_t cap) noexcept;

// Decodes a group of n TIDs from exactly in[0..size) into out[0..n);
// false if the bytes are not such a group (damage).
bool tid_group_decode(const uint8_t *in, size_t size, uint32_t n, HeapTid *out) noexcept;

} // namespace bloomidx
