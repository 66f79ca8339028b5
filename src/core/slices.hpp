// Bit slices: the signatures of a segment's rows, transposed.  Slice j
// holds bit j of every row (row r at word r / 64, bit r % 64), so a query
// that tests s bit positions reads s slices, not whole signatures.
//
// A query is an AND of slices (its equality keys' positions), ANDed with
// each of its IN lists, each an OR of its elements' ANDs, and with the
// `live` words given (all ones, where the caller ANDs the segment's live
// bits once rows are left).  It is evaluated one cache line (512 rows) at a
// time: a line already zero is dropped before the next slice is read, so
// once the running AND is sparse (after a few slices at fill 1/4) the
// remaining slices are barely touched.  Allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bloomidx {

constexpr uint32_t kSliceLineWords = 8;                      // 64 bytes
constexpr uint32_t kSliceLineRows = 64 * kSliceLineWords;    // 512
constexpr uint32_t kSliceLines = 127;                        // 8,128 bytes on an 8 kB page
constexpr uint32_t kSliceWords = kSliceLines * kSliceLineWords;
constexpr uint32_t kSegmentRows = kSliceLines * kSliceLineRows; // 65,024

// The cache lines that hold rows [0, rows) of a slice.
constexpr uint32_t slice_lines(uint32_t rows) noexcept
{
    return (rows + kSliceLineRows - 1) / kSliceLineRows;
}

// Sets, in slices[j] (kSliceWords words each, zeroed by the caller), bit r
// of every row r in [0, nrows) whose signature (sig_bytes bytes at
// signatures + r * stride, bit j at byte j / 8, position j % 8) has bit j
// set, for j < nslices.  nrows <= kSegmentRows.
void transpose_signatures(const uint8_t *signatures, size_t stride, uint32_t nrows,
                          uint32_t sig_bytes, uint32_t nslices, uint64_t *const *slices) noexcept;

// The way back, one slice at a time: sets bit j (slice) of signature
// slot[r] (sig_bytes bytes each at signatures) for each row r set in both
// words and live (the lines that hold rows [0, nrows) are read: a packed
// slice's, or a page's).  Returns false, setting nothing
// more, if words sets a live row at or past nrows: a damaged slice.
bool untranspose_slice(const uint64_t *words, const uint64_t *live, uint32_t nrows,
                       uint32_t slice, const uint32_t *slot, uint8_t *signatures,
                       uint32_t sig_bytes) noexcept;

// Adds 1 to counts[r] for each row r set in both words and mask (the
// lines that hold rows [0, nrows), as untranspose_slice reads them): over
// every slice, each row's signature's bits set, without putting the
// signature back together.  Returns false, counting nothing more, if words
// sets a masked row at or past nrows: a damaged slice.
bool count_slice_bits(const uint64_t *words, const uint64_t *mask, uint32_t nrows,
                      uint16_t *counts) noexcept;

// The slices that one value (or one IN-list element) tests: an AND.
struct SliceAnd {
    const uint64_t *const *slices;
    uint32_t count; // 0: every row passes
};

// An IN list: a row passes if it passes any element's AND.
struct SliceOr {
    const SliceAnd *elements;
    uint32_t count; // 0: no row passes (an empty list)
};

// out[0..kSliceWords) = live & AND(base) & every list's OR, over the lines
// that hold rows [0, nrows) (later words are set to 0).  Returns the number
// of candidate rows (bits set in out).
uint32_t match_slices(const SliceAnd &base, const SliceOr *lists, uint32_t nlists,
                      const uint64_t *live, uint32_t nrows, uint64_t *out) noexcept;

// Writes the row numbers of the bits set in words[0..kSliceWords), in
// order, to rows (room for every one); returns how many.
uint32_t candidate_rows(const uint64_t *words, uint32_t *rows) noexcept;

} // namespace bloomidx
