// Unit tests of the entry sums of a data page (page_layout.hpp): the sums
// of its signatures and of its TIDs, kept in the special space, which every
// change keeps current and every reader checks.  They are what turns a
// flipped signature bit (a silent false negative otherwise) into an error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/page_layout.hpp"
#include "core/signature.hpp"

using namespace bloomidx;

namespace {

struct alignas(8) Page {
    uint8_t b[kBlockSize];
};

// The sum as the format defines it, one 16-bit word at a time.
uint16_t plain_sum(const uint8_t *p, uint32_t len)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i + 1 < len; i += 2) {
        uint16_t w;
        std::memcpy(&w, p + i, 2);
        total += w;
    }
    return static_cast<uint16_t>(total);
}

uint16_t get_u16(const uint8_t *p, uint32_t off)
{
    uint16_t v;
    std::memcpy(&v, p + off, 2);
    return v;
}

// An empty data page, as PageInit and the glue leave it (sums zero).
void init_data_page(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    uint16_t lower = kPageHeaderSize, upper = kSpecialOffset;
    std::memcpy(page + kPdLowerOffset, &lower, 2);
    std::memcpy(page + kPdUpperOffset, &upper, 2);
    std::memcpy(page + kPdSpecialOffset, &upper, 2);
    PageOpaque *op = page_opaque(page);
    op->flags = kPageData;
    op->format = kFormatRowWise;
    op->page_id = kPageId;
}

// The sums recomputed from the entries, in the stored layout.
uint32_t recomputed_sums(const uint8_t *page, const RowPageGeometry &g)
{
    uint32_t n = page_opaque(page)->count;
    uint32_t sig = plain_sum(page + kPageHeaderSize, n * g.signature_bytes);
    uint32_t tid = plain_sum(page + row_page_upper(g, n), n * kTidSize);
    return sig | (tid << 16);
}

void append_random(uint8_t *page, const RowPageGeometry &g, std::mt19937_64 &rng)
{
    std::vector<uint8_t> entry(g.signature_bytes + kTidSize);
    for (uint8_t &b : entry)
        b = static_cast<uint8_t>(rng());
    row_page_append(page, g, entry.data(), entry.data() + g.signature_bytes);
}

} // namespace

// fast(bytes, len) equals reference(bytes, len) on random bytes at every
// even length up to 700, at several alignments, and over a whole page.
template <typename Fast, typename Reference>
void expect_same_sums(Fast fast, Reference reference, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> buf(kBlockSize + 64);
    for (uint8_t &b : buf)
        b = static_cast<uint8_t>(rng());
    for (uint32_t len = 0; len <= 700; len += 2)
        for (uint32_t off : {0u, 1u, 2u, 7u, 24u, 33u})
            ASSERT_EQ(fast(buf.data() + off, len), reference(buf.data() + off, len))
                << "len " << len << " offset " << off;
    ASSERT_EQ(fast(buf.data(), kBlockSize), reference(buf.data(), kBlockSize));
}

TEST(EntrySum, IsTheSumOfSixteenBitWordsAtAnyAlignmentAndLength)
{
    expect_same_sums(entry_sum, plain_sum, 7);
    // Wraps mod 2^16: 0xFFFF words.
    std::vector<uint8_t> ones(8160, 0xFF);
    EXPECT_EQ(entry_sum(ones.data(), 8160), static_cast<uint16_t>(4080u * 0xFFFFu));
}

TEST(EntrySums, StayCurrentThroughAppendsAndCompactions)
{
    std::mt19937_64 rng(11);
    for (int bits : {16, 32, 80, 96, 100, 128, 200, 256, 512, 1000, 4096}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        Page p;
        init_data_page(p.b);
        ASSERT_EQ(row_page_stored_sums(p.b), 0u) << "an empty page sums to zero";
        for (int round = 0; round < 6; round++) {
            // Fill some, then compact away a random subset, as VACUUM does.
            uint32_t target = static_cast<uint32_t>(rng() % (g.capacity + 1));
            while (page_opaque(p.b)->count < target)
                append_random(p.b, g, rng);
            ASSERT_EQ(row_page_stored_sums(p.b), recomputed_sums(p.b, g)) << "bits " << bits;
            ASSERT_EQ(check_row_page(p.b, g), PageProblem::None) << "bits " << bits;
            uint32_t count = page_opaque(p.b)->count, kept = 0;
            for (uint32_t i = 0; i < count; i++) {
                if (rng() % 3 == 0)
                    continue;
                if (kept != i)
                    row_page_move(p.b, g, i, kept);
                kept++;
            }
            row_page_truncate(p.b, g, kept);
            ASSERT_EQ(row_page_stored_sums(p.b), recomputed_sums(p.b, g)) << "bits " << bits;
            ASSERT_EQ(check_row_page(p.b, g), PageProblem::None) << "bits " << bits;
        }
        row_page_truncate(p.b, g, 0);
        EXPECT_EQ(row_page_stored_sums(p.b), 0u) << "bits " << bits;
    }
}

