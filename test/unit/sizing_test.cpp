// Unit tests of src/core/sizing.{hpp,cpp}: the false-positive rate model,
// checked against exact enumeration at tiny lengths and against simulation
// of add_value + SignatureMask at realistic ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/positions.hpp"
#include "core/signature.hpp"
#include "core/sizing.hpp"

using namespace bloomidx;

namespace {

std::vector<uint16_t> same_bits(int ncols, int b)
{
    return std::vector<uint16_t>(static_cast<size_t>(ncols), static_cast<uint16_t>(b));
}

// Exact rate for m <= 10 by enumerating every choice of every column's set.
// Sets are bitmasks of [0, m); a column's b-subsets are equally likely.
double exact_rate(int m, const std::vector<uint16_t> &bits, uint32_t query_columns)
{
    const uint32_t nmasks = 1u << m;
    std::vector<uint32_t> subsets_of[11]; // subsets_of[b]: all b-subsets
    for (uint32_t s = 0; s < nmasks; s++)
        subsets_of[__builtin_popcount(s)].push_back(s);
    // Distribution of the row's union R over all columns, and of the
    // query's union S over the query columns (independent values).
    auto union_dist = [&](uint32_t cols) {
        std::vector<double> dist(nmasks, 0.0);
        dist[0] = 1.0;
        for (size_t c = 0; c < bits.size(); c++) {
            if (!(cols & (1u << c)))
                continue;
            const std::vector<uint32_t> &sets = subsets_of[bits[c]];
            std::vector<double> next(nmasks, 0.0);
            for (uint32_t u = 0; u < nmasks; u++)
                if (dist[u] != 0.0)
                    for (uint32_t s : sets)
                        next[u | s] += dist[u] / static_cast<double>(sets.size());
            dist.swap(next);
        }
        return dist;
    };
    std::vector<double> row = union_dist(~0u), query = union_dist(query_columns);
    double p = 0.0;
    for (uint32_t s = 0; s < nmasks; s++)
        if (query[s] != 0.0)
            for (uint32_t r = 0; r < nmasks; r++)
                if ((r & s) == s)
                    p += query[s] * row[r];
    return p;
}

} // namespace

TEST(FalsePositiveRate, RejectsBadArguments)
{
    std::vector<uint16_t> bits = same_bits(32, 2);
    EXPECT_EQ(false_positive_rate(0, bits.data(), 1, 1), -1.0);
    EXPECT_EQ(false_positive_rate(-5, bits.data(), 1, 1), -1.0);
    EXPECT_EQ(false_positive_rate(4097, bits.data(), 1, 1), -1.0);
    EXPECT_EQ(false_positive_rate(80, bits.data(), 0, 1), -1.0);
    EXPECT_EQ(false_positive_rate(80, bits.data(), -1, 1), -1.0);
    std::vector<uint16_t> many = same_bits(33, 2);
    EXPECT_EQ(false_positive_rate(80, many.data(), 33, 1), -1.0);
    // A column's bits outside 1..m, whether queried or not.
    std::vector<uint16_t> big = {2, 81, 2};
    EXPECT_EQ(false_positive_rate(80, big.data(), 3, 1), -1.0);
    EXPECT_EQ(false_positive_rate(80, big.data(), 3, 2), -1.0);
    std::vector<uint16_t> zero = {2, 0, 2};
    EXPECT_EQ(false_positive_rate(80, zero.data(), 3, 1), -1.0);
    // The limits themselves are fine.
    EXPECT_GE(false_positive_rate(4096, bits.data(), 32, 1), 0.0);
    EXPECT_GE(false_positive_rate(1, std::vector<uint16_t>{1}.data(), 1, 1), 0.0);
    std::vector<uint16_t> edge = {2, 80, 2};
    EXPECT_GE(false_positive_rate(80, edge.data(), 3, 1), 0.0);
}

TEST(FalsePositiveRate, EmptyQueryAlwaysPasses)
{
    std::vector<uint16_t> bits = same_bits(6, 2);
    EXPECT_EQ(false_positive_rate(80, bits.data(), 6, 0), 1.0);
    EXPECT_EQ(false_positive_rate(4096, bits.data(), 1, 0), 1.0);
}

