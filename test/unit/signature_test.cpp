// Unit tests of src/core/signature.hpp: signature sizes, bit accessors and
// the SignatureMask subset test, including the end-to-end "no false
// negatives" property of add_value + SignatureMask.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/hash.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"
#include "reference.hpp"

using namespace bloomidx;

namespace {

// Lengths that exercise the short (< 8 bytes) path, exact multiples of
// 8 bytes and the overlapping last word.
const int kLengths[] = {1, 7, 15, 16, 17, 63, 64, 65, 80, 96, 100, 127, 128, 250, 4096};

bool reference_matches(const uint8_t *sig, const uint8_t *q, int nbytes)
{
    return reference::matches(sig, q, nbytes);
}

bool mask_matches(const uint8_t *q, const uint8_t *sig, int nbytes)
{
    SignatureMask mask;
    mask.build(q, nbytes);
    return mask.matches(sig);
}

// Random bits in [0, m), each set with probability density.
void random_bits(std::mt19937_64 &rng, uint8_t *sig, int m, double density)
{
    std::memset(sig, 0, static_cast<size_t>(signature_bytes(m)));
    std::bernoulli_distribution coin(density);
    for (int pos = 0; pos < m; pos++)
        if (coin(rng))
            signature_set_bit(sig, static_cast<uint32_t>(pos));
}

} // namespace

TEST(SignatureBytes, IsBitsRoundedUpTo16)
{
    for (int bits = 1; bits <= kMaxSignatureBits; bits++) {
        int expect = (bits / 16 + (bits % 16 != 0 ? 1 : 0)) * 2;
        ASSERT_EQ(signature_bytes(bits), expect) << "bits " << bits;
        EXPECT_GE(signature_bytes(bits) * 8, bits);
        EXPECT_LT(signature_bytes(bits) * 8, bits + 16);
    }
    static_assert(signature_bytes(80) == 10, "contrib/bloom's default length is 10 bytes");
    EXPECT_EQ(signature_bytes(kMaxSignatureBits), kMaxSignatureBytes);
    EXPECT_EQ(signature_bytes(1), 2);
    EXPECT_EQ(signature_bytes(16), 2);
    EXPECT_EQ(signature_bytes(17), 4);
}

TEST(SignatureBits, BitIIsByteIOver8PositionIMod8)
{
    std::vector<uint8_t> sig(kMaxSignatureBytes);
    for (uint32_t i = 0; i < static_cast<uint32_t>(kMaxSignatureBits); i++) {
        std::fill(sig.begin(), sig.end(), 0);
        signature_set_bit(sig.data(), i);
        for (uint32_t b = 0; b < sig.size(); b++)
            ASSERT_EQ(sig[b], b == i / 8 ? (1u << (i % 8)) : 0u) << "bit " << i << " byte " << b;
        for (uint32_t j = i >= 9 ? i - 9 : 0; j < i + 9 && j < 4096; j++)
            ASSERT_EQ(signature_test_bit(sig.data(), j), j == i) << "set " << i << " tested " << j;
    }
    // Setting a bit keeps the others.
    std::fill(sig.begin(), sig.end(), 0xFF);
    sig[3] = 0x5A;
    signature_set_bit(sig.data(), 3 * 8 + 0);
    EXPECT_EQ(sig[3], 0x5B);
    EXPECT_EQ(sig[2], 0xFF);
}

TEST(SignatureMask, LastBitOfEveryLength)
{
    std::vector<uint8_t> q(kMaxSignatureBytes), with(kMaxSignatureBytes),
        without(kMaxSignatureBytes), all(kMaxSignatureBytes);
    for (int m = 1; m <= kMaxSignatureBits; m++) {
        int nbytes = signature_bytes(m);
        uint32_t last = static_cast<uint32_t>(m - 1);
        std::fill(q.begin(), q.end(), 0);
        std::fill(with.begin(), with.end(), 0);
        std::fill(without.begin(), without.end(), 0);
        std::fill(all.begin(), all.end(), 0);
        signature_set_bit(q.data(), last);
        signature_set_bit(with.data(), last);
        for (uint32_t pos = 0; pos < last; pos++)
            signature_set_bit(without.data(), pos);
        for (uint32_t pos = 0; pos <= last; pos++)
            signature_set_bit(all.data(), pos);

        SignatureMask mask;
        mask.build(q.data(), nbytes);
        ASSERT_FALSE(mask.empty()) << "m " << m;
        ASSERT_TRUE(mask.matches(with.data())) << "m " << m;
        ASSERT_TRUE(mask.matches(all.data())) << "m " << m;
        ASSERT_FALSE(mask.matches(without.data())) << "m " << m;

        // add_value with every position set reaches bit m-1 too.
        std::vector<uint8_t> full(nbytes, 0);
        add_value(full.data(), static_cast<uint32_t>(m), static_cast<uint32_t>(m), 0x1234u + m);
        ASSERT_TRUE(signature_test_bit(full.data(), last)) << "m " << m;
        ASSERT_TRUE(mask.matches(full.data())) << "m " << m;
    }
}

