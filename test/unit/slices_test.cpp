// Unit tests of src/core/slices.hpp: the transposed signatures hold
// exactly the rows' bits; a query over slices (equality keys, IN lists,
// live bits) selects exactly the rows a row-by-row test of the same
// signatures selects, at every segment length, so no row is lost.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/page_layout.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"
#include "core/slices.hpp"

using namespace bloomidx;

namespace {

constexpr uint32_t kBits = 96; // signature length of these tests

struct Segment {
    uint32_t nrows;
    uint32_t sig_bytes = static_cast<uint32_t>(signature_bytes(kBits));
    std::vector<uint8_t> signatures;            // row-wise
    std::vector<std::vector<uint64_t>> slices;  // transposed
    std::vector<const uint64_t *> slice_ptrs;
    std::vector<uint64_t *> slice_out;
    std::vector<uint64_t> live;
};

uint64_t value_hash(int column, uint64_t v)
{
    return v * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(column) * 0x632BE59BD9B4E019ULL + 1;
}

// nrows rows over three columns with values drawn from small domains (so
// that queries find rows), each value setting `bits` positions.
Segment make_segment(uint32_t nrows, uint32_t bits, std::mt19937_64 &rng,
                     std::vector<std::vector<uint64_t>> *values)
{
    Segment s;
    s.nrows = nrows;
    s.signatures.assign(static_cast<size_t>(nrows) * s.sig_bytes, 0);
    values->assign(3, std::vector<uint64_t>(nrows));
    for (uint32_t r = 0; r < nrows; r++)
        for (int c = 0; c < 3; c++) {
            uint64_t v = rng() % (c == 0 ? 5 : c == 1 ? 200 : 100000);
            (*values)[c][r] = v;
            add_value(&s.signatures[static_cast<size_t>(r) * s.sig_bytes], kBits, bits,
                      value_hash(c, v));
        }
    s.slices.assign(kBits, std::vector<uint64_t>(kSliceWords, 0));
    for (auto &sl : s.slices) {
        s.slice_ptrs.push_back(sl.data());
        s.slice_out.push_back(sl.data());
    }
    transpose_signatures(s.signatures.data(), s.sig_bytes, nrows, s.sig_bytes, kBits,
                         s.slice_out.data());
    // Most rows live; the dead ones must never be candidates.
    s.live.assign(kSliceWords, 0);
    for (uint32_t r = 0; r < nrows; r++)
        if (rng() % 10 != 0)
            s.live[r / 64] |= uint64_t{1} << (r % 64);
    return s;
}

// The positions one value sets.
std::vector<uint32_t> positions_of(int column, uint64_t v, uint32_t bits)
{
    std::vector<uint8_t> q(static_cast<size_t>(signature_bytes(kBits)), 0);
    add_value(q.data(), kBits, bits, value_hash(column, v));
    std::vector<uint32_t> pos;
    for (uint32_t j = 0; j < kBits; j++)
        if (signature_test_bit(q.data(), j))
            pos.push_back(j);
    return pos;
}

bool row_has(const Segment &s, uint32_t r, const std::vector<uint32_t> &pos)
{
    for (uint32_t j : pos)
        if (!signature_test_bit(&s.signatures[static_cast<size_t>(r) * s.sig_bytes], j))
            return false;
    return true;
}

bool live(const Segment &s, uint32_t r)
{
    return (s.live[r / 64] >> (r % 64)) & 1;
}

} // namespace

TEST(Slices, TransposeHoldsEveryBitOfEveryRow)
{
    std::mt19937_64 rng(21);
    std::vector<std::vector<uint64_t>> values;
    for (uint32_t nrows : {1u, 63u, 64u, 511u, 513u, 40000u, kSegmentRows}) {
        Segment s = make_segment(nrows, 5, rng, &values);
        for (uint32_t r = 0; r < nrows; r++)
            for (uint32_t j = 0; j < kBits; j++)
                ASSERT_EQ((s.slices[j][r / 64] >> (r % 64)) & 1,
                          signature_test_bit(&s.signatures[static_cast<size_t>(r) * s.sig_bytes], j) ? 1u : 0u)
                    << nrows << " rows, row " << r << " bit " << j;
        // Nothing past the rows.
        for (uint32_t j = 0; j < kBits; j++)
            for (uint32_t r = nrows; r < kSegmentRows; r++)
                ASSERT_EQ((s.slices[j][r / 64] >> (r % 64)) & 1, 0u);
    }
}

