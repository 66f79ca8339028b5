// Unit tests of src/core/fill.{hpp,cpp}: per-row counts from bit slices
// equal the rows' own popcounts; the histogram's fill and implied rate
// equal the sizing model's exactly when the histogram is the model's
// distribution of a row's bits, and the rate measured by testing random
// values against rows that positions.hpp made.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/fill.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"
#include "core/sizing.hpp"
#include "core/slices.hpp"

using namespace bloomidx;

namespace {

// The model's distribution of |R|, a row's bits: column by column, a
// value of b bits adds x new positions to the u set so far with the
// hypergeometric chance C(m - u, x) C(u, b - x) / C(m, b).
std::vector<double> union_distribution(uint32_t m, const std::vector<uint16_t> &bits)
{
    auto log_choose = [](double n, double k) {
        return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
    };
    std::vector<double> dist(m + 1, 0.0);
    dist[0] = 1.0;
    for (uint16_t b : bits) {
        std::vector<double> next(m + 1, 0.0);
        for (uint32_t u = 0; u <= m; u++) {
            if (dist[u] == 0.0)
                continue;
            for (uint32_t x = 0; x <= b; x++) {
                if (x > m - u || b - x > u)
                    continue;
                next[u + x] += dist[u] * std::exp(log_choose(m - u, x) + log_choose(u, b - x) -
                                                  log_choose(m, b));
            }
        }
        dist.swap(next);
    }
    return dist;
}

// A histogram of 10^15 rows in the model's proportions.
std::vector<uint64_t> model_histogram(uint32_t m, const std::vector<uint16_t> &bits)
{
    std::vector<double> dist = union_distribution(m, bits);
    std::vector<uint64_t> h(m + 1);
    for (uint32_t k = 0; k <= m; k++)
        h[k] = static_cast<uint64_t>(std::llround(dist[k] * 1e15));
    return h;
}

} // namespace

TEST(SignatureFill, CountsBitsBelowTheLengthOnly)
{
    uint8_t sig[4] = {0xFF, 0x0F, 0xFF, 0xFF};
    EXPECT_EQ(signature_fill(sig, 32), 28u);
    EXPECT_EQ(signature_fill(sig, 12), 12u);
    EXPECT_EQ(signature_fill(sig, 10), 10u);
    EXPECT_EQ(signature_fill(sig, 20), 16u); // bits 16..19 of byte 2
    EXPECT_EQ(signature_fill(sig, 1), 1u);
    uint8_t none[2] = {0, 0x80};
    EXPECT_EQ(signature_fill(none, 15), 0u); // bit 15 lies past the length
    EXPECT_EQ(signature_fill(none, 16), 1u);
}

