// Unit tests of src/core/segment_filter.{hpp,cpp}: no value added is ever
// reported absent (a segment skipped wrongly would lose its rows), the
// measured rate of absent values matches filter_rate, and the sizing
// meets the rates it is asked for.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/segment_filter.hpp"

using namespace bloomidx;

TEST(SegmentFilter, NoFalseNegatives)
{
    std::mt19937_64 rng(5);
    for (uint32_t keys : {1u, 2u, 6u, 100u, 5000u, 65024u}) {
        for (double rate : {0.2, 0.01, 0.001}) {
            double bpk = filter_bits_per_key(rate);
            uint32_t k = filter_probes(bpk);
            uint32_t nblocks = filter_blocks(keys, bpk, 1u << 16);
            std::vector<uint8_t> f(size_t{nblocks} * kFilterBlockBytes);
            std::vector<uint64_t> added(keys);
            for (auto &h : added) {
                h = rng();
                filter_add(f.data(), nblocks, k, h);
            }
            for (uint64_t h : added)
                ASSERT_TRUE(filter_may_contain(f.data(), nblocks, k, h))
                    << keys << " keys, rate " << rate;
        }
    }
}

TEST(SegmentFilter, MeasuredRateMatchesTheFormula)
{
    std::mt19937_64 rng(6);
    const uint32_t keys = 20000;
    for (double rate : {0.05, 0.01, 0.004}) {
        double bpk = filter_bits_per_key(rate);
        uint32_t k = filter_probes(bpk);
        uint32_t nblocks = filter_blocks(keys, bpk, 1u << 16);
        std::vector<uint8_t> f(size_t{nblocks} * kFilterBlockBytes);
        for (uint32_t i = 0; i < keys; i++)
            filter_add(f.data(), nblocks, k, rng());
        const int absent = 2000000;
        int hits = 0;
        for (int i = 0; i < absent; i++)
            hits += filter_may_contain(f.data(), nblocks, k, rng());
        double measured = double(hits) / absent;
        // The block count rounds up, so the filter may be a little better.
        double predicted = filter_rate(double(nblocks) * kFilterBlockBits / keys, k);
        EXPECT_NEAR(measured, predicted, predicted * 0.15) << "rate " << rate;
        EXPECT_LE(measured, rate * 1.15) << "rate " << rate;
    }
}

TEST(SegmentFilter, Sizing)
{
    EXPECT_EQ(filter_bits_per_key(0), 0);
    EXPECT_EQ(filter_bits_per_key(1), 0);
    EXPECT_EQ(filter_bits_per_key(std::nan("")), 0);
    double last = 0;
    for (double rate : {0.5, 0.1, 0.01, 0.001, 0.0001}) {
        double bpk = filter_bits_per_key(rate);
        EXPECT_GT(bpk, last) << rate;
        EXPECT_LE(filter_rate(bpk, filter_probes(bpk)), rate) << rate;
        EXPECT_GT(filter_rate(bpk - 0.25, filter_probes(bpk - 0.25)), rate) << rate;
        last = bpk;
    }
    EXPECT_EQ(filter_rate(10, 0), 1);
    EXPECT_EQ(filter_rate(0, 3), 1);
    for (double bpk : {2.0, 8.0, 16.0}) {
        uint32_t k = filter_probes(bpk);
        EXPECT_GE(k, 1u);
        EXPECT_LE(k, kFilterMaxProbes);
        EXPECT_LE(filter_rate(bpk, k), filter_rate(bpk, k == 1 ? 2 : k - 1));
    }
    EXPECT_EQ(filter_blocks(0, 10, 64), 1u);
    EXPECT_EQ(filter_blocks(1000, 10, 64), 20u); // 10,000 bits: 19.5 blocks
    EXPECT_EQ(filter_blocks(1000000, 10, 64), 64u);
    EXPECT_EQ(filter_blocks(10, 10, 0), 0u);
}

TEST(SegmentFilter, BlocksAreInRangeAndSpread)
{
    std::mt19937_64 rng(7);
    for (uint32_t nblocks : {1u, 3u, 64u, 1000u}) {
        std::vector<int> seen(nblocks);
        for (int i = 0; i < 100000; i++) {
            uint32_t b = filter_block_of(rng(), nblocks);
            ASSERT_LT(b, nblocks);
            seen[b]++;
        }
        for (int c : seen)
            EXPECT_NEAR(c, 100000.0 / nblocks, 6 * std::sqrt(100000.0 / nblocks) + 1);
    }
}

TEST(SegmentFilter, DistinctEstimate)
{
    std::mt19937_64 rng(8);
    std::vector<uint64_t> bitmap(kDistinctWords);
    for (uint32_t distinct : {1u, 6u, 100u, 1000u, 20000u, 65024u}) {
        std::vector<uint64_t> values(distinct), rows;
        for (auto &v : values)
            v = rng();
        // Each value two or three times, in an order that mixes them.
        for (int copy = 0; copy < 3; copy++)
            for (uint32_t i = 0; i < distinct; i++)
                if (copy < 2 || i % 2 == 0)
                    rows.push_back(values[(i * 7919u + copy) % distinct]);
        // Strided: column 1 of rows of 2 hashes.
        std::vector<uint64_t> strided(rows.size() * 2);
        for (size_t i = 0; i < rows.size(); i++) {
            strided[2 * i] = rng();
            strided[2 * i + 1] = rows[i];
        }
        uint32_t est = distinct_estimate(strided.data() + 1, static_cast<uint32_t>(rows.size()), 2,
                                         bitmap.data());
        EXPECT_NEAR(est, distinct, distinct * 0.02 + 1) << distinct;
    }
    EXPECT_EQ(distinct_estimate(nullptr, 0, 1, bitmap.data()), 0u);
}
