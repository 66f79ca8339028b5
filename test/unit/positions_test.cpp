// Unit tests of src/core/positions.{hpp,cpp}: which bits one value sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/hash.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"

using namespace bloomidx;

namespace {

int popcount(const uint8_t *sig, int nbytes)
{
    int n = 0;
    for (int i = 0; i < nbytes; i++)
        n += __builtin_popcount(sig[i]);
    return n;
}

std::vector<uint8_t> value_bits(uint32_t m, uint32_t b, uint64_t hash)
{
    std::vector<uint8_t> sig(static_cast<size_t>(signature_bytes(static_cast<int>(m))), 0);
    add_value(sig.data(), m, b, hash);
    return sig;
}

std::vector<uint32_t> set_positions(uint32_t m, uint32_t b, uint64_t hash)
{
    std::vector<uint8_t> sig = value_bits(m, b, hash);
    std::vector<uint32_t> pos;
    for (uint32_t i = 0; i < static_cast<uint32_t>(sig.size()) * 8; i++)
        if (signature_test_bit(sig.data(), i))
            pos.push_back(i);
    return pos;
}

} // namespace

TEST(Positions, KnownAnswers)
{
    // Which bits a hash sets is part of the on-disk format, like the hash
    // itself (kHashXxh3V2 covers hash.cpp + positions.cpp): an index built
    // with other positions gives false negatives.  If this test fails, do
    // not update the constants; keep the old walk for old indexes and bump
    // kHashXxh3V2 for the new one.
    using P = std::vector<uint32_t>;
    EXPECT_EQ(set_positions(80, 3, hash_int(42, column_seed(0))), (P{56, 65, 70}));
    EXPECT_EQ(set_positions(80, 9, hash_bytes("abc", 3, column_seed(2))),
              (P{0, 17, 28, 40, 41, 42, 62, 65, 68}));
    // More than half the positions: the complement is drawn.
    EXPECT_EQ(set_positions(17, 12, 0x0123456789abcdefULL),
              (P{1, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 16}));
    EXPECT_EQ(set_positions(4096, 5, 0xfedcba9876543210ULL), (P{25, 2383, 2605, 2637, 3840}));
    EXPECT_EQ(set_positions(64, 4, 0), (P{5, 6, 25, 38}));
}

TEST(Positions, StayBelowLengthAndInsideTheSignature)
{
    // Positions are < m even when the stored bytes have room for more
    // (m not a multiple of 16), and add_value never writes before or after
    // the signature's signature_bytes(m) bytes.
    std::mt19937_64 rng(21);
    const int kCanary = 32;
    const uint8_t kPattern[2] = {0xA5, 0x5A};
    std::vector<int> lengths;
    for (int m = 1; m <= 300; m++)
        if (m % 16 != 0)
            lengths.push_back(m);
    for (int m : {16, 64, 1000, 2047, 2049, 4081, 4095, 4096})
        lengths.push_back(m);
    long checked = 0;
    for (int m : lengths) {
        uint32_t um = static_cast<uint32_t>(m);
        int nbytes = signature_bytes(m);
        std::vector<uint8_t> buf(static_cast<size_t>(nbytes + 2 * kCanary));
        uint8_t *sig = buf.data() + kCanary;
        int trials = m <= 300 ? 200 : 20;
        for (int t = 0; t < trials; t++) {
            for (size_t i = 0; i < buf.size(); i++)
                buf[i] = kPattern[i % 2];
            std::memset(sig, 0, static_cast<size_t>(nbytes));
            // Several values, few or many bits each (both code paths).
            int nvalues = 1 + static_cast<int>(rng() % 4);
            for (int v = 0; v < nvalues; v++) {
                uint32_t b = t % 2 ? 1 + static_cast<uint32_t>(rng() % um)
                                   : 1 + static_cast<uint32_t>(rng() % std::min(um, 12u));
                add_value(sig, um, b, rng());
            }
            for (uint32_t pos = um; pos < static_cast<uint32_t>(nbytes) * 8; pos++)
                ASSERT_FALSE(signature_test_bit(sig, pos)) << "m " << m << " set bit " << pos;
            for (int i = 0; i < kCanary; i++) {
                ASSERT_EQ(buf[i], kPattern[i % 2]) << "m " << m << ": wrote before the signature";
                size_t after = static_cast<size_t>(kCanary + nbytes + i);
                ASSERT_EQ(buf[after], kPattern[after % 2]) << "m " << m << ": wrote past the signature";
            }
            checked++;
        }
    }
    EXPECT_GT(checked, 50000);
}

TEST(Positions, ExactlyBitsDistinctPositions)
{
    // b distinct positions: popcount == b on a zeroed signature, for every
    // b in 1..m (b <= m/2 draws the positions, b > m/2 their complement).
    std::mt19937_64 rng(22);
    for (int m : {1, 2, 3, 7, 8, 15, 16, 17, 31, 63, 64, 65, 80, 100, 127, 128, 129, 250}) {
        uint32_t um = static_cast<uint32_t>(m);
        int nbytes = signature_bytes(m);
        for (uint32_t b = 1; b <= um; b++) {
            for (int t = 0; t < 50; t++) {
                uint64_t h = t == 0 ? 0 : t == 1 ? ~0ULL : rng();
                std::vector<uint8_t> sig = value_bits(um, b, h);
                ASSERT_EQ(popcount(sig.data(), nbytes), static_cast<int>(b))
                    << "m " << m << " b " << b << " hash " << h;
            }
        }
    }
    // The largest length: a sample of b, all of the extremes.
    for (uint32_t b : {1u, 2u, 7u, 100u, 1000u, 2047u, 2048u, 2049u, 3000u, 4000u, 4095u, 4096u}) {
        for (int t = 0; t < 10; t++) {
            std::vector<uint8_t> sig = value_bits(4096, b, rng());
            ASSERT_EQ(popcount(sig.data(), 512), static_cast<int>(b)) << "b " << b;
        }
    }
}