TEST(EntrySums, EveryFlippedBitOfEveryEntryIsFound)
{
    std::mt19937_64 rng(13);
    for (int bits : {16, 80, 96, 200, 1024}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        Page p;
        init_data_page(p.b);
        uint32_t n = g.capacity - 3;
        while (page_opaque(p.b)->count < n)
            append_random(p.b, g, rng);
        const uint32_t lower = get_u16(p.b, kPdLowerOffset), upper = get_u16(p.b, kPdUpperOffset);
        for (uint32_t off = kPageHeaderSize; off < lower; off++)
            for (int bit = 0; bit < 8; bit++) {
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
                ASSERT_EQ(check_row_page(p.b, g), PageProblem::BadSignatures) << off << ":" << bit;
                ASSERT_EQ(check_row_page(p.b, g, EntryChecks::Signatures), PageProblem::BadSignatures);
                ASSERT_EQ(check_row_page_signatures(p.b, g), PageProblem::BadSignatures);
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
            }
        for (uint32_t off = upper; off < kSpecialOffset; off++)
            for (int bit = 0; bit < 8; bit++) {
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
                ASSERT_EQ(check_row_page(p.b, g), PageProblem::BadTids) << off << ":" << bit;
                // A scan checks the TIDs only where a row matched.
                ASSERT_EQ(check_row_page(p.b, g, EntryChecks::Signatures), PageProblem::None);
                ASSERT_EQ(check_row_page_tids(p.b, g), PageProblem::BadTids);
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
            }
        // The sums themselves, damaged.
        for (uint32_t off = kSpecialOffset + 6; off < kSpecialOffset + 10; off++)
            for (int bit = 0; bit < 8; bit++) {
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
                ASSERT_NE(check_row_page(p.b, g), PageProblem::None) << off << ":" << bit;
                p.b[off] ^= static_cast<uint8_t>(1u << bit);
            }
        ASSERT_EQ(check_row_page(p.b, g), PageProblem::None);
    }
}

TEST(EntrySums, RandomDamageOfSeveralBytesIsAlmostAlwaysFound)
{
    // 1 to 4 bytes of the entries overwritten with random values, as the
    // corruption TAP test does: a miss needs the changes to cancel mod 2^16.
    std::mt19937_64 rng(17);
    RowPageGeometry g = row_page_geometry(10);
    Page p;
    init_data_page(p.b);
    while (page_opaque(p.b)->count < g.capacity)
        append_random(p.b, g, rng);
    const Page pristine = p;
    int trials = 0, missed = 0;
    while (trials < 20000) {
        p = pristine;
        int n = 1 + static_cast<int>(rng() % 4);
        for (int i = 0; i < n; i++) {
            uint32_t off = kPageHeaderSize + static_cast<uint32_t>(rng() % kPayloadBytes);
            p.b[off] = static_cast<uint8_t>(rng());
        }
        if (std::memcmp(p.b, pristine.b, kBlockSize) == 0)
            continue;
        trials++;
        missed += check_row_page(p.b, g) == PageProblem::None;
    }
    EXPECT_LE(missed, 20) << missed << " of " << trials << " damaged pages passed";
}

namespace {

// page_sum as the format defines it: word i weighed 2i + 1, mod 2^16.
uint16_t weighted_sum(const uint8_t *p, uint32_t len)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i + 1 < len; i += 2) {
        uint16_t w;
        std::memcpy(&w, p + i, 2);
        total += w * (i + 1);
    }
    return static_cast<uint16_t>(total);
}

} // namespace

TEST(PageSum, IsTheWeightedSumAtAnyAlignmentAndLength)
{
    expect_same_sums(page_sum, weighted_sum, 11);
}

// What the plain sum cannot see, the weighted one does: words swapped or
// moved within a slice page; and every change of a single word, as before.
TEST(PageSum, FindsSwappedWordsAndEveryChangedWord)
{
    std::mt19937_64 rng(12);
    std::vector<uint8_t> page(8128);
    for (uint8_t &b : page)
        b = static_cast<uint8_t>(rng());
    const uint16_t sum = page_sum(page.data(), 8128);
    int swaps_seen = 0, swaps = 0;
    for (int t = 0; t < 2000; t++) {
        std::vector<uint8_t> p = page;
        uint32_t i = static_cast<uint32_t>(rng() % 4064), j = static_cast<uint32_t>(rng() % 4064);
        if (std::memcmp(&p[2 * i], &p[2 * j], 2) == 0)
            continue;
        std::swap(p[2 * i], p[2 * j]);
        std::swap(p[2 * i + 1], p[2 * j + 1]);
        swaps++;
        swaps_seen += page_sum(p.data(), 8128) != sum;
        EXPECT_EQ(entry_sum(p.data(), 8128), entry_sum(page.data(), 8128)); // the plain sum is blind
    }
    EXPECT_GE(swaps_seen, swaps - 2) << swaps_seen << " of " << swaps << " swaps seen";
    // 64-bit words swapped (a slice's lines moved): seen.
    std::vector<uint8_t> p = page;
    for (int k = 0; k < 8; k++)
        std::swap(p[64 + k], p[4000 + k]);
    EXPECT_NE(page_sum(p.data(), 8128), sum);
    // Every value of one word, at several places: always seen.
    for (uint32_t w : {0u, 1u, 2047u, 2048u, 4063u}) {
        std::vector<uint8_t> q = page;
        uint16_t orig;
        std::memcpy(&orig, &q[2 * w], 2);
        for (uint32_t v = 0; v < 65536; v++) {
            if (v == orig)
                continue;
            uint16_t nv = static_cast<uint16_t>(v);
            std::memcpy(&q[2 * w], &nv, 2);
            ASSERT_NE(page_sum(q.data(), 8128), sum) << "word " << w << " value " << v;
            // And page_sum_change says how the sum moves.
            ASSERT_EQ(static_cast<uint16_t>(sum + page_sum_change(w, orig, nv)),
                      page_sum(q.data(), 8128));
        }
    }
}