// A merge puts the live rows' signatures back together from the slices:
// each live row's exactly, packed in row order; dead rows leave nothing.
TEST(Slices, UntransposeGivesBackTheLiveRowsSignatures)
{
    std::mt19937_64 rng(23);
    std::vector<std::vector<uint64_t>> values;
    for (uint32_t nrows : {1u, 64u, 700u, 40000u, kSegmentRows}) {
        Segment s = make_segment(nrows, 5, rng, &values);
        std::vector<uint32_t> slot(kSegmentRows, 0);
        uint32_t nlive = 0;
        for (uint32_t r = 0; r < nrows; r++)
            if (live(s, r))
                slot[r] = nlive++;
        std::vector<uint8_t> out(static_cast<size_t>(nlive + 1) * s.sig_bytes, 0);
        for (uint32_t j = 0; j < kBits; j++)
            ASSERT_TRUE(untranspose_slice(s.slices[j].data(), s.live.data(), nrows, j, slot.data(),
                                          out.data(), s.sig_bytes));
        for (uint32_t r = 0; r < nrows; r++) {
            if (live(s, r)) {
                ASSERT_EQ(0, std::memcmp(&out[static_cast<size_t>(slot[r]) * s.sig_bytes],
                                         &s.signatures[static_cast<size_t>(r) * s.sig_bytes],
                                         s.sig_bytes))
                    << nrows << " rows, row " << r;
            }
        }
        // Nothing written past the live rows.
        for (uint32_t b = 0; b < s.sig_bytes; b++)
            ASSERT_EQ(out[static_cast<size_t>(nlive) * s.sig_bytes + b], 0);
    }
}

// A live row past the segment's rows set in a slice is damage, reported.
TEST(Slices, UntransposeRefusesABitPastTheRows)
{
    std::vector<uint64_t> words(kSliceWords, 0), live(kSliceWords, ~uint64_t{0});
    std::vector<uint32_t> slot(kSegmentRows, 0);
    std::vector<uint8_t> out(16 * 12, 0);
    words[0] = uint64_t{1} << 5;
    EXPECT_TRUE(untranspose_slice(words.data(), live.data(), 6, 3, slot.data(), out.data(), 12));
    EXPECT_EQ(out[0], 1u << 3);
    words[0] = uint64_t{1} << 6;
    EXPECT_FALSE(untranspose_slice(words.data(), live.data(), 6, 3, slot.data(), out.data(), 12));
    // Past the rows but dead: not read at all.
    live[0] = 0;
    EXPECT_TRUE(untranspose_slice(words.data(), live.data(), 6, 3, slot.data(), out.data(), 12));
}

// bloomidx_verify counts each live row's bits from the slices, and puts
// back only the rows of its batch: the counts are the signatures' own
// popcounts, and a masked row past the rows is refused as untranspose_slice
// refuses it.
TEST(Slices, CountedBitsAreTheSignaturesPopcounts)
{
    std::mt19937_64 rng(29);
    std::vector<std::vector<uint64_t>> values;
    for (uint32_t nrows : {1u, 64u, 700u, 40000u, kSegmentRows}) {
        Segment s = make_segment(nrows, 5, rng, &values);
        std::vector<uint16_t> counts(kSegmentRows, 0);
        for (uint32_t j = 0; j < kBits; j++)
            ASSERT_TRUE(count_slice_bits(s.slices[j].data(), s.live.data(), nrows, counts.data()));
        for (uint32_t r = 0; r < nrows; r++) {
            uint32_t set = 0;
            for (uint32_t b = 0; b < s.sig_bytes; b++)
                set += static_cast<uint32_t>(__builtin_popcount(s.signatures[static_cast<size_t>(r) * s.sig_bytes + b]));
            ASSERT_EQ(counts[r], live(s, r) ? set : 0u) << nrows << " rows, row " << r;
        }
    }
    std::vector<uint64_t> words(kSliceWords, 0), mask(kSliceWords, ~uint64_t{0});
    std::vector<uint16_t> counts(kSegmentRows, 0);
    words[0] = uint64_t{1} << 5;
    EXPECT_TRUE(count_slice_bits(words.data(), mask.data(), 6, counts.data()));
    EXPECT_EQ(counts[5], 1u);
    words[0] = uint64_t{1} << 6;
    EXPECT_FALSE(count_slice_bits(words.data(), mask.data(), 6, counts.data()));
    mask[0] = 0;
    EXPECT_TRUE(count_slice_bits(words.data(), mask.data(), 6, counts.data()));
}