TEST(FalsePositiveRate, ExactAtTinyLengths)
{
    // Hand-computed cases.
    std::vector<uint16_t> one = {1};
    EXPECT_DOUBLE_EQ(false_positive_rate(1, one.data(), 1, 1), 1.0);
    EXPECT_DOUBLE_EQ(false_positive_rate(2, one.data(), 1, 1), 0.5);
    std::vector<uint16_t> two = {2};
    EXPECT_NEAR(false_positive_rate(4, two.data(), 1, 1), 1.0 / 6, 1e-12); // 1 / C(4,2)
    std::vector<uint16_t> ones = {1, 1};
    EXPECT_NEAR(false_positive_rate(10, ones.data(), 2, 1), 1 - 0.9 * 0.9, 1e-12);

    // Every combination of small lengths, bits and query columns against
    // full enumeration.
    std::mt19937_64 rng(31);
    int cases = 0;
    for (int m = 1; m <= 8; m++) {
        for (int ncols = 1; ncols <= 3; ncols++) {
            for (int t = 0; t < 6; t++) {
                std::vector<uint16_t> bits(ncols);
                for (uint16_t &b : bits)
                    b = static_cast<uint16_t>(1 + rng() % m);
                for (uint32_t q = 1; q < (1u << ncols); q++) {
                    double expect = exact_rate(m, bits, q);
                    double got = false_positive_rate(m, bits.data(), ncols, q);
                    ASSERT_NEAR(got, expect, 1e-9 + 1e-9 * expect)
                        << "m " << m << " ncols " << ncols << " query " << q << " bits "
                        << bits[0] << "," << (ncols > 1 ? bits[1] : 0) << ","
                        << (ncols > 2 ? bits[2] : 0);
                    cases++;
                }
            }
        }
    }
    // Four columns at m = 10.
    std::vector<uint16_t> four = {3, 1, 5, 2};
    for (uint32_t q = 1; q < 16; q++, cases++)
        ASSERT_NEAR(false_positive_rate(10, four.data(), 4, q), exact_rate(10, four, q), 1e-9)
            << "query " << q;
    EXPECT_GT(cases, 200);
}

TEST(FalsePositiveRate, DecreasesWithBitsBelowTheOptimum)
{
    // The optimum is near (m / ncols) ln 2 bits: 9 for m = 80 with 6
    // columns, 11 for m = 128 with 8.  Below it, more bits mean fewer
    // false positives.
    struct Case {
        int m, ncols, last_b;
    };
    for (Case c : {Case{80, 6, 8}, Case{128, 8, 10}, Case{4096, 32, 60}, Case{64, 1, 32}}) {
        double prev = 1.0;
        for (int b = 1; b <= c.last_b; b++) {
            std::vector<uint16_t> bits = same_bits(c.ncols, b);
            double p = false_positive_rate(c.m, bits.data(), c.ncols, 1);
            EXPECT_GT(p, 0.0);
            EXPECT_LT(p, prev) << "m " << c.m << " ncols " << c.ncols << " b " << b;
            prev = p;
        }
        // ...and far past it, more bits fill the signature and hurt.
        std::vector<uint16_t> at = same_bits(c.ncols, c.last_b + 1);
        std::vector<uint16_t> far = same_bits(c.ncols, std::min(c.m, 4 * c.last_b));
        if (c.ncols > 1) {
            EXPECT_GT(false_positive_rate(c.m, far.data(), c.ncols, 1),
                      false_positive_rate(c.m, at.data(), c.ncols, 1))
                << "m " << c.m;
        }
    }
}

TEST(FalsePositiveRate, MoreQueryColumnsNeverIncreaseTheRate)
{
    std::mt19937_64 rng(32);
    for (int t = 0; t < 200; t++) {
        int m = 16 + static_cast<int>(rng() % 300);
        int ncols = 1 + static_cast<int>(rng() % 8);
        std::vector<uint16_t> bits(ncols);
        for (uint16_t &b : bits)
            b = static_cast<uint16_t>(1 + rng() % 12);
        uint32_t q = 1 + static_cast<uint32_t>(rng() % ((1u << ncols) - 1));
        uint32_t more = q | (1u << (rng() % ncols));
        double p = false_positive_rate(m, bits.data(), ncols, q);
        double pm = false_positive_rate(m, bits.data(), ncols, more);
        ASSERT_GT(p, 0.0);
        ASSERT_LE(p, 1.0);
        ASSERT_LE(pm, p * (1 + 1e-12)) << "m " << m << " q " << q << " more " << more;
        // More bits on a column the query does not test only adds row bits.
        int other = static_cast<int>(rng() % ncols);
        if (!(q & (1u << other)) && bits[other] < m / 2) {
            std::vector<uint16_t> fuller = bits;
            fuller[other]++;
            ASSERT_GT(false_positive_rate(m, fuller.data(), ncols, q), p) << "m " << m;
        }
    }
}

