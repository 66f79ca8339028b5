// Sizing math: how often a row that matches none of a query's columns
// still passes the signature test (a false positive).
//
// Model, exact for the way positions.hpp sets bits: every value of column
// i sets bits[i] distinct positions drawn uniformly from [0, m), values
// independent.  The query's bits S are the union of its columns' sets; a
// row's bits R are the union of all its columns' sets.  The rate is
// P(S is a subset of R), computed by dynamic programming over the number
// of S's bits not yet covered (hypergeometric steps), with no alternating
// sums, so it is stable.  The textbook approximation (1 - e^(-B/m))^k
// ignores that a value's positions are distinct and is off by 10-40% at
// per-row sizes; this is what the unit tests measure against.
#pragma once

#include <cstdint>

namespace bloomidx {

// False-positive rate of a query testing the columns in query_columns
// (bit i = column i), for a signature of m bits whose ncols columns set
// bits[0..ncols) bits each.  Returns 1 when no column is tested and -1 for
// arguments out of range (m outside 1..4096, a column's bits outside
// 1..m, ncols outside 1..32, a query column at or past ncols).
double false_positive_rate(int m, const uint16_t *bits, int ncols, uint32_t query_columns) noexcept;

} // namespace bloomidx
