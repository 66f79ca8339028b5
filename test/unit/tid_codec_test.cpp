// Unit tests of src/core/tid_codec.hpp: groups of heap TIDs round-trip in
// any order, within the bound; a build's TIDs (heap order) take under 2
// bytes each, under a fifth of a byte at 60 rows a heap page or more; damaged bytes are refused, or decode to other TIDs (which
// the segment's sums are there to catch), never read past their group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/tid_codec.hpp"

using namespace bloomidx;

namespace {

bool same(const HeapTid &a, const HeapTid &b)
{
    return a.block == b.block && a.offset == b.offset;
}

// TIDs as a heap scan yields them: blocks in order, each with `per_block`
// rows at offsets 1.. (some skipped, as dead or HOT-updated rows leave).
std::vector<HeapTid> heap_order(size_t n, uint32_t per_block, std::mt19937_64 &rng)
{
    std::vector<HeapTid> tids;
    uint32_t block = static_cast<uint32_t>(rng() % 1000);
    while (tids.size() < n) {
        for (uint16_t off = 1; off <= per_block && tids.size() < n; off++)
            if (rng() % 10 != 0)
                tids.push_back(HeapTid{block, off});
        block += 1 + static_cast<uint32_t>(rng() % 3 == 0);
    }
    return tids;
}

// Encodes tids group by group; returns the bytes and each group's start.
std::vector<uint8_t> encode_all(const std::vector<HeapTid> &tids, std::vector<size_t> *starts)
{
    std::vector<uint8_t> out;
    for (size_t first = 0; first < tids.size(); first += kTidGroupRows) {
        uint32_t n = static_cast<uint32_t>(std::min<size_t>(kTidGroupRows, tids.size() - first));
        std::vector<uint8_t> buf(tid_group_bound(n));
        size_t len = tid_group_encode(&tids[first], n, buf.data(), buf.size());
        EXPECT_GT(len, 0u);
        EXPECT_LE(len, tid_group_bound(n));
        starts->push_back(out.size());
        out.insert(out.end(), buf.begin(), buf.begin() + static_cast<long>(len));
    }
    starts->push_back(out.size());
    return out;
}

void expect_round_trip(const std::vector<HeapTid> &tids)
{
    std::vector<size_t> starts;
    std::vector<uint8_t> bytes = encode_all(tids, &starts);
    HeapTid out[kTidGroupRows];
    for (size_t g = 0; g + 1 < starts.size(); g++) {
        size_t first = g * kTidGroupRows;
        uint32_t n = static_cast<uint32_t>(std::min<size_t>(kTidGroupRows, tids.size() - first));
        ASSERT_TRUE(tid_group_decode(bytes.data() + starts[g], starts[g + 1] - starts[g], n, out))
            << "group " << g;
        for (uint32_t i = 0; i < n; i++)
            ASSERT_TRUE(same(out[i], tids[first + i])) << "group " << g << " row " << i;
    }
}

} // namespace

TEST(TidCodec, HeapOrderRoundTripsUnderTwoBytesATid)
{
    std::mt19937_64 rng(11);
    for (uint32_t per_block : {1u, 7u, 60u, 226u, 291u}) {
        std::vector<HeapTid> tids = heap_order(65024, per_block, rng);
        expect_round_trip(tids);
        std::vector<size_t> starts;
        double bytes = static_cast<double>(encode_all(tids, &starts).size());
        // One row a block is the worst heap order: every step is a block
        // step (2 bytes) besides each group's 6-byte head.
        EXPECT_LT(bytes / static_cast<double>(tids.size()), per_block == 1 ? 2.2 : 1.4)
            << per_block << " rows a block";
    }
}