TEST(SignatureMask, EveryPositionIsTested)
{
    std::vector<int> lengths;
    for (int m = 1; m <= 256; m++)
        lengths.push_back(m);
    for (int m : {300, 511, 512, 513, 1000, 2047, 2049, 4000, 4095, 4096})
        lengths.push_back(m);
    std::vector<uint8_t> q(kMaxSignatureBytes), one(kMaxSignatureBytes),
        all_but(kMaxSignatureBytes);
    for (int m : lengths) {
        int nbytes = signature_bytes(m);
        std::fill(all_but.begin(), all_but.end(), 0);
        for (uint32_t pos = 0; pos < static_cast<uint32_t>(m); pos++)
            signature_set_bit(all_but.data(), pos);
        for (uint32_t pos = 0; pos < static_cast<uint32_t>(m); pos++) {
            std::fill(q.begin(), q.begin() + nbytes, 0);
            std::fill(one.begin(), one.begin() + nbytes, 0);
            signature_set_bit(q.data(), pos);
            signature_set_bit(one.data(), pos);
            all_but[pos / 8] = static_cast<uint8_t>(all_but[pos / 8] & ~(1u << (pos % 8)));
            SignatureMask mask;
            mask.build(q.data(), nbytes);
            bool ok_one = mask.matches(one.data());
            bool ok_all_but = mask.matches(all_but.data());
            signature_set_bit(all_but.data(), pos);
            bool ok_all = mask.matches(all_but.data());
            ASSERT_TRUE(ok_one) << "m " << m << " pos " << pos;
            ASSERT_FALSE(ok_all_but) << "m " << m << " pos " << pos;
            ASSERT_TRUE(ok_all) << "m " << m << " pos " << pos;
        }
    }
}

TEST(SignatureMask, EmptyQueryMatchesEverything)
{
    std::mt19937_64 rng(11);
    for (int m : kLengths) {
        int nbytes = signature_bytes(m);
        std::vector<uint8_t> q(nbytes, 0), sig(nbytes, 0);
        SignatureMask mask;
        mask.build(q.data(), nbytes);
        EXPECT_TRUE(mask.empty()) << "m " << m;
        EXPECT_TRUE(mask.matches(sig.data())) << "m " << m;
        random_bits(rng, sig.data(), m, 0.5);
        EXPECT_TRUE(mask.matches(sig.data())) << "m " << m;
        signature_set_bit(q.data(), static_cast<uint32_t>(m / 2));
        mask.build(q.data(), nbytes);
        EXPECT_FALSE(mask.empty()) << "m " << m;
    }
}

TEST(SignatureMask, RebuildForgetsThePreviousQuery)
{
    // One mask object is reused scan after scan: build() must start over,
    // also when switching between the short and the long path.
    SignatureMask mask;
    std::vector<uint8_t> big(512, 0), small(2, 0), zero(512, 0);
    signature_set_bit(big.data(), 4000);
    mask.build(big.data(), 512);
    EXPECT_FALSE(mask.matches(zero.data()));
    mask.build(small.data(), 2); // empty short query
    EXPECT_TRUE(mask.matches(zero.data()));
    signature_set_bit(small.data(), 3);
    mask.build(small.data(), 2);
    EXPECT_FALSE(mask.matches(zero.data()));
    std::vector<uint8_t> q10(10, 0);
    mask.build(q10.data(), 10); // empty long query
    EXPECT_TRUE(mask.empty());
    EXPECT_TRUE(mask.matches(zero.data()));
}