TEST(Slices, QueriesSelectExactlyTheRowsARowWiseTestSelects)
{
    std::mt19937_64 rng(22);
    std::vector<std::vector<uint64_t>> values;
    std::vector<uint64_t> out(kSliceWords);
    std::vector<uint32_t> rows(kSegmentRows);
    for (uint32_t nrows : {1u, 100u, 512u, 1000u, 30001u, kSegmentRows}) {
        Segment s = make_segment(nrows, 5, rng, &values);
        for (int q = 0; q < 40; q++) {
            // Equality keys on a random subset of columns (possibly none),
            // values taken from a row so that true matches exist.
            uint32_t pick = static_cast<uint32_t>(rng() % nrows);
            std::vector<uint32_t> base_pos;
            for (int c = 0; c < 3; c++)
                if (rng() % 2)
                    for (uint32_t j : positions_of(c, values[c][pick], 5))
                        base_pos.push_back(j);
            std::vector<const uint64_t *> base_slices;
            for (uint32_t j : base_pos)
                base_slices.push_back(s.slice_ptrs[j]);
            SliceAnd base{base_slices.data(), static_cast<uint32_t>(base_slices.size())};

            // Sometimes an IN list on column 1 (0 to 4 elements; 0: empty).
            bool with_list = rng() % 2;
            uint32_t nelem = static_cast<uint32_t>(rng() % 5);
            std::vector<std::vector<uint32_t>> elem_pos;
            std::vector<std::vector<const uint64_t *>> elem_slices;
            for (uint32_t e = 0; e < nelem; e++) {
                uint64_t v = e == 0 ? values[1][pick] : rng() % 200;
                elem_pos.push_back(positions_of(1, v, 5));
                std::vector<const uint64_t *> sl;
                for (uint32_t j : elem_pos.back())
                    sl.push_back(s.slice_ptrs[j]);
                elem_slices.push_back(sl);
            }
            std::vector<SliceAnd> elements;
            for (auto &sl : elem_slices)
                elements.push_back(SliceAnd{sl.data(), static_cast<uint32_t>(sl.size())});
            SliceOr list{elements.data(), nelem};

            uint32_t n = match_slices(base, &list, with_list ? 1 : 0, s.live.data(), nrows, out.data());
            ASSERT_EQ(candidate_rows(out.data(), rows.data()), n);

            // The reference: row by row.
            std::vector<uint32_t> expected;
            for (uint32_t r = 0; r < nrows; r++) {
                bool pass = live(s, r) && row_has(s, r, base_pos);
                if (pass && with_list) {
                    bool any = false;
                    for (auto &p : elem_pos)
                        any |= row_has(s, r, p);
                    pass = any;
                }
                if (pass)
                    expected.push_back(r);
            }
            ASSERT_EQ(std::vector<uint32_t>(rows.begin(), rows.begin() + n), expected)
                << nrows << " rows, query " << q;
            // The row the keys came from is found when it is live: no false negative.
            if (live(s, pick) && (!with_list || nelem > 0)) {
                bool found = false;
                for (uint32_t i = 0; i < n; i++)
                    found |= rows[i] == pick;
                EXPECT_TRUE(found) << nrows << " rows, query " << q;
            }
        }
    }
}

TEST(Slices, GarbagePastTheRowsIsNeverACandidate)
{
    // A page's bits past the segment's rows (damage, or a page reused)
    // must not produce rows that do not exist.
    std::vector<uint64_t> slice(kSliceWords, ~uint64_t{0}), live(kSliceWords, ~uint64_t{0});
    std::vector<uint64_t> out(kSliceWords);
    const uint64_t *ptr = slice.data();
    SliceAnd base{&ptr, 1};
    for (uint32_t nrows : {1u, 64u, 65u, 600u, kSegmentRows}) {
        EXPECT_EQ(match_slices(base, nullptr, 0, live.data(), nrows, out.data()), nrows);
        std::vector<uint32_t> rows(kSegmentRows);
        uint32_t n = candidate_rows(out.data(), rows.data());
        ASSERT_EQ(n, nrows);
        EXPECT_EQ(rows[n - 1], nrows - 1);
    }
}