// A table loaded in one go: every row of each heap block, in order.  Its
// groups are runs (two bytes) and a block step (two or three): about a
// tenth of format 18's byte a row.
TEST(TidCodec, RowsOfALoadedTableAreRuns)
{
    for (uint32_t per_block : {1u, 2u, 3u, 4u, 60u, 157u, 291u, 2048u}) {
        std::vector<HeapTid> tids;
        for (uint32_t block = 7; tids.size() < 65024; block++)
            for (uint32_t off = 1; off <= per_block && tids.size() < 65024; off++)
                tids.push_back(HeapTid{block, static_cast<uint16_t>(off)});
        expect_round_trip(tids);
        std::vector<size_t> starts;
        double bytes = static_cast<double>(encode_all(tids, &starts).size());
        double bound = per_block == 1 ? 2.2 : per_block < 8 ? 1.6 : per_block < 100 ? 0.25 : 0.17;
        EXPECT_LT(bytes / static_cast<double>(tids.size()), bound) << per_block << " rows a block";
    }
    // A group in one block is its head and one run.  (Below, the same
    // layouts against the estimate: typical_tid_bytes.)
    HeapTid one[kTidGroupRows];
    for (uint32_t i = 0; i < kTidGroupRows; i++)
        one[i] = HeapTid{42, static_cast<uint16_t>(1000 + i)};
    uint8_t buf[tid_group_bound(kTidGroupRows)];
    EXPECT_EQ(tid_group_encode(one, kTidGroupRows, buf, sizeof buf), 8u);
}

// Runs of every length at every place of a group, among the other codes:
// what a seal's rows look like (inserts in heap order, with gaps where
// other rows went, and now and then a row from elsewhere).
TEST(TidCodec, RunsOfAnyLengthRoundTrip)
{
    std::mt19937_64 rng(14);
    for (int round = 0; round < 2000; round++) {
        std::vector<HeapTid> tids;
        uint32_t block = static_cast<uint32_t>(rng() % 100000);
        uint16_t offset = static_cast<uint16_t>(1 + rng() % 100);
        size_t n = 1 + rng() % 200;
        while (tids.size() < n) {
            uint64_t r = rng();
            if (r % 4 == 0 || offset >= kMaxHeapOffset) {
                block = static_cast<uint32_t>(block + r % 5); // the same block, or one after
                offset = static_cast<uint16_t>(1 + (r >> 8) % 200);
            } else if (r % 4 == 1 && offset + 3 <= kMaxHeapOffset) {
                offset = static_cast<uint16_t>(offset + 2 + (r >> 8) % 2); // a gap
            } else {
                offset++;
            }
            tids.push_back(HeapTid{block, offset});
        }
        expect_round_trip(tids);
    }
    // A run that ends at the last offset a heap page can hold.
    std::vector<HeapTid> last;
    for (uint32_t i = 0; i < 10; i++)
        last.push_back(HeapTid{3, static_cast<uint16_t>(kMaxHeapOffset - 9 + i)});
    expect_round_trip(last);
}

// The estimate the advisor and the planner use, against the bytes whole
// segments of a table loaded in one go take: within a sixth.
TEST(TidCodec, TypicalBytesFollowRowsAPage)
{
    for (uint32_t per_block : {1u, 2u, 3u, 4u, 7u, 20u, 60u, 157u, 291u}) {
        std::vector<HeapTid> tids;
        for (uint32_t block = 0; tids.size() < 65024; block++)
            for (uint32_t off = 1; off <= per_block && tids.size() < 65024; off++)
                tids.push_back(HeapTid{block, static_cast<uint16_t>(off)});
        std::vector<size_t> starts;
        double bytes = static_cast<double>(encode_all(tids, &starts).size()) / 65024;
        EXPECT_NEAR(typical_tid_bytes(per_block), bytes, bytes / 6) << per_block << " rows a block";
    }
    // Out of range: as one row a page, or the most a page holds.
    EXPECT_EQ(typical_tid_bytes(0), typical_tid_bytes(1));
    EXPECT_EQ(typical_tid_bytes(-5), typical_tid_bytes(1));
    EXPECT_EQ(typical_tid_bytes(1e12), typical_tid_bytes(kMaxHeapOffset));
    EXPECT_GT(typical_tid_bytes(1), typical_tid_bytes(1e12));
}

