// Sizing advice from a table's statistics (bloomidx_advise): bits per
// column from a target false-positive rate of each column's own, and the
// size the index will have.
//
// The options' sizing (sizing.hpp) holds every column to one rate.  The
// advice holds each column to a rate of its own, so that a column whose
// equality matches many rows anyway (a status with five values) gets few
// bits, and a near-unique key many: the glue sets the targets, this file
// finds the shortest signature that meets them all.
#pragma once

#include <cstdint>

#include "sizing.hpp"

namespace bloomidx {

// The longer computations here ask `interrupted` (sizing.hpp) between
// steps, and stop when it says so (returning SizingStatus::Interrupted, or
// kRateInterrupted).
constexpr double kRateInterrupted = -2;

// The shortest length (a multiple of 16) at which every column i meets
// targets[i] (0 < target < 1) as a one-column query, with the fewest bits
// per column that do, and each column's rate there (rates[0..ncolumns)).
// Status Ok, Unreachable (no length up to 4096 bits meets them all: the
// result then holds the longest length's attempt), BadRequest or
// Interrupted.  Lengths are tried from short to long, doubling, then
// halving the step back: the long ones cost most.
SizingResult advise_sizing(const double *targets, int ncolumns, double *rates,
                           Interrupted interrupted = nullptr, void *arg = nullptr) noexcept;

// One column's values as ANALYZE saw them: the hashes (hash.hpp, as
// the index would hash them) of its most common values and of NULL, each
// with the fraction of the rows holding it; `rest` of the rows hold other
// values, `distinct` values in all (the listed ones included).
struct ColumnValues {
    const uint64_t *hashes;
    const double *freqs;
    int nlisted;
    double rest;
    double distinct;
};

// How many of a signature's `length` bits rows have set: hist[k] of
// kSampledRows rows drawn from the columns' values (each column's value
// independently, a listed one by its frequency, else a value with random
// bits) have k bits set; hist has length + 1 entries.  Sampled with a
// fixed seed, so the answer is repeatable.  False for arguments out of
// range.
constexpr int kSampledRows = 32768;
bool sample_row_fill(int length, const uint16_t *bits, int ncols, const ColumnValues *cols,
                     uint32_t *hist) noexcept;

// The false-positive rate an equality on column `column` will really get
// on such a table, for a query value drawn uniformly from the column's
// distinct values: the fraction of the rows not holding it whose
// signatures hold its bits.  The sizing model (sizing.hpp) takes every
// value's bits as random; here the listed values' bits are the ones their
// hashes set, so that a column of five values whose bits happen to
// overlap, or a table of few distinct rows, is predicted as it will be.
// Exact (inclusion-exclusion over the query value's bits) for a listed
// query value of up to kMaxExactBits bits; for the other values, from
// sample_row_fill's hist.  Costs, for each listed value of the column,
// a signature draw per listed value of every column and 2^bits steps per
// column; asks `interrupted` before each.  -1 for arguments out of range,
// kRateInterrupted when interrupted.
constexpr int kMaxExactBits = 12;
double expected_column_rate(int length, const uint16_t *bits, int ncols, const ColumnValues *cols,
                            int column, const uint32_t *hist, Interrupted interrupted = nullptr,
                            void *arg = nullptr) noexcept;

// What the index is predicted to take on disk, in 8 kB pages, for `rows`
// rows as a serial build lays them out at a signature of `length` bits:
// full segments (each its header, one slice page per bit, its live bits,
// the last rows' segment its slices packed several a page,
// its compressed TIDs, tid_bytes a row, and its filters,
// filter_bits_per_key for each distinct value of each column in the
// segment, distinct[i] being column i's number of distinct values in the
// table, NULL counted as one; 0: no filters), the last rows as a segment
// or pending pages (page_layout.hpp's tail_segment_rows), the filter
// groups' headers, the metapage and the directory pages.
double predicted_index_pages(double rows, int length, int ncolumns, const double *distinct,
                             double filter_bits_per_key, double tid_bytes) noexcept;

} // namespace bloomidx