TEST(FalsePositiveRate, LargeQueriesStayInRange)
{
    // Queries too large for the exact computation get a bound; it must
    // still be a probability, and tiny.
    std::vector<uint16_t> bits = same_bits(32, 200);
    double p = false_positive_rate(4096, bits.data(), 32, ~0u);
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1e-6);
    double one = false_positive_rate(4096, bits.data(), 32, 1);
    EXPECT_GT(one, 0.0);
    EXPECT_LE(p, one);
}

namespace {

struct Sim {
    double measured;
    double rel_se; // estimated relative standard error of `measured`
    double false_positives;
};

// Independent trials: each builds a row from ncols random hashes and a
// query from fresh random hashes of the query columns.
Sim simulate_trials(int m, const std::vector<uint16_t> &bits, uint32_t query_columns,
                    long trials, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    uint32_t um = static_cast<uint32_t>(m);
    int nbytes = signature_bytes(m);
    std::vector<uint8_t> row(nbytes), q(nbytes);
    long fp = 0;
    for (long t = 0; t < trials; t++) {
        std::memset(row.data(), 0, static_cast<size_t>(nbytes));
        std::memset(q.data(), 0, static_cast<size_t>(nbytes));
        for (size_t c = 0; c < bits.size(); c++)
            add_value(row.data(), um, bits[c], rng());
        for (size_t c = 0; c < bits.size(); c++)
            if (query_columns & (1u << c))
                add_value(q.data(), um, bits[c], rng());
        SignatureMask mask;
        mask.build(q.data(), nbytes);
        fp += mask.matches(row.data());
    }
    double p = static_cast<double>(fp) / trials;
    return Sim{p, std::sqrt((1 - p) / (p * trials)), static_cast<double>(fp)};
}

// Every pair of nrows random rows and nqueries random queries, the rows
// stored back to back and tested with match_array as a scan does.  Row and
// query values are independent, so each pair is a trial; pairs sharing a
// row or a query are correlated, which the error estimate accounts for
// (variance of the per-row and per-query rates, U-statistic style).
Sim simulate_pairs(int m, const std::vector<uint16_t> &bits, uint32_t query_columns, int nrows,
                   int nqueries, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    uint32_t um = static_cast<uint32_t>(m);
    int nbytes = signature_bytes(m);
    std::vector<uint8_t> rows(static_cast<size_t>(nrows) * nbytes, 0);
    for (int r = 0; r < nrows; r++)
        for (size_t c = 0; c < bits.size(); c++)
            add_value(&rows[static_cast<size_t>(r) * nbytes], um, bits[c], rng());
    std::vector<long> row_hits(nrows, 0);
    std::vector<uint16_t> out(nrows);
    double total = 0, sum_q2 = 0;
    std::vector<uint8_t> q(nbytes);
    const int kChunk = 60000; // match_array indexes are uint16_t
    for (int k = 0; k < nqueries; k++) {
        std::memset(q.data(), 0, static_cast<size_t>(nbytes));
        for (size_t c = 0; c < bits.size(); c++)
            if (query_columns & (1u << c))
                add_value(q.data(), um, bits[c], rng());
        SignatureMask mask;
        mask.build(q.data(), nbytes);
        long hits = 0;
        for (int base = 0; base < nrows; base += kChunk) {
            int n = mask.match_array(&rows[static_cast<size_t>(base) * nbytes],
                                     std::min(kChunk, nrows - base), out.data());
            for (int i = 0; i < n; i++)
                row_hits[base + out[i]]++;
            hits += n;
        }
        total += hits;
        double rate = static_cast<double>(hits) / nrows;
        sum_q2 += rate * rate;
    }
    double pairs = static_cast<double>(nrows) * nqueries;
    double p = total / pairs;
    double var_q = sum_q2 / nqueries - p * p; // includes binomial noise: conservative
    double sum_r2 = 0;
    for (long h : row_hits) {
        double rate = static_cast<double>(h) / nqueries;
        sum_r2 += rate * rate;
    }
    double var_r = sum_r2 / nrows - p * p;
    double var = var_r / nrows + var_q / nqueries + p * (1 - p) / pairs;
    return Sim{p, std::sqrt(var) / p, total};
}

void expect_close_to_model(const char *how, int m, const std::vector<uint16_t> &bits,
                           uint32_t query_columns, const Sim &sim)
{
    double model = false_positive_rate(m, bits.data(), static_cast<int>(bits.size()), query_columns);
    std::string what = std::string(how) + ": m " + std::to_string(m) + ", bits " +
                       std::to_string(bits[0]) + ", " + std::to_string(bits.size()) +
                       " columns, query " + std::to_string(query_columns);
    // The 10% bound must be meaningful: more than 4 standard errors away.
    EXPECT_LT(sim.rel_se, 0.025) << what << ": not enough trials";
    EXPECT_NEAR(sim.measured / model, 1.0, 0.10)
        << what << ": measured " << sim.measured << " model " << model << " ("
        << sim.false_positives << " false positives, relative SE " << sim.rel_se << ")";
}

} // namespace