TEST(SliceCounts, EqualEachRowsPopcount)
{
    std::mt19937_64 rng(7);
    const uint32_t m = 72;
    const uint32_t sig_bytes = static_cast<uint32_t>(signature_bytes(m));
    for (uint32_t nrows : {1u, 63u, 64u, 65u, 1000u, kSegmentRows - 1, kSegmentRows}) {
        std::vector<uint8_t> sigs(static_cast<size_t>(nrows) * sig_bytes, 0);
        for (uint32_t r = 0; r < nrows; r++)
            for (uint32_t c = 0; c < 3; c++)
                add_value(&sigs[static_cast<size_t>(r) * sig_bytes], m, 5 + 4 * c, rng());
        std::vector<std::vector<uint64_t>> slices(m, std::vector<uint64_t>(kSliceWords, 0));
        std::vector<uint64_t *> out;
        for (auto &s : slices)
            out.push_back(s.data());
        transpose_signatures(sigs.data(), sig_bytes, nrows, sig_bytes, m, out.data());
        // A damaged slice may set rows past nrows: they never count.
        for (auto &s : slices)
            for (uint32_t w = 0; w < kSliceWords; w++)
                if (w * 64 + 64 > nrows)
                    s[w] |= ~uint64_t{0} << (w * 64 >= nrows ? 0 : nrows % 64);
        std::vector<uint64_t> live(kSliceWords, ~uint64_t{0});
        for (uint32_t r = 0; r < nrows; r += 7)
            live[r / 64] &= ~(uint64_t{1} << (r % 64));

        std::vector<uint16_t> counts(kSegmentRows, 0);
        for (uint32_t j = 0; j < m; j++)
            add_slice_counts(slices[j].data(), live.data(), nrows, counts.data());
        std::vector<uint64_t> histogram(m + 1, 0), expected(m + 1, 0);
        add_counts_to_histogram(counts.data(), live.data(), nrows, m, histogram.data());
        for (uint32_t r = 0; r < nrows; r++) {
            uint32_t fill = signature_fill(&sigs[static_cast<size_t>(r) * sig_bytes], m);
            bool is_live = r % 7 != 0;
            ASSERT_EQ(counts[r], is_live ? fill : 0u) << "row " << r << " of " << nrows;
            if (is_live)
                expected[fill]++;
        }
        for (uint32_t r = nrows; r < kSegmentRows; r++)
            ASSERT_EQ(counts[r], 0u) << "row " << r << " past " << nrows;
        EXPECT_EQ(histogram, expected) << nrows << " rows";
        EXPECT_EQ(histogram_rows(histogram.data(), m), nrows - (nrows + 6) / 7);
    }
}

TEST(Histogram, CountsPastTheLengthGoToTheLastSlot)
{
    uint16_t counts[3] = {1, 9, 4};
    uint64_t live[kSliceWords] = {0x7};
    uint64_t histogram[5] = {0, 0, 0, 0, 0};
    add_counts_to_histogram(counts, live, 3, 4, histogram);
    EXPECT_EQ(histogram[1], 1u);
    EXPECT_EQ(histogram[4], 2u);
}

TEST(Histogram, FillAndRateOfKnownRows)
{
    const uint32_t m = 8;
    uint64_t h[m + 1] = {};
    EXPECT_EQ(histogram_fill(h, m), -1.0); // no rows
    EXPECT_EQ(histogram_rate(h, m, 1), -1.0);
    h[2] = 1;
    h[6] = 3;
    EXPECT_DOUBLE_EQ(histogram_fill(h, m), (2.0 + 18.0) / 32.0);
    // One bit: the mean of k / m.
    EXPECT_NEAR(histogram_rate(h, m, 1), histogram_fill(h, m), 1e-14);
    // Two bits: C(2,2)/C(8,2) = 1/28 once, C(6,2)/C(8,2) = 15/28 three times.
    EXPECT_NEAR(histogram_rate(h, m, 2), (1.0 + 45.0) / 28.0 / 4.0, 1e-14);
    // More bits than any row sets: nothing passes.
    EXPECT_EQ(histogram_rate(h, m, 7), 0.0);
    EXPECT_EQ(histogram_rate(h, m, 0), -1.0);
    EXPECT_EQ(histogram_rate(h, m, 9), -1.0);
    // Every bit set: every query passes.
    uint64_t full[m + 1] = {};
    full[m] = 5;
    EXPECT_DOUBLE_EQ(histogram_fill(full, m), 1.0);
    EXPECT_NEAR(histogram_rate(full, m, m), 1.0, 1e-12);
}