// The transposition is exact: slice j holds bit j of every row and nothing
// else, for any row count (a partial last word), signature length, batch
// of slices starting at a byte of the signature, and stride.
TEST(Slices, TransposeIsExactForEveryBit)
{
    std::mt19937_64 rng(7);
    const uint32_t shapes[][4] = {
        // nrows, sig_bytes, nslices, stride
        {1, 1, 8, 1},       {63, 2, 13, 2},    {64, 8, 64, 8},     {65, 12, 96, 12},
        {1000, 14, 112, 16}, {4097, 20, 150, 20}, {kSegmentRows, 9, 70, 9}, {777, 3, 24, 5},
    };
    for (const auto &shape : shapes) {
        const uint32_t nrows = shape[0], sig_bytes = shape[1], nslices = shape[2];
        const size_t stride = shape[3];
        std::vector<uint8_t> sigs(static_cast<size_t>(nrows) * stride);
        for (auto &b : sigs)
            b = static_cast<uint8_t>(rng());
        // Batches of up to 64 slices, as the writer calls it.
        std::vector<std::vector<uint64_t>> slices(nslices, std::vector<uint64_t>(kSliceWords, 0));
        for (uint32_t first = 0; first < nslices; first += 64) {
            const uint32_t n = nslices - first < 64 ? nslices - first : 64;
            std::vector<uint64_t *> ptrs;
            for (uint32_t j = 0; j < n; j++)
                ptrs.push_back(slices[first + j].data());
            transpose_signatures(sigs.data() + first / 8, stride, nrows, sig_bytes - first / 8, n,
                                 ptrs.data());
        }
        for (uint32_t j = 0; j < nslices; j++)
            for (uint32_t r = 0; r < kSegmentRows; r++) {
                const bool want = r < nrows && j / 8 < sig_bytes &&
                                  ((sigs[static_cast<size_t>(r) * stride + j / 8] >> (j % 8)) & 1);
                const bool got = (slices[j][r / 64] >> (r % 64)) & 1;
                ASSERT_EQ(got, want) << "rows " << nrows << " slice " << j << " row " << r;
            }
    }
}

// Packed slices (format 14, core/page_layout.hpp): slice_spot tiles a
// segment's slice pages, each slice in the lines its rows need, no two
// overlapping, none past the page; and a query or a merge over the packed
// pages (pages filled as segment_write.cpp fills them, the lines after
// the last slice holding whatever the page held) reads exactly what it
// reads over one slice a page.
TEST(Slices, PackedSlicesTileTheirPages)
{
    for (uint32_t nrows = 1; nrows <= kSegmentRows; nrows += nrows < 2048 ? 1 : 97) {
        const uint16_t k = packed_slices_per_page(nrows);
        const uint32_t words = slice_lines(nrows) * kSliceLineWords;
        ASSERT_GE(k, 1u);
        ASSERT_LE(static_cast<uint64_t>(k) * words, kSliceWords) << nrows;
        ASSERT_GT(static_cast<uint64_t>(k + 1) * words, kSliceWords) << nrows; // as many as fit
        ASSERT_TRUE(slices_per_page_ok(nrows, k));
        ASSERT_TRUE(slices_per_page_ok(nrows, 0));
        for (uint32_t nslices : {1u, 4u, 64u, 104u, 1000u}) {
            const uint32_t pages = slice_page_count(nslices, k);
            uint32_t last_page = 0;
            for (uint32_t j = 0; j < nslices; j++) {
                SliceSpot s = slice_spot(j, nrows, k);
                ASSERT_LT(s.page, pages);
                ASSERT_EQ(s.first, s.page * k);
                ASSERT_EQ(s.word, (j - s.first) * words);
                ASSERT_LE(s.word + words, kSliceWords);
                last_page = s.page;
            }
            ASSERT_EQ(last_page + 1, pages) << nrows << " rows, " << nslices << " slices";
            // One a page (format 13's layout).
            ASSERT_EQ(slice_page_count(nslices, 0), nslices);
            ASSERT_EQ(slice_spot(nslices - 1, nrows, 0).page, nslices - 1);
        }
    }
    EXPECT_EQ(packed_slices_per_page(kSegmentRows), 1u);
    EXPECT_EQ(packed_slices_per_page(512), 127u);
    EXPECT_EQ(packed_slices_per_page(2000), 31u);
    EXPECT_FALSE(slices_per_page_ok(2000, 30));
    EXPECT_FALSE(slices_per_page_ok(2000, 1));
}