TEST(FalsePositiveRate, MatchesSimulatedTrials)
{
    // m = 80, 2 bits, 6 columns, one query column: about 0.0184, so a
    // million trials give ~20000 false positives (relative SE 0.7%).
    std::vector<uint16_t> bits = same_bits(6, 2);
    expect_close_to_model("trials", 80, bits, 1u << 2,
                          simulate_trials(80, bits, 1u << 2, 1100000, 41));
    // A 2-column query on a short signature: about 0.027, ~21600 false
    // positives in 800000 trials.
    std::vector<uint16_t> small = same_bits(4, 2);
    expect_close_to_model("trials", 16, small, 3, simulate_trials(16, small, 3, 800000, 42));
}

TEST(FalsePositiveRate, MatchesSimulatedScans)
{
    struct Case {
        int m, b, ncols;
        uint32_t query;
        int nrows, nqueries;
    };
    // Expected false positives: from ~20000 (the rarest, 2e-4) to ~1e6.
    // Expected false positives: from ~25000 (the rarest, 1.7e-4) up.  Where
    // queries vary more than rows (2-column queries whose columns share a
    // position are far likelier to pass), there are more queries.
    const Case cases[] = {
        {80, 2, 6, 1u << 0, 6000, 6000},                 // ~0.018
        {80, 9, 6, 1u << 5, 8000, 8000},                 // ~0.0017
        {64, 7, 6, 1u << 3, 6000, 6000},                 // ~0.0061
        {96, 5, 4, 1u << 1, 12000, 12000},               // ~0.00017
        {128, 6, 8, 1u << 7, 10000, 10000},              // ~0.00084
        {80, 2, 6, (1u << 0) | (1u << 4), 6000, 24000},  // ~0.00035, 2 columns
        {32, 1, 4, 3u, 2000, 30000},                     // ~0.014, 2 columns
        {16, 2, 4, 3u, 2000, 20000},                     // ~0.027, 2 columns
    };
    for (const Case &c : cases) {
        std::vector<uint16_t> bits = same_bits(c.ncols, c.b);
        expect_close_to_model("scans", c.m, bits, c.query,
                              simulate_pairs(c.m, bits, c.query, c.nrows, c.nqueries,
                                             1000u + static_cast<uint64_t>(c.m * 100 + c.b)));
    }
    // Columns of different widths.
    std::vector<uint16_t> mixed = {1, 3, 6, 2, 9};
    for (uint32_t q : {1u, 2u, 8u, 3u, 9u})
        expect_close_to_model("scans, mixed bits", 100, mixed, q,
                              simulate_pairs(100, mixed, q, 4000, 12000, 77 + q));
}

TEST(FalsePositiveRate, RejectsQueryColumnsTheIndexDoesNotHave)
{
    std::vector<uint16_t> bits = same_bits(3, 4);
    EXPECT_GT(bloomidx::false_positive_rate(64, bits.data(), 3, 0x4), 0.0);
    EXPECT_EQ(bloomidx::false_positive_rate(64, bits.data(), 3, 0x8), -1.0);
    EXPECT_EQ(bloomidx::false_positive_rate(64, bits.data(), 3, 0x9), -1.0);
    std::vector<uint16_t> all = same_bits(32, 2);
    EXPECT_GT(bloomidx::false_positive_rate(4096, all.data(), 32, 0x80000000u), 0.0);
}

