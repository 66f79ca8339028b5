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

struct MetaPageData; // page_layout.hpp

// Asked between steps of the core's longer computations (advise.hpp,
// query.hpp): true stops them, so that the caller can serve an interrupt
// outside the core and call again.  NULL: never stop.
using Interrupted = bool (*)(void *arg);

// The same for the sizing frozen in an index's metapage; 1 (every row a
// candidate) where the metapage's sizing is out of range.
double false_positive_rate(const MetaPageData &meta, uint32_t query_columns) noexcept;

} // namespace bloomidx

namespace bloomidx {

// Choosing the signature length and bits per column from a target
// false-positive rate: "an equality on any single column keeps at most
// this fraction of the rows that do not match it".
struct SizingRequest {
    int ncolumns = 0;
    double target_rate = 0;  // 0 < rate < 1
    bool rate_given = false; // asked for by the user: every column must meet it;
                             // else a default, which binds only chosen columns
    int length = 0;          // 0: choose it
    uint16_t bits[32] = {};  // 0: choose it (the same for every chosen column)
};

enum class SizingStatus {
    Ok,
    BadRequest,     // arguments out of range (a column's bits > length...)
    LengthTooShort, // length given: no bits per column reach the rate
    Unreachable,    // no length up to 4096 bits reaches the rate
    Contradiction,  // length and every column given, and they miss the rate
    Interrupted,    // the caller's Interrupted check said to stop (advise.hpp)
};

// On failure, the one given option that the rate cannot be met with: the
// same request with it left open succeeds.  Length comes first (blamed
// only where a longer signature succeeds), then the columns in order.
enum class SizingBlame {
    None,   // no single option: several together, or the rate itself
    Length, // a longer signature meets the rate
    Column, // bits[blamed_column]: too few for the rate, or so many that
            // they crowd out the other columns' bits
};

struct SizingResult {
    SizingStatus status = SizingStatus::BadRequest;
    int length = 0;
    uint16_t bits[32] = {};
    double worst_rate = 1; // the highest single-column rate of the result
    int worst_column = 0;  // and its column (0-based)
    SizingBlame blame = SizingBlame::None;
    int blamed_column = 0; // 0-based, for SizingBlame::Column
};

// Chooses what the request leaves open.  A chosen length is a multiple of
// 16 (storage rounds up to 16 bits anyway, so the rest is free).
//
// Columns added to a request never let it succeed: with the same options
// given (the added columns left open), a request that fails for n columns
// fails for every larger number too.  An added column only adds bits to
// every row, which raises each other column's rate, and must meet a given
// rate itself; so each length and bits the search tries is at least as bad
// for more columns, and the search tries the same ones (it depends only on
// the target and the options given, and assumes, as it does anyway, that
// the rate falls with the length and is unimodal in the bits).
// src/options.cpp relies on this to check options before the number of
// columns is known; a unit test holds the core to it.
SizingResult choose_sizing(const SizingRequest &request) noexcept;

} // namespace bloomidx