TEST(Positions, AddsToExistingBits)
{
    // add_value ORs its bits in: bits set by other values stay set, and
    // the value's own bits are the same as on a zeroed signature.
    std::mt19937_64 rng(23);
    for (int m : {7, 16, 65, 80, 127, 250, 4096}) {
        uint32_t um = static_cast<uint32_t>(m);
        int nbytes = signature_bytes(m);
        for (int t = 0; t < 200; t++) {
            std::vector<uint8_t> before(nbytes, 0);
            for (int pos = 0; pos < m; pos++)
                if (rng() % 3 == 0)
                    signature_set_bit(before.data(), static_cast<uint32_t>(pos));
            uint32_t b = 1 + static_cast<uint32_t>(rng() % um);
            uint64_t h = rng();
            std::vector<uint8_t> after = before;
            add_value(after.data(), um, b, h);
            std::vector<uint8_t> alone = value_bits(um, b, h);
            for (int i = 0; i < nbytes; i++)
                ASSERT_EQ(after[i], before[i] | alone[i]) << "m " << m << " b " << b;
        }
    }
}

TEST(Positions, DeterministicAndHashDependent)
{
    std::mt19937_64 rng(24);
    for (int m : {16, 17, 64, 80, 100, 128, 250, 1000, 4096}) {
        uint32_t um = static_cast<uint32_t>(m);
        for (uint32_t b : {1u, 2u, 3u, 5u, 9u, um / 3, um / 2, um / 2 + 1, um - 2, um - 1, um}) {
            if (b < 1 || b > um)
                continue;
            // Number of possible sets: C(m, b).
            double log_sets = std::lgamma(m + 1.0) - std::lgamma(b + 1.0) - std::lgamma(m - b + 1.0);
            const int kPairs = 200;
            int same = 0;
            for (int t = 0; t < kPairs; t++) {
                uint64_t h1 = rng(), h2 = rng();
                std::vector<uint8_t> a = value_bits(um, b, h1);
                ASSERT_EQ(a, value_bits(um, b, h1)) << "not deterministic: m " << m << " b " << b;
                same += a == value_bits(um, b, h2);
                // Hashes one bit apart also choose different sets.
                same += a == value_bits(um, b, h1 ^ (1ULL << (t % 64)));
            }
            if (b == um) {
                EXPECT_EQ(same, 2 * kPairs); // only one possible set
                continue;
            }
            // Uniform sets: 2*kPairs/C(m,b) equal pairs expected.
            double expect = 2.0 * kPairs * std::exp(-log_sets);
            EXPECT_LE(same, 3.0 * expect + 5) << "m " << m << " b " << b;
        }
    }
}

TEST(Positions, EveryPositionEquallyLikely)
{
    // The sizing model (sizing.hpp) assumes positions uniform over [0, m):
    // each position is in a value's set with probability b/m.
    std::mt19937_64 rng(25);
    struct Case {
        uint32_t m, b;
    };
    for (Case c : {Case{80, 3}, Case{17, 2}, Case{65, 50}, Case{250, 7}, Case{4096, 40}}) {
        // About 10000 (2000 for m = 4096) expected hits per position.
        const long kValues = (c.m >= 4096 ? 2000L : 10000L) * c.m / c.b;
        std::vector<long> hits(c.m, 0);
        for (long v = 0; v < kValues; v++) {
            std::vector<uint8_t> sig = value_bits(c.m, c.b, rng());
            for (uint32_t byte = 0; byte < sig.size(); byte++)
                for (uint32_t bit = 0; sig[byte] >> bit; bit++)
                    if ((sig[byte] >> bit) & 1)
                        hits[byte * 8 + bit]++;
        }
        double p = static_cast<double>(c.b) / c.m;
        double expect = kValues * p;
        double sd = std::sqrt(kValues * p * (1 - p));
        for (uint32_t pos = 0; pos < c.m; pos++)
            EXPECT_NEAR(hits[pos], expect, 5.5 * sd)
                << "m " << c.m << " b " << c.b << " position " << pos;
    }
}

// Out of contract: never an endless loop or a write past the signature.
TEST(Positions, OutOfContractArgumentsAreHarmless)
{
    uint8_t sig[bloomidx::kMaxSignatureBytes + 8];
    std::memset(sig, 0, sizeof sig);
    bloomidx::add_value(sig, 20, 50, 12345); // bits > length: all 20 bits
    int set = 0;
    for (uint32_t i = 0; i < 8 * sizeof sig; i++)
        set += bloomidx::signature_test_bit(sig, i);
    EXPECT_EQ(set, 20);
    for (uint32_t i = 0; i < 20; i++)
        EXPECT_TRUE(bloomidx::signature_test_bit(sig, i));

    std::memset(sig, 0, sizeof sig);
    bloomidx::add_value(sig, 0, 3, 1);
    bloomidx::add_value(sig, bloomidx::kMaxSignatureBits + 1, 3, 1);
    for (uint8_t byte : sig)
        EXPECT_EQ(byte, 0);
}