namespace {

bloomidx::SizingRequest request(int ncols, double rate, bool given, int length = 0)
{
    bloomidx::SizingRequest r;
    r.ncolumns = ncols;
    r.target_rate = rate;
    r.rate_given = given;
    r.length = length;
    return r;
}

double single_column_rate(const bloomidx::SizingResult &res, int ncols, int column)
{
    return bloomidx::false_positive_rate(res.length, res.bits, ncols, 1u << column);
}

} // namespace

TEST(ChooseSizing, MeetsTheRateWithTheShortestLength)
{
    for (int ncols : {1, 3, 6, 12, 32}) {
        for (double rate : {0.05, 0.01, 0.001, 0.0001}) {
            bloomidx::SizingResult res = bloomidx::choose_sizing(request(ncols, rate, true));
            ASSERT_EQ(res.status, bloomidx::SizingStatus::Ok) << ncols << " " << rate;
            EXPECT_EQ(res.length % 16, 0);
            for (int i = 0; i < ncols; i++)
                EXPECT_LE(single_column_rate(res, ncols, i), rate) << ncols << " " << rate;
            // 16 bits less cannot meet it, whatever the bits per column.
            if (res.length > 16) {
                bloomidx::SizingRequest shorter = request(ncols, rate, true, res.length - 16);
                EXPECT_EQ(bloomidx::choose_sizing(shorter).status,
                          bloomidx::SizingStatus::LengthTooShort)
                    << ncols << " " << rate;
            }
        }
    }
}

TEST(ChooseSizing, GivenOptionsWin)
{
    bloomidx::SizingRequest r = request(4, 0.01, true);
    r.bits[1] = 3;
    bloomidx::SizingResult res = bloomidx::choose_sizing(r);
    ASSERT_EQ(res.status, bloomidx::SizingStatus::Ok);
    EXPECT_EQ(res.bits[1], 3);
    for (int i = 0; i < 4; i++)
        EXPECT_LE(single_column_rate(res, 4, i), 0.01);

    r = request(4, 0.01, false, 100); // length given, no rate asked: best bits
    res = bloomidx::choose_sizing(r);
    ASSERT_EQ(res.status, bloomidx::SizingStatus::Ok);
    EXPECT_EQ(res.length, 100);
    double best = single_column_rate(res, 4, 0);
    for (int b = 1; b <= 40; b++) {
        uint16_t bits[4] = {uint16_t(b), uint16_t(b), uint16_t(b), uint16_t(b)};
        EXPECT_GE(bloomidx::false_positive_rate(100, bits, 4, 1) * (1 + 1e-9), best) << b;
    }
}

TEST(ChooseSizing, SaysWhyItCannot)
{
    EXPECT_EQ(bloomidx::choose_sizing(request(6, 0.0001, true, 16)).status,
              bloomidx::SizingStatus::LengthTooShort);

    bloomidx::SizingRequest r = request(3, 0.00001, true);
    r.bits[0] = 1; // one bit per value cannot be that selective
    bloomidx::SizingResult res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.status, bloomidx::SizingStatus::Unreachable);
    EXPECT_EQ(res.worst_column, 0);

    r = request(6, 0.01, true, 80);
    for (int i = 0; i < 6; i++)
        r.bits[i] = 2; // contrib/bloom's defaults: about 1.8%
    EXPECT_EQ(bloomidx::choose_sizing(r).status, bloomidx::SizingStatus::Contradiction);
    r.target_rate = 0.02;
    EXPECT_EQ(bloomidx::choose_sizing(r).status, bloomidx::SizingStatus::Ok);

    // Not asked for: never an error, the best it can do.
    r = request(3, 0.00001, false);
    r.bits[0] = 1;
    EXPECT_EQ(bloomidx::choose_sizing(r).status, bloomidx::SizingStatus::Ok);
}

TEST(ChooseSizing, RejectsBadRequests)
{
    EXPECT_EQ(bloomidx::choose_sizing(request(0, 0.01, true)).status, bloomidx::SizingStatus::BadRequest);
    EXPECT_EQ(bloomidx::choose_sizing(request(33, 0.01, true)).status, bloomidx::SizingStatus::BadRequest);
    EXPECT_EQ(bloomidx::choose_sizing(request(3, 0, true)).status, bloomidx::SizingStatus::BadRequest);
    EXPECT_EQ(bloomidx::choose_sizing(request(3, 1, true)).status, bloomidx::SizingStatus::BadRequest);
    EXPECT_EQ(bloomidx::choose_sizing(request(3, 0.01, true, 4097)).status, bloomidx::SizingStatus::BadRequest);
    bloomidx::SizingRequest r = request(3, 0.01, true, 16);
    r.bits[2] = 17;
    EXPECT_EQ(bloomidx::choose_sizing(r).status, bloomidx::SizingStatus::BadRequest);
}