TEST(SignatureMask, ReadsNoBytePastTheSignature)
{
    // Bytes after the query are garbage (another signature, a TID): they
    // must not count.  If build() read past nbytes, the 0xFF bytes after
    // the query would become query bits the signature lacks.
    std::mt19937_64 rng(12);
    for (int nbytes = 2; nbytes <= kMaxSignatureBytes; nbytes += 2) {
        for (int trial = 0; trial < 8; trial++) {
            std::vector<uint8_t> q(nbytes + 16, 0xFF), sig(nbytes + 16, 0x00);
            random_bits(rng, q.data(), nbytes * 8, trial == 0 ? 1.0 : 0.3);
            std::memcpy(sig.data(), q.data(), static_cast<size_t>(nbytes));
            ASSERT_TRUE(mask_matches(q.data(), sig.data(), nbytes)) << "nbytes " << nbytes;
            // and the signature still has to cover its last byte
            if (q[nbytes - 1] != 0) {
                sig[nbytes - 1] = 0;
                ASSERT_FALSE(mask_matches(q.data(), sig.data(), nbytes)) << "nbytes " << nbytes;
            }
            // Buffers of exactly nbytes on the heap: an over-read here is
            // what a sanitizer build (-fsanitize=address) reports.
            std::vector<uint8_t> q_exact(q.begin(), q.begin() + nbytes);
            std::vector<uint8_t> sig_exact(nbytes, 0xFF);
            SignatureMask mask;
            mask.build(q_exact.data(), nbytes);
            ASSERT_TRUE(mask.matches(sig_exact.data())) << "nbytes " << nbytes;
            uint16_t out[1];
            ASSERT_EQ(mask.match_array(sig_exact.data(), 1, out), 1) << "nbytes " << nbytes;
        }
    }
}

TEST(SignatureMask, AgreesWithBitByBitReference)
{
    // Signatures of many densities; queries that are a subset of the
    // signature's bits, with and without one extra bit anywhere (also in
    // the overlapping last word), and independent random queries.
    std::mt19937_64 rng(13);
    std::vector<uint8_t> sig(kMaxSignatureBytes), q(kMaxSignatureBytes);
    long outcomes[2] = {0, 0};
    for (int m = 1; m <= 300; m++) {
        int nbytes = signature_bytes(m);
        for (int trial = 0; trial < 200; trial++) {
            random_bits(rng, sig.data(), m, std::uniform_real_distribution<double>(0, 1)(rng));
            std::bernoulli_distribution keep(0.3);
            std::memset(q.data(), 0, static_cast<size_t>(nbytes));
            switch (trial % 3) {
            case 0: // a subset: must match
            case 1: // a subset plus one bit: usually does not match
                for (uint32_t pos = 0; pos < static_cast<uint32_t>(m); pos++)
                    if (signature_test_bit(sig.data(), pos) && keep(rng))
                        signature_set_bit(q.data(), pos);
                if (trial % 3 == 1)
                    signature_set_bit(q.data(), static_cast<uint32_t>(rng() % m));
                break;
            case 2: // independent
                random_bits(rng, q.data(), m, 0.05);
                break;
            }
            bool ref = reference_matches(sig.data(), q.data(), nbytes);
            ASSERT_EQ(mask_matches(q.data(), sig.data(), nbytes), ref)
                << "m " << m << " trial " << trial;
            if (trial % 3 == 0) {
                ASSERT_TRUE(ref);
            }
            outcomes[ref]++;
        }
    }
    for (int m : {511, 512, 513, 1000, 2047, 2049, 4000, 4095, 4096}) {
        int nbytes = signature_bytes(m);
        for (int trial = 0; trial < 300; trial++) {
            random_bits(rng, sig.data(), m, 0.9);
            std::memcpy(q.data(), sig.data(), static_cast<size_t>(nbytes));
            // drop some bits, then maybe add one the signature lacks
            for (int k = 0; k < 20; k++)
                q[rng() % nbytes] &= static_cast<uint8_t>(rng());
            if (trial % 2)
                signature_set_bit(q.data(), static_cast<uint32_t>(rng() % m));
            bool ref = reference_matches(sig.data(), q.data(), nbytes);
            ASSERT_EQ(mask_matches(q.data(), sig.data(), nbytes), ref)
                << "m " << m << " trial " << trial;
            outcomes[ref]++;
        }
    }
    // Both answers were exercised plenty.
    EXPECT_GT(outcomes[0], 20000);
    EXPECT_GT(outcomes[1], 20000);
}

TEST(SignatureMask, MatchArrayAgreesWithMatches)
{
    std::mt19937_64 rng(14);
    for (int m : kLengths) {
        int nbytes = signature_bytes(m);
        const int count = 1360; // more than any page holds
        std::vector<uint8_t> sigs(static_cast<size_t>(count) * nbytes);
        for (int i = 0; i < count; i++)
            random_bits(rng, &sigs[static_cast<size_t>(i) * nbytes], m, (i % 10) / 9.0);
        for (int trial = 0; trial < 20; trial++) {
            std::vector<uint8_t> q(nbytes);
            random_bits(rng, q.data(), m, trial < 10 ? 0.02 : 0.2);
            SignatureMask mask;
            mask.build(q.data(), nbytes);
            std::vector<uint16_t> out(count, 0xFFFF);
            int n = mask.match_array(sigs.data(), count, out.data());
            std::vector<uint16_t> expect;
            for (int i = 0; i < count; i++)
                if (reference_matches(&sigs[static_cast<size_t>(i) * nbytes], q.data(), nbytes))
                    expect.push_back(static_cast<uint16_t>(i));
            ASSERT_EQ(n, static_cast<int>(expect.size())) << "m " << m;
            for (int i = 0; i < n; i++)
                ASSERT_EQ(out[i], expect[i]) << "m " << m << " i " << i;
            EXPECT_EQ(mask.match_array(sigs.data(), 0, out.data()), 0);
            // Prefixes agree as well.
            int half = mask.match_array(sigs.data(), count / 2, out.data());
            int expect_half = 0;
            for (uint16_t e : expect)
                expect_half += e < count / 2;
            ASSERT_EQ(half, expect_half);
        }
    }
}