TEST(TidCodec, AnyOrderRoundTripsWithinTheBound)
{
    std::mt19937_64 rng(12);
    for (int round = 0; round < 200; round++) {
        std::vector<HeapTid> tids(1 + rng() % 300);
        for (HeapTid &t : tids) {
            // Extremes too: block 0 and the last block, offsets 1 and the most.
            uint64_t r = rng();
            t.block = r % 7 == 0 ? 0 : r % 7 == 1 ? UINT32_MAX - 1 : static_cast<uint32_t>(r >> 20);
            t.offset = static_cast<uint16_t>(r % 5 == 0 ? kMaxHeapOffset : 1 + (r >> 8) % kMaxHeapOffset);
        }
        expect_round_trip(tids);
    }
    // Repeated and descending TIDs within one block.
    expect_round_trip({{5, 9}, {5, 9}, {5, 3}, {5, 4}, {4, 2048}, {4, 1}});
}

TEST(TidCodec, RefusesWhatItCannotHold)
{
    HeapTid tids[kTidGroupRows + 1] = {};
    for (HeapTid &t : tids)
        t = HeapTid{1, 1};
    uint8_t out[tid_group_bound(kTidGroupRows + 1)];
    EXPECT_EQ(tid_group_encode(tids, 0, out, sizeof out), 0u);
    EXPECT_EQ(tid_group_encode(tids, kTidGroupRows + 1, out, sizeof out), 0u);
    tids[3].offset = 0;
    EXPECT_EQ(tid_group_encode(tids, 8, out, sizeof out), 0u);
    tids[3].offset = kMaxHeapOffset + 1;
    EXPECT_EQ(tid_group_encode(tids, 8, out, sizeof out), 0u);
    // Too small a buffer: nothing written.
    tids[3].offset = 1;
    uint8_t small[7] = {0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    EXPECT_EQ(tid_group_encode(tids, 8, small, sizeof small), 0u);
    for (uint8_t b : small)
        EXPECT_EQ(b, 0xAA);
}

TEST(TidCodec, DamageIsRefusedOrShowsAsOtherTids)
{
    std::mt19937_64 rng(13);
    std::vector<HeapTid> tids = heap_order(kTidGroupRows, 60, rng);
    uint8_t buf[tid_group_bound(kTidGroupRows)];
    size_t len = tid_group_encode(tids.data(), kTidGroupRows, buf, sizeof buf);
    ASSERT_GT(len, 0u);
    HeapTid out[kTidGroupRows];

    // Every truncation and every extra byte is refused.
    for (size_t cut = 0; cut < len; cut++)
        EXPECT_FALSE(tid_group_decode(buf, cut, kTidGroupRows, out)) << "cut at " << cut;
    uint8_t longer[sizeof buf + 1];
    std::copy(buf, buf + len, longer);
    longer[len] = 0;
    EXPECT_FALSE(tid_group_decode(longer, len + 1, kTidGroupRows, out));
    EXPECT_FALSE(tid_group_decode(buf, len, kTidGroupRows - 1, out));
    EXPECT_FALSE(tid_group_decode(buf, len, 0, out));

    // Every flipped bit: refused, or decoded to TIDs that differ (which the
    // segment's sums then catch); never a crash or a read past the end.
    int refused = 0, flips = 0;
    for (size_t byte = 0; byte < len; byte++)
        for (int bit = 0; bit < 8; bit++, flips++) {
            uint8_t damaged[sizeof buf];
            std::copy(buf, buf + len, damaged);
            damaged[byte] ^= static_cast<uint8_t>(1 << bit);
            if (!tid_group_decode(damaged, len, kTidGroupRows, out)) {
                refused++;
                continue;
            }
            bool differs = false;
            for (uint32_t i = 0; i < kTidGroupRows; i++)
                differs |= !same(out[i], tids[i]);
            EXPECT_TRUE(differs) << "byte " << byte << " bit " << bit;
        }
    // Many flips break the structure (a code's length, an offset's range,
    // the group's length): about a third of them here.
    EXPECT_GT(refused, flips / 4);
}

// The decoder's own checks, one by one, on groups of two TIDs written by
// hand (a head of block and offset, little-endian, then one code): each
// must be refused, whatever a page's sum says of the bytes (the sum cannot
// see every change, helper-68: two flips of bit 15 of 16-bit words).
TEST(TidCodec, EachCheckRefusesItsDamage)
{
    auto group = [](uint32_t block, uint16_t offset, std::vector<uint8_t> code) {
        std::vector<uint8_t> g = {static_cast<uint8_t>(block), static_cast<uint8_t>(block >> 8),
                                  static_cast<uint8_t>(block >> 16), static_cast<uint8_t>(block >> 24),
                                  static_cast<uint8_t>(offset), static_cast<uint8_t>(offset >> 8)};
        g.insert(g.end(), code.begin(), code.end());
        return g;
    };
    auto decodes = [](const std::vector<uint8_t> &g) {
        HeapTid out[2];
        return tid_group_decode(g.data(), g.size(), 2, out);
    };
    // Controls: the hand-written format is the codec's.
    ASSERT_TRUE(decodes(group(1, 1, {0x02})));          // same block, offset + 1
    ASSERT_TRUE(decodes(group(1, 1, {0x05, 0x01})));    // next block, offset 1
    ASSERT_TRUE(decodes(group(1, 2047, {0x02})));       // up to the last offset
    EXPECT_FALSE(decodes(group(1, 0, {0x02})));         // first offset 0
    EXPECT_FALSE(decodes(group(1, kMaxHeapOffset + 1, {0x02}))); // first offset past the last
    EXPECT_FALSE(decodes(group(1, kMaxHeapOffset, {0x02})));     // a step past the last offset
    EXPECT_FALSE(decodes(group(1, 1, {0x00})));         // a run without its length
    EXPECT_FALSE(decodes(group(0, 1, {0x03, 0x01})));   // a block before block 0
    EXPECT_FALSE(decodes(group(UINT32_MAX, 1, {0x05, 0x01}))); // a block past the last
    EXPECT_FALSE(decodes(group(1, 1, {0x05, 0x00})));   // a new block's offset 0
    EXPECT_FALSE(decodes(group(1, 1, {0x05, 0x81, 0x10}))); // ... past the last (2,049)
    EXPECT_FALSE(decodes(group(1, 1, {0x82, 0x00})));   // a longer spelling of a code
    EXPECT_FALSE(decodes(group(1, 1, {0x82})));         // a code cut short
}

// The run's checks, on groups of n TIDs: a run of 3 + the byte after 0.
TEST(TidCodec, EachRunCheckRefusesItsDamage)
{
    auto decodes = [](uint32_t n, uint16_t offset, std::vector<uint8_t> codes) {
        std::vector<uint8_t> g = {9, 0, 0, 0, static_cast<uint8_t>(offset),
                                  static_cast<uint8_t>(offset >> 8)};
        g.insert(g.end(), codes.begin(), codes.end());
        HeapTid out[kTidGroupRows];
        bool ok = tid_group_decode(g.data(), g.size(), n, out);
        for (uint32_t i = 0; ok && i < n; i++)
            EXPECT_TRUE(same(out[i], HeapTid{9, static_cast<uint16_t>(offset + i)}));
        return ok;
    };
    ASSERT_TRUE(decodes(4, 1, {0x00, 0x00}));                    // a run of 3
    ASSERT_TRUE(decodes(64, 1, {0x00, 60}));                     // a run of 63, the most
    ASSERT_TRUE(decodes(6, 1, {0x02, 0x02, 0x00, 0x00}));        // steps, then a run
    ASSERT_TRUE(decodes(4, kMaxHeapOffset - 3, {0x00, 0x00}));   // up to the last offset
    EXPECT_FALSE(decodes(4, kMaxHeapOffset - 2, {0x00, 0x00}));  // past the last offset
    EXPECT_FALSE(decodes(3, 1, {0x00, 0x00}));                   // longer than the rows left
    EXPECT_FALSE(decodes(2, 1, {0x00, 0x00}));                   // ... fewer than a run's fewest
    EXPECT_FALSE(decodes(64, 1, {0x00, 61}));                    // ... past the group
    EXPECT_FALSE(decodes(64, 1, {0x00, 0x80, 0x00}));            // a length of two bytes
    EXPECT_FALSE(decodes(5, 1, {0x00, 0x00}));                   // rows left after the last code
}