// A failure names the one option given that the rate cannot be met with,
// never a column whose bits were left to be chosen.
TEST(ChooseSizing, BlamesTheGivenOptionInTheWay)
{
    // col1 = 4000 crowds out the other columns: blamed, not column 2
    // (the worst one, left open).
    bloomidx::SizingRequest r = request(3, 0.01, true);
    r.bits[0] = 4000;
    bloomidx::SizingResult res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.status, bloomidx::SizingStatus::Unreachable);
    EXPECT_NE(res.worst_column, 0);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Column);
    EXPECT_EQ(res.blamed_column, 0);

    // At the longest length a longer one is no way out: col1 is.
    r = request(3, 0.000001, true, 4096);
    r.bits[0] = 4000;
    res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.status, bloomidx::SizingStatus::LengthTooShort);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Column);
    EXPECT_EQ(res.blamed_column, 0);

    // Too few bits: col1 = 1 is blamed, and is the worst column itself.
    r = request(3, 0.00001, true);
    r.bits[0] = 1;
    res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Column);
    EXPECT_EQ(res.blamed_column, 0);
    EXPECT_EQ(res.worst_column, 0);

    // The worst column is not always the one in the way: col1 = 1 would
    // do if col2 = 4000 did not fill every row.
    r = request(2, 0.01, true);
    r.bits[0] = 1;
    r.bits[1] = 4000;
    res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.worst_column, 0);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Column);
    EXPECT_EQ(res.blamed_column, 1);

    // A length too short, alone or with every column given.
    res = bloomidx::choose_sizing(request(6, 0.0001, true, 16));
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Length);
    r = request(6, 0.01, true, 80);
    for (int i = 0; i < 6; i++)
        r.bits[i] = 2;
    res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.status, bloomidx::SizingStatus::Contradiction);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::Length);

    // No single option: either of the two would still crowd out the other.
    r = request(2, 0.01, true);
    r.bits[0] = 4000;
    r.bits[1] = 4000;
    res = bloomidx::choose_sizing(r);
    EXPECT_EQ(res.status, bloomidx::SizingStatus::Unreachable);
    EXPECT_EQ(res.blame, bloomidx::SizingBlame::None);

    // Success blames nothing.
    EXPECT_EQ(bloomidx::choose_sizing(request(3, 0.01, true)).blame, bloomidx::SizingBlame::None);
}

// What options.cpp relies on to check options before the number of
// columns is known (sizing.hpp): the same options given for more columns
// never succeed where fewer columns fail.
TEST(ChooseSizing, MoreColumnsNeverSucceedWhereFewerFail)
{
    int fewer_failed = 0, only_more_failed = 0;
    for (int ncols : {1, 3}) {
        for (int length : {0, 64, 4096}) {
            for (double rate : {0.01, 0.0001, 0.000001}) {
                for (int pattern = 0; pattern < 4; pattern++) {
                    bloomidx::SizingRequest r = request(ncols, rate, true, length);
                    uint16_t last[] = {1, 8, 40, 4000};
                    r.bits[ncols - 1] = last[pattern]; // the highest colN given
                    if (pattern == 2 && ncols > 1)
                        r.bits[0] = 3;
                    if (length && r.bits[ncols - 1] > length)
                        continue;
                    bool ok = bloomidx::choose_sizing(r).status == bloomidx::SizingStatus::Ok;
                    fewer_failed += !ok;
                    for (int more : {ncols + 1, ncols + 4}) {
                        r.ncolumns = more;
                        bool more_ok = bloomidx::choose_sizing(r).status == bloomidx::SizingStatus::Ok;
                        EXPECT_TRUE(ok || !more_ok)
                            << ncols << " -> " << more << " columns, length " << length
                            << ", rate " << rate << ", pattern " << pattern;
                        only_more_failed += ok && !more_ok;
                    }
                }
            }
        }
    }
    // Both kinds occur: the check is not vacuous, and amoptions's check
    // does not replace the build's.
    EXPECT_GT(fewer_failed, 0);
    EXPECT_GT(only_more_failed, 0);
}