// Issue requirement 1: a signature always matches a query built from any
// subset of the row's own values, for a million random rows, over many
// lengths.  Random queries from other values are checked against the
// bit-by-bit reference.
TEST(NoFalseNegatives, MillionRandomInserts)
{
    std::mt19937_64 rng(15);
    const int kRowsTotal = 1000000;
    const int kPerLength = kRowsTotal / static_cast<int>(sizeof kLengths / sizeof kLengths[0]) + 1;
    const int kMaxCols = 8;
    long rows = 0, false_negatives = 0, disagreements = 0, random_matched = 0,
         random_unmatched = 0;

    auto value_hash = [](int col, uint64_t value) {
        // Half the columns like integers, half like byte strings.
        if (col % 2 == 0)
            return hash_int(static_cast<int64_t>(value), column_seed(col));
        unsigned char text[12];
        std::memcpy(text, &value, 8);
        std::memcpy(text + 8, "txt", 4);
        return hash_bytes(text, 4 + value % 9, column_seed(col));
    };

    std::vector<uint8_t> sig(kMaxSignatureBytes), q(kMaxSignatureBytes);
    for (int m : kLengths) {
        int nbytes = signature_bytes(m);
        uint32_t um = static_cast<uint32_t>(m);
        for (int r = 0; r < kPerLength; r++, rows++) {
            int ncols = 1 + static_cast<int>(rng() % kMaxCols);
            uint64_t values[kMaxCols];
            uint32_t bits[kMaxCols];
            std::memset(sig.data(), 0, static_cast<size_t>(nbytes));
            for (int c = 0; c < ncols; c++) {
                values[c] = rng();
                // Mostly few bits per value, sometimes any number up to m.
                uint32_t limit = rng() % 32 == 0 ? um : std::min(um, 16u);
                bits[c] = 1 + static_cast<uint32_t>(rng() % limit);
                add_value(sig.data(), um, bits[c], value_hash(c, values[c]));
            }
            uint32_t all = (1u << ncols) - 1;
            // Two queries on subsets of the row's own values.
            for (int k = 0; k < 2; k++) {
                uint32_t subset = 0;
                while (subset == 0)
                    subset = static_cast<uint32_t>(rng()) & all;
                std::memset(q.data(), 0, static_cast<size_t>(nbytes));
                for (int c = 0; c < ncols; c++)
                    if (subset & (1u << c))
                        add_value(q.data(), um, bits[c], value_hash(c, values[c]));
                if (!mask_matches(q.data(), sig.data(), nbytes)) {
                    if (false_negatives++ < 5)
                        ADD_FAILURE() << "false negative: m " << m << " row " << r
                                      << " ncols " << ncols << " subset " << subset;
                }
            }
            // One query on other values of a random subset of the columns.
            uint32_t subset = 0;
            while (subset == 0)
                subset = static_cast<uint32_t>(rng()) & all;
            std::memset(q.data(), 0, static_cast<size_t>(nbytes));
            for (int c = 0; c < ncols; c++)
                if (subset & (1u << c))
                    add_value(q.data(), um, bits[c], value_hash(c, rng()));
            bool got = mask_matches(q.data(), sig.data(), nbytes);
            bool ref = reference_matches(sig.data(), q.data(), nbytes);
            (ref ? random_matched : random_unmatched)++;
            if (got != ref && disagreements++ < 5)
                ADD_FAILURE() << "mask says " << got << ", bits say " << ref << ": m " << m
                              << " row " << r;
        }
    }
    EXPECT_GE(rows, kRowsTotal);
    EXPECT_EQ(false_negatives, 0);
    EXPECT_EQ(disagreements, 0);
    // The random queries gave both answers (small m match often).
    EXPECT_GT(random_matched, 10000);
    EXPECT_GT(random_unmatched, 10000);
}
