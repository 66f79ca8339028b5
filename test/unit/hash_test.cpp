// Unit tests of src/core/hash.{hpp,cpp}: how indexed values become 64-bit
// hashes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include "core/hash.hpp"
#include "core/page_layout.hpp"

using namespace bloomidx;

TEST(Hash, KnownAnswers)
{
    // These values are part of the on-disk format: every signature stored
    // in an existing index was computed with them.  If this test fails,
    // the hash changed and existing indexes would silently return wrong
    // results (false negatives).  Do not update the constants; keep the old
    // hash for old indexes and bump kHashXxh3V2 (page_layout.hpp) for the
    // new one.  (Version 2 changed the glue's hashing of char(n), not these.)
    ASSERT_EQ(kHashXxh3V2, 2) << "update the known answers with the hash version";
    EXPECT_EQ(hash_int(42, column_seed(0)), 0x4fcfa6b7fa3ef77cULL);
    EXPECT_EQ(hash_bytes("abc", 3, column_seed(2)), 0x8838378c57132352ULL);
    EXPECT_EQ(null_hash(31), 0x4679f0fc5a341659ULL);
    // What the module checks when it loads (handler.cpp), with the same values.
    EXPECT_TRUE(hash_known_answers_ok());
}

TEST(Hash, IntIsDeterministic)
{
    std::mt19937_64 rng(1);
    for (int i = 0; i < 10000; i++) {
        int64_t v = static_cast<int64_t>(rng());
        uint64_t seed = column_seed(static_cast<int>(rng() % 32));
        EXPECT_EQ(hash_int(v, seed), hash_int(v, seed));
        int64_t copy = v;
        EXPECT_EQ(hash_int(v, seed), hash_int(copy, seed));
    }
}

TEST(Hash, IntIsLittleEndianBytesOfInt64)
{
    // hash_int hashes the 8 little-endian bytes of the value widened to
    // int64, whatever the platform: int2/int4/int8 of equal value and all
    // machines agree.  Check against hash_bytes of explicitly built bytes.
    std::mt19937_64 rng(2);
    const int64_t fixed[] = {0, 1, -1, 42, -42, INT16_MIN, INT16_MAX, INT32_MIN, INT32_MAX,
                             INT64_MIN, INT64_MAX};
    for (int i = 0; i < 2000; i++) {
        int64_t v = i < 11 ? fixed[i] : static_cast<int64_t>(rng());
        unsigned char le[8];
        for (int k = 0; k < 8; k++)
            le[k] = static_cast<unsigned char>(static_cast<uint64_t>(v) >> (8 * k));
        for (int c : {0, 1, 31}) {
            uint64_t seed = column_seed(c);
            EXPECT_EQ(hash_int(v, seed), hash_bytes(le, 8, seed)) << "value " << v;
        }
    }
}

TEST(Hash, DifferentValuesDiffer)
{
    std::set<uint64_t> seen;
    for (int64_t v = -5000; v < 5000; v++)
        seen.insert(hash_int(v, column_seed(0)));
    EXPECT_EQ(seen.size(), 10000u); // a 64-bit collision here would be a broken hash
}

TEST(Hash, ColumnSeedsAreDistinct)
{
    std::set<uint64_t> seeds;
    for (int c = 0; c < 32; c++)
        seeds.insert(column_seed(c));
    EXPECT_EQ(seeds.size(), 32u);
    for (int c = 0; c < 32; c++)
        EXPECT_EQ(column_seed(c), column_seed(c));
}

TEST(Hash, SeedChangesTheHash)
{
    EXPECT_NE(hash_int(42, column_seed(0)), hash_int(42, column_seed(1)));
    EXPECT_NE(hash_bytes("abc", 3, column_seed(0)), hash_bytes("abc", 3, column_seed(1)));
    // Equal values in different columns hash differently for all 32 columns.
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{123456789}}) {
        std::set<uint64_t> hashes;
        for (int c = 0; c < 32; c++)
            hashes.insert(hash_int(v, column_seed(c)));
        EXPECT_EQ(hashes.size(), 32u) << "value " << v;
    }
}

TEST(Hash, BytesIsDeterministicAndSensitive)
{
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; i++) {
        std::string a(rng() % 200, '\0');
        for (char &ch : a)
            ch = static_cast<char>(rng());
        std::string b = a; // a separate buffer with the same bytes
        uint64_t seed = column_seed(static_cast<int>(rng() % 32));
        uint64_t h = hash_bytes(a.data(), a.size(), seed);
        EXPECT_EQ(h, hash_bytes(b.data(), b.size(), seed));
        if (!a.empty()) {
            b[rng() % b.size()] ^= static_cast<char>(1u << (rng() % 8));
            EXPECT_NE(h, hash_bytes(b.data(), b.size(), seed));
            // The length is part of the value: a prefix hashes differently.
            EXPECT_NE(h, hash_bytes(a.data(), a.size() - 1, seed));
        }
    }
    // Only `len` bytes are read: what follows does not matter.
    const char x[] = "abcXYZ", y[] = "abc123";
    EXPECT_EQ(hash_bytes(x, 3, column_seed(0)), hash_bytes(y, 3, column_seed(0)));
    EXPECT_NE(hash_bytes(x, 4, column_seed(0)), hash_bytes(y, 4, column_seed(0)));
    // The empty string has a hash too, and it depends on the seed.
    EXPECT_NE(hash_bytes("", 0, column_seed(0)), hash_bytes("", 0, column_seed(1)));
}
