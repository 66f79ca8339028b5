// The measured fill of an index's signatures (bloomidx_stats, functions/stats.cpp):
// how many of its m bits each row sets, tallied into a histogram of rows
// by bits set, and what that histogram implies for queries.
//
// The sizing model (sizing.hpp) assumes each column's value sets its bits
// distinct positions uniformly at random, columns independent.  Then a
// row's bits R are a random set, and, given |R| = k, a query value's b
// positions (distinct, uniform, independent of the row: the value is not
// the row's) all fall on R with chance C(k, b) / C(m, b).  The rate an
// index's rows imply for a one-column query is that chance averaged over
// its rows, which only the histogram of |R| decides: the model's rate is
// the same average over the distribution of |R| it predicts, so the two
// agree while the rows are what the sizing expected, and part when they
// are not (a damaged or misbuilt index, another hashing).
//
// Per-row counts of a sealed segment come from its bit slices, one slice
// at a time (the rows' signatures are never put back together): a
// counter per row, a segment's capacity of them at most.  Allocates
// nothing.
#pragma once

#include <cstdint>

namespace bloomidx {

// Bits [0, m) of a signature (bit i at byte i / 8, position i % 8) that
// are set: bits past m, which a sound signature never sets, do not count,
// so the result is at most m.
uint32_t signature_fill(const uint8_t *sig, uint32_t m) noexcept;

// One slice of a segment added to its rows' counts: counts[r] += 1 for
// every row r < nrows (nrows <= kSegmentRows) whose bit is set in both
// words and live (kSliceWords words each, row r at word r / 64, bit r % 64).
void add_slice_counts(const uint64_t *words, const uint64_t *live, uint32_t nrows,
                      uint16_t *counts) noexcept;

// histogram[min(counts[r], m)] += 1 for every row r < nrows set in live:
// a segment's rows, once its m slices are counted.  histogram has m + 1
// slots.
void add_counts_to_histogram(const uint16_t *counts, const uint64_t *live, uint32_t nrows,
                             uint32_t m, uint64_t *histogram) noexcept;

// Rows the histogram (m + 1 slots) holds.
uint64_t histogram_rows(const uint64_t *histogram, uint32_t m) noexcept;

// The mean fraction of their m bits that the histogram's rows set; -1
// when it holds no rows or m is 0.
double histogram_fill(const uint64_t *histogram, uint32_t m) noexcept;

// The false-positive rate the histogram's rows imply for a query value
// that sets b bits: the mean over the rows of C(k, b) / C(m, b), k the
// row's bits set; -1 when it holds no rows or b is outside 1..m.
double histogram_rate(const uint64_t *histogram, uint32_t m, uint32_t b) noexcept;

// The fill the model expects of a row whose ncols columns set bits[i]
// positions each of m: a position is left clear by column i with chance
// 1 - bits[i] / m, independently, so the expected fraction set is
// 1 - prod_i (1 - bits[i] / m).  -1 for arguments out of range (m outside
// 1..4096, ncols outside 1..32, a column's bits outside 1..m).
double expected_fill(uint32_t m, const uint16_t *bits, int ncols) noexcept;

} // namespace bloomidx