TEST(Slices, PackedSlicesAnswerAsOneSliceAPage)
{
    std::mt19937_64 rng(25);
    std::vector<std::vector<uint64_t>> values;
    std::vector<uint64_t> out(kSliceWords), packed_out(kSliceWords);
    for (uint32_t nrows : {1u, 100u, 511u, 512u, 513u, 2000u, 20000u, 32256u, 32257u}) {
        Segment s = make_segment(nrows, 5, rng, &values);
        const uint16_t k = packed_slices_per_page(nrows);
        const uint32_t words = slice_lines(nrows) * kSliceLineWords;
        // The pages, their unused words garbage (a reader must not need them).
        std::vector<std::vector<uint64_t>> pages(slice_page_count(kBits, k),
                                                 std::vector<uint64_t>(kSliceWords));
        for (auto &p : pages)
            for (auto &w : p)
                w = rng();
        std::vector<const uint64_t *> packed(kBits);
        for (uint32_t j = 0; j < kBits; j++) {
            SliceSpot spot = slice_spot(j, nrows, k);
            std::memcpy(pages[spot.page].data() + spot.word, s.slices[j].data(), words * 8);
            packed[j] = pages[spot.page].data() + spot.word;
        }
        for (int q = 0; q < 30; q++) {
            uint32_t pick = static_cast<uint32_t>(rng() % nrows);
            std::vector<const uint64_t *> base, packed_base;
            for (int c = 0; c < 3; c++)
                if (rng() % 2)
                    for (uint32_t j : positions_of(c, values[c][pick], 5)) {
                        base.push_back(s.slice_ptrs[j]);
                        packed_base.push_back(packed[j]);
                    }
            std::vector<const uint64_t *> e1, pe1, e2, pe2;
            for (uint32_t j : positions_of(1, values[1][pick], 5)) {
                e1.push_back(s.slice_ptrs[j]);
                pe1.push_back(packed[j]);
            }
            for (uint32_t j : positions_of(1, rng() % 200, 5)) {
                e2.push_back(s.slice_ptrs[j]);
                pe2.push_back(packed[j]);
            }
            SliceAnd els[2] = {{e1.data(), 5}, {e2.data(), 5}};
            SliceAnd pels[2] = {{pe1.data(), 5}, {pe2.data(), 5}};
            SliceOr list{els, 2}, plist{pels, 2};
            uint32_t nlists = q % 2;
            uint32_t n = match_slices(SliceAnd{base.data(), static_cast<uint32_t>(base.size())},
                                      &list, nlists, s.live.data(), nrows, out.data());
            uint32_t pn = match_slices(
                SliceAnd{packed_base.data(), static_cast<uint32_t>(packed_base.size())}, &plist,
                nlists, s.live.data(), nrows, packed_out.data());
            ASSERT_EQ(n, pn) << nrows << " rows, query " << q;
            ASSERT_EQ(out, packed_out) << nrows << " rows, query " << q;
            if (live(s, pick)) {
                ASSERT_TRUE((out[pick / 64] >> (pick % 64)) & 1) << nrows << " rows, query " << q;
            }
        }
        // A merge reads the same signatures back.
        std::vector<uint32_t> slot(kSegmentRows, 0);
        uint32_t nlive = 0;
        for (uint32_t r = 0; r < nrows; r++)
            if (live(s, r))
                slot[r] = nlive++;
        std::vector<uint8_t> a(static_cast<size_t>(nlive + 1) * s.sig_bytes, 0), b = a;
        for (uint32_t j = 0; j < kBits; j++) {
            ASSERT_TRUE(untranspose_slice(s.slices[j].data(), s.live.data(), nrows, j, slot.data(),
                                          a.data(), s.sig_bytes));
            ASSERT_TRUE(untranspose_slice(packed[j], s.live.data(), nrows, j, slot.data(), b.data(),
                                          s.sig_bytes));
        }
        ASSERT_EQ(a, b) << nrows << " rows";
    }
}

// A merge of a packed segment reads its slice's lines alone: the next
// slice's words on the page, set, are no row of this one, though the live
// bits past the rows (never set on a live page, set here) would make them
// damage.
TEST(Slices, UntransposeReadsOnlyTheLinesOfTheRows)
{
    const uint32_t nrows = 700; // two lines: words 0..15
    std::vector<uint64_t> page(kSliceWords, 0), live(kSliceWords, ~uint64_t{0});
    for (uint32_t w = 0; w < nrows / 64; w++)
        live[w] = ~uint64_t{0};
    live[nrows / 64] = (uint64_t{1} << (nrows % 64)) - 1;
    for (uint32_t w = nrows / 64 + 1; w < 16; w++)
        live[w] = 0; // no row past nrows in the slice's own lines
    page[3] = uint64_t{1} << 7; // row 199
    for (uint32_t w = 16; w < kSliceWords; w++)
        page[w] = ~uint64_t{0}; // the next slices
    std::vector<uint32_t> slot(kSegmentRows);
    for (uint32_t r = 0; r < kSegmentRows; r++)
        slot[r] = r;
    std::vector<uint8_t> out(static_cast<size_t>(kSegmentRows) * 2, 0);
    EXPECT_TRUE(untranspose_slice(page.data(), live.data(), nrows, 9, slot.data(), out.data(), 2));
    for (uint32_t r = 0; r < kSegmentRows; r++)
        ASSERT_EQ(out[static_cast<size_t>(r) * 2 + 1], r == 199 ? 1u << 1 : 0u) << r;
}