// Where the rows are the model's, the histogram's fill is the expected
// one and its rate is the model's one-column rate, at every length.  (The
// histogram holds the model's proportions to 1 part in 10^15, so the
// cases are sizings whose rate comes from rows within a few standard
// deviations of the mean: a rate of 0.5^1000 would hinge on rows the
// rounding drops.)
TEST(Histogram, OfTheModelsRowsGivesTheModelsRate)
{
    struct Case {
        uint32_t m;
        std::vector<uint16_t> bits;
    };
    const Case cases[] = {
        {16, {3}},
        {64, {5, 9}},
        {80, {7, 7, 7}},
        {256, {20, 30, 40}},
        {1024, {60, 60, 60, 60}},
        {4096, std::vector<uint16_t>(32, 90)}, // the longest, of the most columns
    };
    for (const Case &c : cases) {
        std::vector<uint64_t> h = model_histogram(c.m, c.bits);
        int ncols = static_cast<int>(c.bits.size());
        EXPECT_NEAR(histogram_fill(h.data(), c.m), expected_fill(c.m, c.bits.data(), ncols), 1e-9)
            << "m = " << c.m;
        for (int i = 0; i < ncols; i++) {
            double model = false_positive_rate(static_cast<int>(c.m), c.bits.data(), ncols, 1u << i);
            double implied = histogram_rate(h.data(), c.m, c.bits[i]);
            EXPECT_NEAR(implied / model, 1.0, 1e-6) << "m = " << c.m << ", column " << i;
        }
    }
}

TEST(ExpectedFill, OfOneAndManyColumns)
{
    uint16_t one[1] = {8};
    EXPECT_DOUBLE_EQ(expected_fill(32, one, 1), 0.25); // one value: exactly its bits
    uint16_t two[2] = {16, 16};
    EXPECT_DOUBLE_EQ(expected_fill(32, two, 2), 0.75);
    uint16_t all[1] = {32};
    EXPECT_DOUBLE_EQ(expected_fill(32, all, 1), 1.0);
    EXPECT_EQ(expected_fill(0, one, 1), -1.0);
    EXPECT_EQ(expected_fill(4097, one, 1), -1.0);
    EXPECT_EQ(expected_fill(32, one, 0), -1.0);
    EXPECT_EQ(expected_fill(7, one, 1), -1.0); // 8 bits of 7
    uint16_t zero[1] = {0};
    EXPECT_EQ(expected_fill(32, zero, 1), -1.0);
}

// Rows made as the index makes them, values tested against them as a scan
// does: the rate measured agrees with the one their histogram implies.
TEST(Histogram, ImpliedRateMatchesSimulatedQueries)
{
    std::mt19937_64 rng(11);
    const uint32_t m = 48;
    const uint16_t bits[3] = {4, 6, 8};
    const int nbytes = signature_bytes(m);
    const long nrows = 20000, nqueries = 200;
    std::vector<uint8_t> rows(static_cast<size_t>(nrows) * nbytes, 0);
    std::vector<uint64_t> h(m + 1, 0);
    for (long r = 0; r < nrows; r++) {
        uint8_t *row = &rows[static_cast<size_t>(r) * nbytes];
        for (int c = 0; c < 3; c++)
            add_value(row, m, bits[c], rng());
        h[signature_fill(row, m)]++;
    }
    for (int c = 0; c < 3; c++) {
        // Given the rows, each query's share of rows passed has the implied
        // rate as its mean: the queries' spread bounds the error.
        double sum = 0, sum_squares = 0;
        for (long q = 0; q < nqueries; q++) {
            std::vector<uint8_t> query(nbytes, 0);
            add_value(query.data(), m, bits[c], rng());
            SignatureMask mask;
            mask.build(query.data(), nbytes);
            long passed = 0;
            for (long r = 0; r < nrows; r++)
                passed += mask.matches(&rows[static_cast<size_t>(r) * nbytes]);
            double share = static_cast<double>(passed) / nrows;
            sum += share;
            sum_squares += share * share;
        }
        double measured = sum / nqueries;
        double error = std::sqrt((sum_squares / nqueries - measured * measured) / (nqueries - 1));
        double implied = histogram_rate(h.data(), m, bits[c]);
        EXPECT_NEAR(measured, implied, 4 * error) << "column " << c;
        EXPECT_LT(error, 0.1 * implied) << "column " << c; // the test can tell
        EXPECT_NEAR(implied / false_positive_rate(static_cast<int>(m), bits, 3, 1u << c), 1.0, 0.05)
            << "column " << c;
    }
}
