// Unit tests of src/core/page_layout.{hpp,cpp}: the on-disk format.
//
// Pages are built by hand in 8 KB buffers: PageInit belongs to PostgreSQL,
// so the tests set pd_lower / pd_upper / pd_special (little-endian uint16
// at kPdLowerOffset etc.) and the special space themselves.
//
// A row-wise data page with n entries of S-byte signatures is
//
//   [header, 24][sig 0]...[sig n-1][hole][tid n-1]...[tid 0][special, 16]
//
// with signature i at 24 + i*S, TID i at 8176 - (i+1)*6, pd_lower at the
// end of the signatures (24 + n*S) and pd_upper at the start of the TIDs
// (8176 - n*6).  The helpers below spell those offsets out on their own,
// so the tests do not take the layout from the code they test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/page_layout.hpp"
#include "core/signature.hpp"

using namespace bloomidx;

namespace {

struct alignas(8) Page {
    uint8_t b[kBlockSize];
};

void put_u16(uint8_t *page, uint32_t off, uint16_t v)
{
    page[off] = static_cast<uint8_t>(v & 0xFF);
    page[off + 1] = static_cast<uint8_t>(v >> 8);
}

uint16_t get_u16(const uint8_t *page, uint32_t off)
{
    return static_cast<uint16_t>(page[off] | (page[off + 1] << 8));
}

// The format, independently of page_layout.hpp's accessors.
uint32_t sig_at(uint32_t s, uint32_t i) { return 24 + i * s; }
uint32_t tid_at(uint32_t i) { return 8176 - (i + 1) * 6; }
uint32_t lower_for(uint32_t s, uint32_t n) { return 24 + n * s; }
uint32_t upper_for(uint32_t n) { return 8176 - n * 6; }

constexpr uint32_t kCountOffset = kSpecialOffset + offsetof(PageOpaque, count);

// What PageInit(page, BLCKSZ, sizeof(PageOpaque)) plus the glue would do,
// on top of whatever garbage the buffer holds.
void init_page(uint8_t *page, uint16_t flags, uint16_t lower)
{
    std::memset(page, 0, kPageHeaderSize);
    put_u16(page, kPdLowerOffset, lower);
    put_u16(page, kPdUpperOffset, static_cast<uint16_t>(kSpecialOffset));
    put_u16(page, kPdSpecialOffset, static_cast<uint16_t>(kSpecialOffset));
    PageOpaque *op = page_opaque(page);
    std::memset(op, 0, sizeof *op); // PageInit zeroes the whole page
    op->flags = flags;
    op->format = flags == kPageData ? kFormatRowWise : 0;
    op->page_id = kPageId;
}

// Columns hashed by value and by function, alternately.
const uint8_t kHashings[32] = {
    kHashByValue, kHashByFunction, kHashByValue, kHashByFunction, kHashByValue, kHashByFunction,
    kHashByValue, kHashByFunction, kHashByValue, kHashByFunction, kHashByValue, kHashByFunction,
    kHashByValue, kHashByFunction, kHashByValue, kHashByFunction, kHashByValue, kHashByFunction,
    kHashByValue, kHashByFunction, kHashByValue, kHashByFunction, kHashByValue, kHashByFunction,
    kHashByValue, kHashByFunction, kHashByValue, kHashByFunction, kHashByValue, kHashByFunction,
    kHashByValue, kHashByFunction};

void init_meta_page(uint8_t *page, uint16_t bits, uint16_t ncols, const uint16_t *column_bits)
{
    std::memset(page, 0, kBlockSize);
    init_page(page, kPageMeta, static_cast<uint16_t>(kMetaPageLower));
    meta_fill(meta_data(page), bits, ncols, column_bits, kHashings);
    directory_init(directory_header(page));
    directory_page_list_init(directory_page_list(page));
    free_list_init(free_list(page));
    pending_filters_set(pending_filters(page), kMetaBlock, 0);
}

void init_data_page(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    init_page(page, kPageData, static_cast<uint16_t>(kPageHeaderSize));
}

// A count set by hand, with the hole bounds that go with it.
void set_count_and_bounds(uint8_t *page, uint32_t s, uint32_t n)
{
    page_opaque(page)->count = static_cast<uint16_t>(n);
    put_u16(page, kPdLowerOffset, static_cast<uint16_t>(lower_for(s, n)));
    put_u16(page, kPdUpperOffset, static_cast<uint16_t>(upper_for(n)));
}

// The count and both bounds are those of a page of n S-byte entries.
::testing::AssertionResult holds_entries(const uint8_t *page, uint32_t s, uint32_t n)
{
    uint32_t count = page_opaque(page)->count;
    uint32_t lower = get_u16(page, kPdLowerOffset);
    uint32_t upper = get_u16(page, kPdUpperOffset);
    if (count == n && lower == lower_for(s, n) && upper == upper_for(n))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "S " << s << ": count " << count << ", pd_lower " << lower << ", pd_upper " << upper
           << "; expected count " << n << ", pd_lower " << lower_for(s, n) << ", pd_upper "
           << upper_for(n);
}

struct Range {
    uint32_t begin, end; // [begin, end)
};

// Fails at the first byte that differs between two pages outside `allowed`.
::testing::AssertionResult same_outside(const uint8_t *before, const uint8_t *after,
                                        const std::vector<Range> &allowed)
{
    for (uint32_t i = 0; i < kBlockSize; i++) {
        if (before[i] == after[i])
            continue;
        bool ok = false;
        for (const Range &r : allowed)
            ok = ok || (i >= r.begin && i < r.end);
        if (!ok)
            return ::testing::AssertionFailure()
                   << "byte " << i << " changed from " << int(before[i]) << " to " << int(after[i]);
    }
    return ::testing::AssertionSuccess();
}

// The header fields and the count an append or a truncation may change.
const Range kLowerBytes{kPdLowerOffset, kPdLowerOffset + 2};
const Range kUpperBytes{kPdUpperOffset, kPdUpperOffset + 2};
const Range kSumBytes{kSpecialOffset + 6, kSpecialOffset + 10};
const Range kCountBytes{kCountOffset, kCountOffset + 2};

void fill_random(uint8_t *p, size_t n, std::mt19937_64 &rng)
{
    for (size_t i = 0; i < n; i++)
        p[i] = static_cast<uint8_t>(rng());
}

const PageProblem kAllProblems[] = {
    PageProblem::None,       PageProblem::NotBloomidx, PageProblem::WrongKind,
    PageProblem::BadFormat,  PageProblem::BadCount,    PageProblem::BadBounds,
    PageProblem::BadMagic,   PageProblem::BadVersion,  PageProblem::BadOptions,
    PageProblem::BadSignatures, PageProblem::BadTids, PageProblem::BadSlice,
    PageProblem::BadSliceBits, PageProblem::BadSegment, PageProblem::BadSegmentSum,
    PageProblem::BadTidPage, PageProblem::BadTidBytes, PageProblem::BadDirectory,
    PageProblem::BadFilter, PageProblem::BadFilterBits, PageProblem::BadLive,
    PageProblem::BadLiveBits,
};

::testing::AssertionResult problem_is(PageProblem got, PageProblem expect)
{
    if (got == expect)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "got \"" << page_problem_text(got) << "\", expected \"" << page_problem_text(expect)
           << "\"";
}

} // namespace

TEST(PageFormat, ConstantsArePinned)
{
    // The on-disk format: changing any of these breaks existing indexes
    // (bump kMetaVersion instead).
    EXPECT_EQ(kBlockSize, 8192u);
    EXPECT_EQ(kPageHeaderSize, 24u);
    EXPECT_EQ(kTidSize, 6u);
    EXPECT_EQ(kPdLowerOffset, 12u);
    EXPECT_EQ(kPdUpperOffset, 14u);
    EXPECT_EQ(kPdSpecialOffset, 16u);
    EXPECT_EQ(kSpecialOffset, 8176u);
    EXPECT_EQ(kPayloadBytes, 8152u);
    EXPECT_EQ(kMetaMagic, 0x626C6478u);
    EXPECT_EQ(kPageId, 0xB1D5);
    EXPECT_EQ(kPageMeta, 1);
    EXPECT_EQ(kPageData, 2);
    EXPECT_EQ(kFormatRowWise, 1);
    EXPECT_EQ(kMetaVersion, 19) << "19: runs of TIDs; 18: segments, the pending list, the directory and its pages, the free list, weighted page sums, filter groups of up to 1,016 slots of 8-byte blocks, filter keys in pending rows, packed slices, listed groups of many segments, key pages of small segments, pending groups";
    EXPECT_EQ(kPageKeys, 13);
    EXPECT_EQ(kMaxKeyPages, 259u);
    EXPECT_EQ(kKeyedRowsMax, 16256u);
    EXPECT_EQ(key_rows_per_page(6), 339u);
    EXPECT_EQ(kMetaVersionOldest, 19) << "13 to 18 were never released";
    EXPECT_EQ(kGroupPending, 2);
    EXPECT_EQ(kPendingFiltersOffset, 8112u);
    EXPECT_EQ(kPageFilterGroup, 11);
    EXPECT_EQ(kPageFilter, 12);
    EXPECT_EQ(kGroupSlots, 1016u);
    EXPECT_EQ(kPendingGroupSlots, 127u);
    EXPECT_EQ(kFilterBlockBytes, 8u);
    EXPECT_EQ(kGroupHeaderFixedBytes, 148u);
    EXPECT_EQ(group_header_bytes(1), 152u);
    EXPECT_EQ(group_listed_pages_max(1, false), 2000u);
    EXPECT_EQ(group_listed_pages_max(kPendingGroupSlots, true), 1870u);
    EXPECT_EQ(kFirstGroupId, 1u << 30);
    FilterGroupHeader full{};
    full.slot_capacity = kGroupSlots;
    EXPECT_EQ(group_row_bytes(full), 8128u);
    EXPECT_EQ(group_rows_per_page(full), 1u);
    EXPECT_EQ(kPageSlice, 3);
    EXPECT_EQ(kPageSegment, 4);
    EXPECT_EQ(kPageTids, 5);
    EXPECT_EQ(kPageLive, 6);
    EXPECT_EQ(kPageFree, 7);
    EXPECT_EQ(kPageListed, 9);
    EXPECT_EQ(kPageDirectory, 10);
    EXPECT_EQ(kDirectoryOffset, 152u);
    EXPECT_EQ(kInlineSegments, 224u);
    EXPECT_EQ(kDirectoryPageListOffset, 7352u);
    EXPECT_EQ(kDirectoryPageEntries, 254u);
    EXPECT_EQ(kMaxDirectoryPages, 126u);
    EXPECT_EQ(offsetof(DirectoryHeader, generation), 0u);
    EXPECT_EQ(offsetof(DirectoryHeader, pending_head), 8u);
    EXPECT_EQ(offsetof(DirectoryHeader, nsegments), 24u);
    EXPECT_EQ(offsetof(DirectoryHeader, check), 28u);
    EXPECT_EQ(kFreeListOffset, 7864u);
    EXPECT_EQ(kMetaPageLower, 8128u);
    EXPECT_EQ(sizeof(SegmentHeader), 4344u);
    EXPECT_EQ(offsetof(SegmentHeader, tid_blocks), 24u);
    EXPECT_EQ(offsetof(SegmentHeader, groups), 280u);
    EXPECT_EQ(sizeof(PageOpaque), 16u);
    EXPECT_EQ(offsetof(PageOpaque, count), 0u);
    EXPECT_EQ(offsetof(PageOpaque, flags), 2u);
    EXPECT_EQ(offsetof(PageOpaque, format), 4u);
    EXPECT_EQ(offsetof(PageOpaque, signature_sum), 6u);
    EXPECT_EQ(offsetof(PageOpaque, tid_sum), 8u);
    EXPECT_EQ(offsetof(PageOpaque, page_id), 14u);
    EXPECT_EQ(offsetof(MetaPageData, magic), 0u);
    EXPECT_EQ(offsetof(MetaPageData, version), 4u);
    EXPECT_EQ(offsetof(MetaPageData, format), 6u);
    EXPECT_EQ(offsetof(MetaPageData, hash_version), 8u);
    EXPECT_EQ(offsetof(MetaPageData, signature_bits), 10u);
    EXPECT_EQ(offsetof(MetaPageData, signature_bytes), 12u);
    EXPECT_EQ(offsetof(MetaPageData, ncolumns), 14u);
    EXPECT_EQ(offsetof(MetaPageData, capacity), 16u);
    EXPECT_EQ(offsetof(MetaPageData, unused_block), 20u);
    EXPECT_EQ(offsetof(MetaPageData, column_bits), 24u);
    EXPECT_EQ(offsetof(MetaPageData, column_hashing), 88u);
    EXPECT_EQ(offsetof(MetaPageData, options_check), 120u);

    // Where the accessors point.
    Page p;
    EXPECT_EQ(reinterpret_cast<uint8_t *>(page_opaque(p.b)), p.b + 8176);
    EXPECT_EQ(reinterpret_cast<uint8_t *>(meta_data(p.b)), p.b + 24);
    EXPECT_EQ(row_signatures(p.b), p.b + 24);
}

TEST(PageFormat, RowPageOffsetsArePinned)
{
    // 10-byte signatures: up from the header, 10 bytes apart; TIDs down
    // from the special space, 6 bytes apart, TID 0 ending at the special.
    constexpr RowPageGeometry g = row_page_geometry(10);
    Page p;
    const Page &cp = p;
    const uint32_t sigs[] = {24, 34, 44, 54};
    const uint32_t tids[] = {8170, 8164, 8158, 8152};
    for (uint32_t i = 0; i < 4; i++) {
        EXPECT_EQ(row_signature(p.b, g, i), p.b + sigs[i]) << i;
        EXPECT_EQ(row_tid(p.b, g, i), p.b + tids[i]) << i;
        EXPECT_EQ(row_tid(cp.b, g, i), cp.b + tids[i]) << i;
    }
    EXPECT_EQ(row_signature(p.b, g, 509), p.b + 5114);
    EXPECT_EQ(row_tid(p.b, g, 509), p.b + 5116);

    // The hole: [pd_lower, pd_upper), from the whole payload down to nothing.
    static_assert(row_page_lower(g, 0) == 24 && row_page_upper(g, 0) == 8176, "empty page");
    EXPECT_EQ(row_page_lower(g, 0), 24u);
    EXPECT_EQ(row_page_upper(g, 0), 8176u);
    EXPECT_EQ(row_page_lower(g, 1), 34u);
    EXPECT_EQ(row_page_upper(g, 1), 8170u);
    EXPECT_EQ(row_page_lower(g, 3), 54u);
    EXPECT_EQ(row_page_upper(g, 3), 8158u);
    EXPECT_EQ(row_page_lower(g, 509), 5114u);
    EXPECT_EQ(row_page_upper(g, 509), 5122u);
    EXPECT_EQ(row_page_lower(row_page_geometry(512), 15), 24u + 15u * 512u);

    // Entry i's TID starts at the pd_upper of i + 1 entries; its signature
    // ends at the pd_lower of i + 1 entries.
    for (uint32_t s : {2u, 10u, 14u, 512u}) {
        RowPageGeometry gs = row_page_geometry(s);
        for (uint32_t i = 0; i < gs.capacity; i++) {
            ASSERT_EQ(row_signature(p.b, gs, i), p.b + sig_at(s, i)) << "S " << s << " entry " << i;
            ASSERT_EQ(row_tid(p.b, gs, i), p.b + tid_at(i)) << "S " << s << " entry " << i;
            ASSERT_EQ(row_page_lower(gs, i + 1), sig_at(s, i) + s);
            ASSERT_EQ(row_page_upper(gs, i + 1), tid_at(i));
        }
    }
}

TEST(RowPageGeometry, ContribBloomDefault)
{
    // 80 bits: 10-byte signatures + 6-byte TIDs, contrib/bloom's 16-byte
    // tuples, 509 per page, as many as contrib/bloom's page holds.
    constexpr RowPageGeometry g = row_page_geometry(10);
    static_assert(g.capacity == 509, "contrib/bloom's tuples per page");
    EXPECT_EQ(g.signature_bytes, 10u);
    EXPECT_EQ(g.capacity, 509u);
    EXPECT_EQ(row_page_lower(g, g.capacity), 24u + 509u * 10u);
    EXPECT_EQ(row_page_upper(g, g.capacity), 8176u - 509u * 6u);
    EXPECT_EQ(row_page_upper(g, g.capacity) - row_page_lower(g, g.capacity), 8u);
}

TEST(RowPageGeometry, EverySignatureSizeFits)
{
    for (int bits = 1; bits <= kMaxSignatureBits; bits++) {
        uint32_t s = static_cast<uint32_t>(signature_bytes(bits));
        RowPageGeometry g = row_page_geometry(s);
        ASSERT_EQ(g.signature_bytes, s);
        ASSERT_LE(g.capacity * (s + kTidSize), kPayloadBytes) << "S " << s;
        ASSERT_GT((g.capacity + 1) * (s + kTidSize), kPayloadBytes) << "S " << s << ": room left";
        ASSERT_GE(g.capacity, 15u);
        ASSERT_LE(g.capacity, 1020u); // fits the uint16_t count and match_array output
        ASSERT_EQ(row_page_free_bytes(g, 0), g.capacity * (s + kTidSize));
        ASSERT_EQ(row_page_free_bytes(g, g.capacity), 0u);

        // The bounds of every count: pd_lower moves up S per entry, pd_upper
        // down 6, and they never cross up to the capacity.
        for (uint32_t n = 0; n <= g.capacity; n++) {
            ASSERT_EQ(row_page_lower(g, n), lower_for(s, n)) << "S " << s << " n " << n;
            ASSERT_EQ(row_page_upper(g, n), upper_for(n)) << "S " << s << " n " << n;
            ASSERT_LE(row_page_lower(g, n), row_page_upper(g, n)) << "S " << s << " n " << n;
            // What the free space map is told fits in the hole.
            ASSERT_LE(row_page_free_bytes(g, n), row_page_upper(g, n) - row_page_lower(g, n));
        }
        // A full page: the hole is what is left over, less than an entry;
        // one entry more would cross the bounds.
        uint32_t hole = row_page_upper(g, g.capacity) - row_page_lower(g, g.capacity);
        ASSERT_EQ(hole, kPayloadBytes - g.capacity * (s + kTidSize)) << "S " << s;
        ASSERT_LT(hole, s + kTidSize) << "S " << s;
        ASSERT_GT(row_page_lower(g, g.capacity + 1), row_page_upper(g, g.capacity + 1)) << "S " << s;
        // The bounds fit pd_lower / pd_upper (uint16_t) and the page.
        ASSERT_GE(row_page_upper(g, g.capacity), kPageHeaderSize);
        ASSERT_LE(row_page_lower(g, g.capacity), kSpecialOffset);
    }
}

TEST(MetaPage, FillAndCheckRoundTrip)
{
    const uint16_t cols[] = {2, 9, 80};
    Page p;
    init_meta_page(p.b, 80, 3, cols);
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    const MetaPageData *meta = meta_data(p.b);
    EXPECT_EQ(meta->magic, kMetaMagic);
    EXPECT_EQ(meta->version, kMetaVersion);
    EXPECT_EQ(meta->format, kFormatRowWise);
    EXPECT_EQ(meta->hash_version, kHashXxh3V2);
    EXPECT_EQ(meta->signature_bits, 80);
    EXPECT_EQ(meta->signature_bytes, 10);
    EXPECT_EQ(meta->ncolumns, 3);
    EXPECT_EQ(meta->capacity, 509);
    EXPECT_EQ(meta->filter_keys, 0);
    EXPECT_EQ(meta->unused_block, 0u);
    EXPECT_EQ(meta->column_bits[0], 2);
    EXPECT_EQ(meta->column_bits[1], 9);
    EXPECT_EQ(meta->column_bits[2], 80);
    for (int i = 3; i < 32; i++)
        EXPECT_EQ(meta->column_bits[i], 0) << i;
    EXPECT_EQ(meta->column_hashing[0], kHashByValue);
    EXPECT_EQ(meta->column_hashing[1], kHashByFunction);
    EXPECT_EQ(meta->column_hashing[2], kHashByValue);
    for (int i = 3; i < 32; i++)
        EXPECT_EQ(meta->column_hashing[i], 0) << i;
    // The magic is stored little-endian right after the page header.
    EXPECT_EQ(p.b[24], 0x78);
    EXPECT_EQ(p.b[27], 0x62);

    // meta_fill writes only its own struct, and all of it (no stale bytes).
    Page q;
    std::memset(q.b, 0xCC, kBlockSize);
    meta_fill(meta_data(q.b), 80, 3, cols, kHashings);
    EXPECT_EQ(std::memcmp(q.b + 24, p.b + 24, sizeof(MetaPageData)), 0);
    for (uint32_t i = 0; i < kBlockSize; i++)
        if (i < 24 || i >= 24 + sizeof(MetaPageData)) {
            ASSERT_EQ(q.b[i], 0xCC) << "byte " << i;
        }

    // Extremes of every option.
    std::vector<uint16_t> many(32);
    for (int i = 0; i < 32; i++)
        many[i] = static_cast<uint16_t>(1 + i * 100);
    for (uint16_t bits : {1, 7, 16, 17, 4095, 4096}) {
        std::vector<uint16_t> c = many;
        for (uint16_t &b : c)
            b = std::min<uint16_t>(b, bits);
        for (uint16_t ncols : {1, 2, 32}) {
            init_meta_page(p.b, bits, ncols, c.data());
            EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None))
                << "bits " << bits << " ncols " << ncols;
            EXPECT_EQ(meta_data(p.b)->signature_bytes, signature_bytes(bits));
            EXPECT_EQ(meta_data(p.b)->capacity, row_page_geometry(signature_bytes(bits)).capacity);
        }
    }
}

// Formats before the oldest read (13: never released) and after the
// current one are refused.
TEST(MetaPage, OnlyTheFormatsReadPass)
{
    Page p;
    const uint16_t cols[] = {2, 9, 80};
    for (uint16_t version : {12, 13, 14, 15, 16, 17}) {
        init_meta_page(p.b, 80, 3, cols);
        meta_data(p.b)->version = version;
        meta_data(p.b)->options_check = meta_options_check(meta_data(p.b));
        EXPECT_EQ(problem_is(check_meta_page(p.b), PageProblem::None),
                  version >= kMetaVersionOldest && version <= kMetaVersion)
            << version;
    }
}

TEST(MetaPage, CorruptionsAreNamed)
{
    const uint16_t cols[] = {2, 9, 80};
    struct Corruption {
        const char *what;
        PageProblem expect;
        void (*apply)(uint8_t *page);
    };
    const Corruption corruptions[] = {
        {"magic", PageProblem::BadMagic, [](uint8_t *p) { meta_data(p)->magic ^= 1; }},
        {"magic zero", PageProblem::BadMagic, [](uint8_t *p) { meta_data(p)->magic = 0; }},
        {"version next", PageProblem::BadVersion,
         [](uint8_t *p) { meta_data(p)->version = kMetaVersion + 1; }},
        {"version 1 (TIDs after the signatures)", PageProblem::BadVersion,
         [](uint8_t *p) { meta_data(p)->version = 1; }},
        {"version zero", PageProblem::BadVersion, [](uint8_t *p) { meta_data(p)->version = 0; }},
        {"version before the oldest read", PageProblem::BadVersion,
         [](uint8_t *p) { meta_data(p)->version = kMetaVersionOldest - 1; }},
        {"hash_version", PageProblem::BadOptions, [](uint8_t *p) { meta_data(p)->hash_version = 1; }},
        {"format", PageProblem::BadFormat, [](uint8_t *p) { meta_data(p)->format = 2; }},
        {"signature_bits zero", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->signature_bits = 0; }},
        {"signature_bits too big", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->signature_bits = 4097; }},
        {"signature_bits vs bytes", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->signature_bits = 96; }},
        {"signature_bits below a column's bits", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->signature_bits = 79; }},
        {"signature_bytes", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->signature_bytes = 12; }},
        {"capacity +1", PageProblem::BadOptions, [](uint8_t *p) { meta_data(p)->capacity++; }},
        {"capacity -1", PageProblem::BadOptions, [](uint8_t *p) { meta_data(p)->capacity--; }},
        {"ncolumns zero", PageProblem::BadOptions, [](uint8_t *p) { meta_data(p)->ncolumns = 0; }},
        {"ncolumns 33", PageProblem::BadOptions, [](uint8_t *p) { meta_data(p)->ncolumns = 33; }},
        {"ncolumns past the filled ones", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->ncolumns = 4; }}, // column_bits[3] == 0
        {"column bits zero", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_bits[1] = 0; }},
        {"column bits > m", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_bits[2] = 81; }},
        {"column bits changed but in range", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_bits[0] = 3; }},
        {"column hashing zero", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_hashing[0] = 0; }},
        {"column hashing unknown", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_hashing[1] = 3; }},
        {"column hashing swapped but valid", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_hashing[2] = kHashByFunction; }},
        {"a byte of an unused column slot", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->column_bits[20] = 7; }},
        {"options_check", PageProblem::BadOptions,
         [](uint8_t *p) { meta_data(p)->options_check ^= 0x100; }},
        {"unused_block (not checked)", PageProblem::None,
         [](uint8_t *p) { meta_data(p)->unused_block = 5; }},
        {"directory segment count", PageProblem::BadDirectory,
         [](uint8_t *p) { directory_header(p)->nsegments = 1; }},
        {"directory pending head", PageProblem::BadDirectory,
         [](uint8_t *p) { directory_header(p)->pending_head = 3; }},
        {"directory check", PageProblem::BadDirectory,
         [](uint8_t *p) { directory_header(p)->check ^= 1; }},
        {"directory: more segments than fit, check recomputed", PageProblem::BadDirectory,
         [](uint8_t *p) {
             directory_header(p)->nsegments = kInlineSegments + 1;
             directory_header(p)->check = directory_check(*directory_header(p));
         }},
        {"directory: a head without a tail, check recomputed", PageProblem::BadDirectory,
         [](uint8_t *p) {
             directory_header(p)->pending_head = 3;
             directory_header(p)->pending_pages = 1;
             directory_header(p)->check = directory_check(*directory_header(p));
         }},
        {"pending filters' check", PageProblem::BadDirectory,
         [](uint8_t *p) { pending_filters(p)->first_group = 9; }},
        {"pending filters: a group without an id", PageProblem::BadDirectory,
         [](uint8_t *p) { pending_filters_set(pending_filters(p), 9, 0); }},
        {"pending filters: an id of a segment", PageProblem::BadDirectory,
         [](uint8_t *p) { pending_filters_set(pending_filters(p), 9, 5); }},
        {"pending filters: an id not yet given", PageProblem::BadDirectory,
         [](uint8_t *p) { pending_filters_set(pending_filters(p), 9, kFirstGroupId); }},
        {"pending filters: a group named", PageProblem::None,
         [](uint8_t *p) {
             directory_header(p)->next_group_id = kFirstGroupId + 1;
             directory_header(p)->check = directory_check(*directory_header(p));
             pending_filters_set(pending_filters(p), 9, kFirstGroupId);
         }},
        {"pending filters' reserved word", PageProblem::BadDirectory,
         [](uint8_t *p) {
             pending_filters(p)->reserved = 1;
             pending_filters(p)->check = pending_filters_check(*pending_filters(p));
         }},
        {"pd_lower short of the pending filters", PageProblem::BadDirectory,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, kPendingFiltersOffset); }},
        {"pd_lower short of the directory", PageProblem::BadDirectory,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 24 + sizeof(MetaPageData)); }},
        {"page_id", PageProblem::NotBloomidx, [](uint8_t *p) { page_opaque(p)->page_id = 0xFF81; }},
        {"pd_special", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, 8184); }},
        {"pd_special zero (a new page)", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, 0); }},
        {"pd_lower zero", PageProblem::BadBounds, [](uint8_t *p) { put_u16(p, kPdLowerOffset, 0); }},
        {"pd_lower inside the header", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 23); }},
        {"pd_lower > pd_upper", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, static_cast<uint16_t>(get_u16(p, kPdUpperOffset) + 1)); }},
        {"pd_upper > pd_special", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 8177); }},
        {"flags", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = kPageData; }},
        {"flags zero", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = 0; }},
    };
    for (const Corruption &c : corruptions) {
        Page p;
        init_meta_page(p.b, 80, 3, cols);
        ASSERT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
        c.apply(p.b);
        EXPECT_TRUE(problem_is(check_meta_page(p.b), c.expect)) << c.what;
    }
    // A page of zeroes (never initialised) is not a bloomidx page.
    Page z;
    std::memset(z.b, 0, kBlockSize);
    EXPECT_TRUE(problem_is(check_meta_page(z.b), PageProblem::NotBloomidx));
    EXPECT_TRUE(problem_is(check_row_page(z.b, row_page_geometry(10)), PageProblem::NotBloomidx));
    // A valid data page is no metapage, and the reverse.
    Page d;
    init_data_page(d.b);
    EXPECT_TRUE(problem_is(check_meta_page(d.b), PageProblem::WrongKind));
    Page m;
    init_meta_page(m.b, 80, 3, cols);
    EXPECT_TRUE(problem_is(check_row_page(m.b, row_page_geometry(10)), PageProblem::WrongKind));
}


TEST(RowPage, AppendFillsThePageAndTouchesNothingElse)
{
    std::mt19937_64 rng(51);
    for (int bits : {1, 16, 17, 80, 96, 100, 512, 1000, 4096}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        const uint32_t s = g.signature_bytes;
        Page p;
        fill_random(p.b, kBlockSize, rng); // garbage where nothing is written
        init_page(p.b, kPageData, static_cast<uint16_t>(kPageHeaderSize));
        const Page before = p;
        ASSERT_TRUE(holds_entries(p.b, s, 0));

        std::vector<std::vector<uint8_t>> sigs, tids;
        for (uint32_t i = 0; i < g.capacity; i++) {
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
            ASSERT_EQ(row_page_free_bytes(g, page_opaque(p.b)->count), (g.capacity - i) * (s + kTidSize));
            std::vector<uint8_t> sig(s), tid(kTidSize);
            fill_random(sig.data(), s, rng);
            fill_random(tid.data(), kTidSize, rng);
            const Page prev = p;
            row_page_append(p.b, g, sig.data(), tid.data());
            // The count and the hole follow the entry ...
            ASSERT_TRUE(holds_entries(p.b, s, i + 1)) << "bits " << bits << " after append " << i;
            ASSERT_LE(get_u16(p.b, kPdLowerOffset), get_u16(p.b, kPdUpperOffset));
            // ... which is where the format says ...
            ASSERT_EQ(std::memcmp(p.b + sig_at(s, i), sig.data(), s), 0) << "bits " << bits << " entry " << i;
            ASSERT_EQ(std::memcmp(p.b + tid_at(i), tid.data(), kTidSize), 0) << "bits " << bits << " entry " << i;
            // ... and nothing else moved.
            ASSERT_TRUE(same_outside(prev.b, p.b,
                                     {{sig_at(s, i), sig_at(s, i) + s},
                                      {tid_at(i), tid_at(i) + kTidSize},
                                      kCountBytes, kLowerBytes, kUpperBytes, kSumBytes}))
                << "bits " << bits << " append " << i;
            sigs.push_back(sig);
            tids.push_back(tid);
        }
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None)) << "full page";
        EXPECT_EQ(row_page_free_bytes(g, page_opaque(p.b)->count), 0u);
        EXPECT_TRUE(holds_entries(p.b, s, g.capacity));

        // Every entry where the format says: signatures back to back from
        // the header, TIDs back to back down from the special space.
        const Page &cp = p;
        for (uint32_t i = 0; i < g.capacity; i++) {
            ASSERT_EQ(std::memcmp(p.b + sig_at(s, i), sigs[i].data(), s), 0) << i;
            ASSERT_EQ(row_signature(p.b, g, i), p.b + sig_at(s, i));
            ASSERT_EQ(std::memcmp(p.b + tid_at(i), tids[i].data(), kTidSize), 0) << i;
            ASSERT_EQ(row_tid(cp.b, g, i), cp.b + tid_at(i));
            ASSERT_EQ(row_tid(p.b, g, i), p.b + tid_at(i));
        }
        // The header (but the bounds), the hole and the special space (but
        // the count) kept.
        const uint32_t lower = lower_for(s, g.capacity), upper = upper_for(g.capacity);
        EXPECT_TRUE(same_outside(before.b, p.b,
                                 {{24, lower}, {upper, 8176}, kCountBytes, kLowerBytes, kUpperBytes, kSumBytes}))
            << "bits " << bits;
        EXPECT_EQ(std::memcmp(p.b + lower, before.b + lower, upper - lower), 0) << "the hole";
        EXPECT_EQ(page_opaque(p.b)->flags, kPageData);
        EXPECT_EQ(page_opaque(p.b)->format, kFormatRowWise);
        EXPECT_EQ(page_opaque(p.b)->page_id, kPageId);
        EXPECT_EQ(get_u16(p.b, kPdSpecialOffset), 8176);

        // The stored signatures scan as an array.
        std::vector<uint8_t> q(s, 0);
        signature_set_bit(q.data(), static_cast<uint32_t>(bits - 1));
        signature_set_bit(q.data(), 0);
        SignatureMask mask;
        mask.build(q.data(), static_cast<int>(s));
        std::vector<uint16_t> out(g.capacity);
        int n = mask.match_array(row_signatures(p.b), static_cast<int>(page_opaque(p.b)->count), out.data());
        int k = 0;
        for (uint32_t i = 0; i < g.capacity; i++) {
            bool want = signature_test_bit(sigs[i].data(), 0) &&
                        signature_test_bit(sigs[i].data(), static_cast<uint32_t>(bits - 1));
            if (want) {
                ASSERT_LT(k, n);
                ASSERT_EQ(out[k++], i);
            }
        }
        ASSERT_EQ(k, n);
    }
}

TEST(RowPage, FullPageHasAValidHoleForEverySignatureSize)
{
    // Fill a page to capacity for every stored signature size: the bounds
    // stay pd_lower <= pd_upper, the check passes, and the last signature
    // and the last TID do not overlap (every entry reads back).
    std::mt19937_64 rng(53);
    for (uint32_t s = 2; s <= static_cast<uint32_t>(kMaxSignatureBytes); s += 2) {
        RowPageGeometry g = row_page_geometry(s);
        Page p;
        init_data_page(p.b);
        std::vector<uint8_t> entries((s + kTidSize) * g.capacity);
        fill_random(entries.data(), entries.size(), rng);
        for (uint32_t i = 0; i < g.capacity; i++) {
            const uint8_t *e = entries.data() + i * (s + kTidSize);
            row_page_append(p.b, g, e, e + s);
        }
        ASSERT_TRUE(holds_entries(p.b, s, g.capacity));
        ASSERT_LE(get_u16(p.b, kPdLowerOffset), get_u16(p.b, kPdUpperOffset)) << "S " << s;
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None)) << "S " << s;
        ASSERT_LE(row_signature(p.b, g, g.capacity - 1) + s, row_tid(p.b, g, g.capacity - 1)) << "S " << s;
        for (uint32_t i = 0; i < g.capacity; i++) {
            const uint8_t *e = entries.data() + i * (s + kTidSize);
            ASSERT_EQ(std::memcmp(p.b + sig_at(s, i), e, s), 0) << "S " << s << " entry " << i;
            ASSERT_EQ(std::memcmp(p.b + tid_at(i), e + s, kTidSize), 0) << "S " << s << " entry " << i;
        }
        // The hole is the page's only zero bytes left from init_data_page.
        uint32_t lower = lower_for(s, g.capacity), upper = upper_for(g.capacity);
        for (uint32_t i = lower; i < upper; i++)
            ASSERT_EQ(p.b[i], 0) << "S " << s << " byte " << i;
    }
}

TEST(RowPage, AppendTakesASignatureMadeInPlace)
{
    // A build forms the signature straight in the next slot, then appends
    // it with itself as the source: kept as is, TID, count and bounds set.
    std::mt19937_64 rng(54);
    for (uint32_t s : {2u, 10u, 512u}) {
        RowPageGeometry g = row_page_geometry(s);
        Page p;
        fill_random(p.b, kBlockSize, rng);
        init_page(p.b, kPageData, static_cast<uint16_t>(kPageHeaderSize));
        for (uint32_t i = 0; i < 3; i++) {
            uint8_t *slot = row_signature(p.b, g, i);
            ASSERT_EQ(slot, p.b + sig_at(s, i));
            fill_random(slot, s, rng);
            std::vector<uint8_t> sig(slot, slot + s), tid(kTidSize);
            fill_random(tid.data(), kTidSize, rng);
            const Page prev = p;
            row_page_append(p.b, g, slot, tid.data());
            ASSERT_TRUE(holds_entries(p.b, s, i + 1));
            ASSERT_EQ(std::memcmp(p.b + sig_at(s, i), sig.data(), s), 0) << "S " << s << " entry " << i;
            ASSERT_EQ(std::memcmp(p.b + tid_at(i), tid.data(), kTidSize), 0) << "S " << s << " entry " << i;
            ASSERT_TRUE(same_outside(prev.b, p.b,
                                     {{tid_at(i), tid_at(i) + kTidSize}, kCountBytes, kLowerBytes,
                                      kUpperBytes, kSumBytes}))
                << "S " << s << " entry " << i;
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
        }
    }
}

TEST(RowPage, TruncateZeroesExactlyTheDroppedEntries)
{
    std::mt19937_64 rng(55);
    for (int bits : {16, 80, 100, 4096}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        const uint32_t s = g.signature_bytes;
        for (uint32_t n : {1u, 2u, 7u, g.capacity / 2, g.capacity - 1, g.capacity}) {
            for (uint32_t keep : {0u, 1u, n / 2, n - 1, n}) {
                Page p;
                fill_random(p.b, kBlockSize, rng); // garbage in the hole too
                init_page(p.b, kPageData, static_cast<uint16_t>(kPageHeaderSize));
                for (uint32_t i = 0; i < n; i++) {
                    uint8_t e[kMaxSignatureBytes + kTidSize];
                    fill_random(e, s + kTidSize, rng);
                    e[0] |= 1; // no entry all zeroes: the zeroing shows
                    e[s] |= 1;
                    row_page_append(p.b, g, e, e + s);
                }
                const Page before = p;
                row_page_truncate(p.b, g, keep);
                const std::string where = "bits " + std::to_string(bits) + " n " +
                                          std::to_string(n) + " keep " + std::to_string(keep);

                ASSERT_TRUE(holds_entries(p.b, s, keep)) << where;
                ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None)) << where;
                // The dropped signatures [keep, n) and TIDs [keep, n) are
                // zero, byte for byte ...
                const Range dropped_sigs{sig_at(s, keep), sig_at(s, n)};
                const Range dropped_tids{upper_for(n), upper_for(keep)};
                for (uint32_t i = dropped_sigs.begin; i < dropped_sigs.end; i++)
                    ASSERT_EQ(p.b[i], 0) << where << " signature byte " << i;
                for (uint32_t i = dropped_tids.begin; i < dropped_tids.end; i++)
                    ASSERT_EQ(p.b[i], 0) << where << " TID byte " << i;
                // ... and nothing else changed: the kept entries, the old
                // hole's garbage, the header but the bounds, the special
                // space but the count.
                ASSERT_TRUE(same_outside(before.b, p.b,
                                         {dropped_sigs, dropped_tids, kCountBytes, kLowerBytes,
                                          kUpperBytes, kSumBytes}))
                    << where;
                if (keep == n) {
                    ASSERT_EQ(std::memcmp(before.b, p.b, kBlockSize), 0) << where << ": a no-op";
                }

                // The next append takes the first dropped slot.
                if (keep < g.capacity) {
                    std::vector<uint8_t> e(s + kTidSize, 0x42);
                    row_page_append(p.b, g, e.data(), e.data() + s);
                    ASSERT_TRUE(holds_entries(p.b, s, keep + 1)) << where;
                    ASSERT_EQ(std::memcmp(p.b + sig_at(s, keep), e.data(), s), 0) << where;
                    ASSERT_EQ(std::memcmp(p.b + tid_at(keep), e.data() + s, kTidSize), 0) << where;
                }
            }
        }
    }
}

TEST(RowPage, MoveAndTruncateCompactLikeVacuum)
{
    std::mt19937_64 rng(52);
    for (int bits : {16, 80, 100, 4096}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        const uint32_t s = g.signature_bytes;
        for (int round = 0; round < 5; round++) {
            Page p;
            init_data_page(p.b);
            uint32_t n = round == 0 ? g.capacity : 1 + static_cast<uint32_t>(rng() % g.capacity);
            std::vector<std::vector<uint8_t>> entries; // signature + TID
            for (uint32_t i = 0; i < n; i++) {
                std::vector<uint8_t> e(s + kTidSize);
                fill_random(e.data(), e.size(), rng);
                e[0] |= 1; // never all zeroes
                e[s] |= 1;
                row_page_append(p.b, g, e.data(), e.data() + s);
                entries.push_back(e);
            }
            // Delete about a third (all of them in one round), then compact
            // as vacuum does.
            std::vector<bool> live(n);
            for (uint32_t i = 0; i < n; i++)
                live[i] = round != 4 && rng() % 3 != 0;
            uint32_t to = 0;
            for (uint32_t from = 0; from < n; from++) {
                if (!live[from])
                    continue;
                if (to != from)
                    row_page_move(p.b, g, from, to);
                to++;
            }
            ASSERT_TRUE(holds_entries(p.b, s, n)) << "row_page_move must not change the count or bounds";
            row_page_truncate(p.b, g, to);
            ASSERT_TRUE(holds_entries(p.b, s, to)) << "bits " << bits << " round " << round;
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
            uint32_t k = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (!live[i])
                    continue;
                ASSERT_EQ(std::memcmp(p.b + sig_at(s, k), entries[i].data(), s), 0)
                    << "bits " << bits << " slot " << k;
                ASSERT_EQ(std::memcmp(p.b + tid_at(k), entries[i].data() + s, kTidSize), 0)
                    << "bits " << bits << " slot " << k;
                k++;
            }
            ASSERT_EQ(k, to);
            // No stale copy of a moved or dead entry is left: the hole is
            // zero from pd_lower to pd_upper, as on a fresh page.
            for (uint32_t i = lower_for(s, to); i < upper_for(to); i++)
                ASSERT_EQ(p.b[i], 0) << "bits " << bits << " round " << round << " byte " << i;
            // Appending after compaction fills the first free slot.
            if (to < g.capacity) {
                std::vector<uint8_t> e(s + kTidSize, 0x42);
                row_page_append(p.b, g, e.data(), e.data() + s);
                EXPECT_EQ(std::memcmp(p.b + sig_at(s, to), e.data(), s), 0);
                EXPECT_EQ(std::memcmp(p.b + tid_at(to), e.data() + s, kTidSize), 0);
                EXPECT_TRUE(holds_entries(p.b, s, to + 1));
            }
        }
    }
}

TEST(RowPage, CheckFindsEachProblem)
{
    // A page of 100 entries of 10-byte signatures: pd_lower 1,024,
    // pd_upper 7,576.  Capacity 509.
    RowPageGeometry g = row_page_geometry(10);
    struct Corruption {
        const char *what;
        PageProblem expect;
        void (*apply)(uint8_t *page);
    };
    const Corruption corruptions[] = {
        {"count = capacity, bounds following", PageProblem::None,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 509); }},
        {"count 0, bounds following", PageProblem::None,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 0); }},
        {"count 1, bounds following", PageProblem::None,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 1); }},
        // Counts past the capacity: BadCount, whatever the exact bounds,
        // as long as the hole itself is sane.
        {"count > capacity, bounds left", PageProblem::BadCount,
         [](uint8_t *p) { page_opaque(p)->count = 510; }},
        {"count huge, bounds left", PageProblem::BadCount,
         [](uint8_t *p) { page_opaque(p)->count = 0xFFFF; }},
        {"count > capacity, pd_lower off too", PageProblem::BadCount,
         [](uint8_t *p) {
             page_opaque(p)->count = 510;
             put_u16(p, kPdLowerOffset, static_cast<uint16_t>(get_u16(p, kPdLowerOffset) + 1));
         }},
        {"count > capacity, bounds of an empty page", PageProblem::BadCount,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 0); page_opaque(p)->count = 600; }},
        // ... but bounds that follow a count past the capacity cross, and
        // the bounds check sees that first.
        {"count = capacity + 1, bounds following", PageProblem::BadBounds,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 510); }},
        // A count changed without the bounds.
        {"count + 1, bounds left", PageProblem::BadBounds,
         [](uint8_t *p) { page_opaque(p)->count = 101; }},
        {"count - 1, bounds left", PageProblem::BadBounds,
         [](uint8_t *p) { page_opaque(p)->count = 99; }},
        {"count 0, bounds left", PageProblem::BadBounds,
         [](uint8_t *p) { page_opaque(p)->count = 0; }},
        {"count = capacity, bounds left", PageProblem::BadBounds,
         [](uint8_t *p) { page_opaque(p)->count = 509; }},
        // Bounds that disagree with the count.
        {"pd_lower one entry short", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 1014); }},
        {"pd_lower one entry long", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 1034); }},
        {"pd_lower one byte long", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 1025); }},
        {"pd_lower one byte short", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 1023); }},
        {"pd_lower at the header", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 24); }},
        {"pd_upper one entry short", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 7590); }},
        {"pd_upper one entry long", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 7578); }},
        {"pd_upper one byte off", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 7575); }},
        {"pd_upper at the special space", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 8176); }},
        {"pd_upper = pd_lower", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 1024); }},
        {"bounds of count + 1", PageProblem::BadBounds,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 101); page_opaque(p)->count = 100; }},
        {"bounds of count - 1", PageProblem::BadBounds,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 99); page_opaque(p)->count = 100; }},
        {"bounds of an empty page", PageProblem::BadBounds,
         [](uint8_t *p) { set_count_and_bounds(p, 10, 0); page_opaque(p)->count = 100; }},
        {"bounds of 12-byte signatures", PageProblem::BadBounds,
         [](uint8_t *p) { set_count_and_bounds(p, 12, 100); }},
        {"bounds swapped", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 7576); put_u16(p, kPdUpperOffset, 1024); }},
        // The rest, as before.
        {"flags meta", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = kPageMeta; }},
        {"flags zero", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = 0; }},
        {"flags both", PageProblem::WrongKind,
         [](uint8_t *p) { page_opaque(p)->flags = kPageMeta | kPageData; }},
        {"flags meta, count changed too", PageProblem::WrongKind,
         [](uint8_t *p) { page_opaque(p)->flags = kPageMeta; page_opaque(p)->count = 101; }},
        {"format 2", PageProblem::BadFormat, [](uint8_t *p) { page_opaque(p)->format = 2; }},
        {"format 0", PageProblem::BadFormat, [](uint8_t *p) { page_opaque(p)->format = 0; }},
        {"format 2, count past capacity too", PageProblem::BadFormat,
         [](uint8_t *p) { page_opaque(p)->format = 2; page_opaque(p)->count = 510; }},
        {"page_id", PageProblem::NotBloomidx, [](uint8_t *p) { page_opaque(p)->page_id = 0; }},
        {"pd_special", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, kSpecialOffset - 8); }},
        {"pd_lower inside the header", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 10); }},
        {"pd_upper < pd_lower", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 20); }},
        {"pd_upper past special", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 8190); }},
    };
    for (const Corruption &c : corruptions) {
        Page p;
        init_data_page(p.b);
        set_count_and_bounds(p.b, 10, 100);
        ASSERT_EQ(get_u16(p.b, kPdLowerOffset), 1024);
        ASSERT_EQ(get_u16(p.b, kPdUpperOffset), 7576);
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
        c.apply(p.b);
        EXPECT_TRUE(problem_is(check_row_page(p.b, g), c.expect)) << c.what;
    }

    // A data page checked with the geometry of another signature size (a
    // metapage / data page mismatch): too many entries for the bigger one,
    // bounds in the wrong place for a size where the count would fit.
    Page p;
    init_data_page(p.b);
    set_count_and_bounds(p.b, 10, 509);
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(10)), PageProblem::None));
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(12)), PageProblem::BadCount));
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(8)), PageProblem::BadBounds));
    set_count_and_bounds(p.b, 10, 100);
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(12)), PageProblem::BadBounds));
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(8)), PageProblem::BadBounds));
    // An empty page has the same bounds whatever the signature size.
    set_count_and_bounds(p.b, 10, 0);
    for (uint32_t s : {2u, 8u, 10u, 12u, 512u})
        EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(s)), PageProblem::None)) << s;
}

TEST(RowPage, CheckWantsTheBoundsOfTheCountForEverySize)
{
    for (int bits : {1, 16, 17, 80, 96, 100, 512, 1000, 4096}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        const uint32_t s = g.signature_bytes, cap = g.capacity;
        for (uint32_t n : {0u, 1u, 2u, cap / 2, cap - 1, cap}) {
            Page p;
            init_data_page(p.b);
            set_count_and_bounds(p.b, s, n);
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None)) << "S " << s << " n " << n;
            const uint16_t lower = get_u16(p.b, kPdLowerOffset), upper = get_u16(p.b, kPdUpperOffset);
            auto expect = [&](const char *what, uint32_t count, int dlower, int dupper, PageProblem want) {
                page_opaque(p.b)->count = static_cast<uint16_t>(count);
                put_u16(p.b, kPdLowerOffset, static_cast<uint16_t>(lower + dlower));
                put_u16(p.b, kPdUpperOffset, static_cast<uint16_t>(upper + dupper));
                EXPECT_TRUE(problem_is(check_row_page(p.b, g), want)) << what << ": S " << s << " n " << n;
            };
            const int si = static_cast<int>(s), ti = static_cast<int>(kTidSize);
            expect("as set", n, 0, 0, PageProblem::None);
            expect("pd_lower + 1", n, 1, 0, PageProblem::BadBounds);
            expect("pd_lower - 1", n, -1, 0, PageProblem::BadBounds);
            expect("pd_lower - S", n, -si, 0, PageProblem::BadBounds);
            expect("pd_lower + S", n, si, 0, PageProblem::BadBounds);
            expect("pd_upper + 1", n, 0, 1, PageProblem::BadBounds);
            expect("pd_upper - 1", n, 0, -1, PageProblem::BadBounds);
            expect("pd_upper + 6", n, 0, ti, PageProblem::BadBounds);
            expect("pd_upper - 6", n, 0, -ti, PageProblem::BadBounds);
            expect("bounds of one entry more", n, si, -ti, PageProblem::BadBounds);
            if (n > 0) {
                expect("count - 1, bounds left", n - 1, 0, 0, PageProblem::BadBounds);
                expect("bounds of one entry less", n, -si, ti, PageProblem::BadBounds);
                expect("count and bounds one less", n - 1, -si, ti, PageProblem::None);
            }
            if (n < cap)
                expect("count + 1, bounds left", n + 1, 0, 0, PageProblem::BadBounds);
            else
                expect("count past capacity, bounds left", n + 1, 0, 0, PageProblem::BadCount);
        }
    }
}

TEST(PageProblemText, EveryProblemHasItsOwnWords)
{
    std::set<std::string> texts;
    for (PageProblem problem : kAllProblems) {
        const char *text = page_problem_text(problem);
        ASSERT_NE(text, nullptr);
        EXPECT_GT(std::strlen(text), 3u);
        EXPECT_STRNE(text, page_problem_text(static_cast<PageProblem>(1000)))
            << "enumerator " << static_cast<int>(problem) << " falls back to the default";
        texts.insert(text);
    }
    EXPECT_EQ(texts.size(), sizeof kAllProblems / sizeof kAllProblems[0]);
    EXPECT_EQ(static_cast<int>(PageProblem::BadLiveBits) + 1,
              static_cast<int>(sizeof kAllProblems / sizeof kAllProblems[0]))
        << "a new PageProblem: add it to kAllProblems";
}

// Slice pages (segments, coming): filled and checked; every flipped bit of
// the words is caught by the sum; another segment, slice or row count is
// caught by the special space.
TEST(SlicePage, FillThenCheckAndEveryFlippedBitIsCaught)
{
    std::vector<uint64_t> words(kSliceWords);
    uint64_t x = 0x243F6A8885A308D3ULL;
    for (uint64_t &w : words) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w = x & (x >> 3); // about a quarter of the bits set
    }
    Page p;
    uint8_t *page = p.b;
    std::memset(page, 0xEE, kBlockSize); // garbage, then what PageInit leaves
    init_page(page, kPageSlice, static_cast<uint16_t>(kPageHeaderSize));
    slice_page_fill(page, words.data(), 40000, 17, 0x12345678u);
    EXPECT_EQ(check_slice_page(page, 40000, 17, 0x12345678u), PageProblem::None);
    EXPECT_EQ(std::memcmp(slice_page_words(page), words.data(), kSliceWords * 8), 0);
    // The format, independently of the accessors: words from byte 24,
    // pd_lower at their end (8,152), the special space as documented.
    EXPECT_EQ(kSlicePageLower, 8152u);
    EXPECT_EQ(get_u16(page, kPdLowerOffset), 8152);
    EXPECT_EQ(get_u16(page, kPdUpperOffset), 8176);
    EXPECT_EQ(std::memcmp(page + 24, words.data(), 8128), 0);
    EXPECT_EQ(get_u16(page, 8176), 40000);      // count: rows
    EXPECT_EQ(get_u16(page, 8178), kPageSlice); // flags
    EXPECT_EQ(get_u16(page, 8180), 2);          // format
    EXPECT_EQ(get_u16(page, 8184), 17);         // the slice
    EXPECT_EQ(get_u16(page, 8186), 0x5678);     // the segment id, low half
    EXPECT_EQ(get_u16(page, 8188), 0x1234);
    EXPECT_EQ(get_u16(page, 8190), kPageId);

    EXPECT_EQ(check_slice_page(page, 40001, 17, 0x12345678u), PageProblem::BadSlice);
    EXPECT_EQ(check_slice_page(page, 40000, 18, 0x12345678u), PageProblem::BadSlice);
    EXPECT_EQ(check_slice_page(page, 40000, 17, 0x12345679u), PageProblem::BadSlice);
    EXPECT_EQ(check_slice_page(page, 40000, 17, 0x02345678u), PageProblem::BadSlice);

    for (uint32_t byte = kPageHeaderSize; byte < kSlicePageLower; byte++)
        for (int bit = 0; bit < 8; bit++) {
            page[byte] ^= static_cast<uint8_t>(1 << bit);
            ASSERT_EQ(check_slice_page(page, 40000, 17, 0x12345678u), PageProblem::BadSliceBits)
                << "byte " << byte << " bit " << bit;
            page[byte] ^= static_cast<uint8_t>(1 << bit);
        }
    // A row-wise data page is not a slice page, nor the reverse.
    page_opaque(page)->flags = kPageData;
    EXPECT_EQ(check_slice_page(page, 40000, 17, 0x12345678u), PageProblem::WrongKind);
}

// Segment directory entries: 32 bytes at fixed offsets; a sound entry
// passes; every flipped bit, and every field out of range, is caught.
TEST(SegmentEntry, LayoutCheckAndDamage)
{
    EXPECT_EQ(offsetof(SegmentEntry, segment_id), 0u);
    EXPECT_EQ(offsetof(SegmentEntry, header_block), 4u);
    EXPECT_EQ(offsetof(SegmentEntry, first_slice), 8u);
    EXPECT_EQ(offsetof(SegmentEntry, rows), 12u);
    EXPECT_EQ(offsetof(SegmentEntry, live_rows), 14u);
    EXPECT_EQ(offsetof(SegmentEntry, filter_block), 16u);
    EXPECT_EQ(offsetof(SegmentEntry, filter_offset), 20u);
    EXPECT_EQ(offsetof(SegmentEntry, slices_per_page), 22u);
    EXPECT_EQ(offsetof(SegmentEntry, check), 28u);

    const uint32_t nslices = 104, nblocks = 1000;
    SegmentEntry e = {};
    e.segment_id = 7;
    e.header_block = 10 + 104 + 2; // after the slices, the live page and one TID page
    e.first_slice = 10;
    e.rows = static_cast<uint16_t>(kSegmentRows);
    e.live_rows = 60000;
    e.check = segment_entry_check(e);
    ASSERT_TRUE(segment_entry_ok(e, nslices, nblocks));

    // Every flipped bit.
    for (size_t byte = 0; byte < sizeof e; byte++)
        for (int bit = 0; bit < 8; bit++) {
            SegmentEntry d = e;
            reinterpret_cast<uint8_t *>(&d)[byte] ^= static_cast<uint8_t>(1 << bit);
            EXPECT_FALSE(segment_entry_ok(d, nslices, nblocks)) << "byte " << byte << " bit " << bit;
        }

    // Fields out of range, even with a matching check.
    auto bad = [&](void (*change)(SegmentEntry &)) {
        SegmentEntry d = e;
        change(d);
        d.check = segment_entry_check(d);
        return !segment_entry_ok(d, nslices, nblocks);
    };
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.segment_id = 0; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.rows = 0; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.rows = kSegmentRows + 1; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.live_rows = static_cast<uint16_t>(d.rows + 1); d.rows = 100; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.header_block = 0; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.header_block = 1000; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.first_slice = 0; }));
    // Packed slices: 2,000 rows, 31 slices a page, 104 slices on 4 pages.
    SegmentEntry p = e;
    p.rows = p.live_rows = 2000;
    p.slices_per_page = 31;
    p.header_block = 10 + 4 + 2;
    p.check = segment_entry_check(p);
    EXPECT_TRUE(segment_entry_ok(p, nslices, nblocks));
    p.slices_per_page = 0; // one a page: the header would be past 104 slice pages
    p.check = segment_entry_check(p);
    EXPECT_FALSE(segment_entry_ok(p, nslices, nblocks));
    p.slices_per_page = 30; // not as many as fit
    p.header_block = 10 + 4 + 2;
    p.check = segment_entry_check(p);
    EXPECT_FALSE(segment_entry_ok(p, nslices, nblocks));
    SegmentEntry full = e;
    full.slices_per_page = 1;
    full.check = segment_entry_check(full);
    EXPECT_TRUE(segment_entry_ok(full, nslices, nblocks));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.first_slice = 1000 - 103; })); // run past the end
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_block = 1000; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.slices_per_page = 2; })); // 65,024 rows: 0 or 1
    // Filters: a group named in full or not at all.
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_group = 1; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_offset = 1; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_block = 500; }));
    EXPECT_FALSE(bad([](SegmentEntry &d) { d.filter_block = 500; d.filter_group = 7; d.filter_offset = kGroupSlots - 1; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_block = 500; d.filter_group = 7; d.filter_offset = kGroupSlots; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.filter_block = 0; d.filter_group = 7; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.header_block = 10 + 104 + 1; })); // no room for a TID page
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.header_block = 10 + 104 + 2 + kMaxTidPages; }));
    EXPECT_TRUE(bad([](SegmentEntry &d) { d.header_block = 5; }));            // before its slices
    EXPECT_FALSE(bad([](SegmentEntry &d) { d.header_block = 10 + 104 + 1 + kMaxTidPages; }));
    // The last segment that fits: slices, live page, a TID page, the header at block 999.
    EXPECT_FALSE(bad([](SegmentEntry &d) { d.first_slice = 1000 - 104 - 3; d.header_block = 999; }));
}

// ---- Segment pages (header, TIDs, live bits) ----

namespace {

// PageInit(page, BLCKSZ, 16): a zeroed page with the bounds of an empty one.
void page_init(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    put_u16(page, kPdLowerOffset, 24);
    put_u16(page, kPdUpperOffset, 8176);
    put_u16(page, kPdSpecialOffset, 8176);
}

struct BuiltSegment {
    SegmentHeader header{};
    std::vector<Page> tid_pages;
    std::vector<HeapTid> tids;
};

// The header and TID pages of a segment of the given TIDs, as the glue
// writes them.
BuiltSegment build_segment(const std::vector<HeapTid> &tids, uint32_t segment_id)
{
    BuiltSegment s;
    s.tids = tids;
    const uint32_t n = static_cast<uint32_t>(tids.size());
    std::vector<uint8_t> bytes(segment_tid_bytes_bound(n));
    uint32_t start[kMaxTidPages];
    uint16_t used[kMaxTidPages];
    s.header.segment_id = segment_id;
    s.header.rows = static_cast<uint16_t>(n);
    s.header.nslices = 104;
    s.header.first_slice = 10;
    s.header.live_block = 10 + 104; // one extent: slices, live page, TID pages
    EXPECT_TRUE(segment_encode_tids(tids.data(), n, bytes.data(), &s.header, start, used));
    s.tid_pages.resize(s.header.ntid_pages);
    for (uint16_t p = 0; p < s.header.ntid_pages; p++) {
        s.header.tid_blocks[p] = 10 + 104 + 1 + p;
        page_init(s.tid_pages[p].b);
        uint16_t groups = 0;
        for (uint32_t g = 0; g < s.header.ngroups; g++)
            groups += s.header.groups[g].page == p;
        tid_page_fill(s.tid_pages[p].b, bytes.data() + start[p], used[p], groups, p, segment_id);
    }
    return s;
}

std::vector<HeapTid> heap_order_tids(uint32_t n, std::mt19937_64 &rng)
{
    std::vector<HeapTid> tids;
    uint32_t block = static_cast<uint32_t>(rng() % 100000);
    uint16_t offset = 0;
    while (tids.size() < n) {
        if (offset >= 60 || rng() % 50 == 0) {
            block += 1 + static_cast<uint32_t>(rng() % 3);
            offset = 0;
        }
        offset = static_cast<uint16_t>(offset + 1 + (rng() % 7 == 0));
        tids.push_back(HeapTid{block, offset});
    }
    return tids;
}

// Every row's TID, read back the way a scan reads it: its group's span on
// its TID page, decoded.
void expect_all_tids_read_back(const BuiltSegment &s)
{
    for (uint32_t g = 0; g < s.header.ngroups; g++) {
        const uint8_t *page = s.tid_pages[s.header.groups[g].page].b;
        const uint32_t first = g * 64;
        const uint32_t n = std::min<uint32_t>(64, s.header.rows - first);
        HeapTid out[64];
        ASSERT_EQ(tid_page_group(s.header, page, g, out), n) << "group " << g;
        for (uint32_t i = 0; i < n; i++) {
            ASSERT_EQ(out[i].block, s.tids[first + i].block) << "row " << first + i;
            ASSERT_EQ(out[i].offset, s.tids[first + i].offset) << "row " << first + i;
        }
    }
}

} // namespace

// Where a segment's header follows its other pages (check_segment_page).
static uint32_t header_at(const SegmentHeader &h)
{
    return h.live_block + 1 + h.ntid_pages + h.key_pages;
}

TEST(SegmentPages, TidsRoundTripAtEveryLength)
{
    std::mt19937_64 rng(11);
    for (uint32_t n : {1u, 2u, 63u, 64u, 65u, 1000u, 30001u, kSegmentRows}) {
        BuiltSegment s = build_segment(heap_order_tids(n, rng), 77);
        Page header;
        page_init(header.b);
        segment_header_fill(header.b, s.header);
        ASSERT_TRUE(problem_is(check_segment_page(header.b, 77, static_cast<uint16_t>(n), 10, 104, 0, 4, header_at(s.header),
                                                  1000),
                               PageProblem::None))
            << n;
        for (uint16_t p = 0; p < s.header.ntid_pages; p++)
            ASSERT_TRUE(problem_is(check_tid_page(s.tid_pages[p].b, s.header, p),
                                   PageProblem::None))
                << n << " page " << p;
        expect_all_tids_read_back(s);
        if (n == kSegmentRows) { // heap order: under 1.4 bytes a TID, 11 pages or fewer
            EXPECT_LE(s.header.ntid_pages, 11u);
        }
    }
}

TEST(SegmentPages, WorstCaseTidsFitTheHeader)
{
    // TIDs far apart with large offsets: every code at its longest.
    std::vector<HeapTid> tids;
    for (uint32_t r = 0; r < kSegmentRows; r++)
        tids.push_back(HeapTid{(r % 2) ? 0xFFFFFFF0u - r : r * 7919u, static_cast<uint16_t>(2048 - r % 1000)});
    BuiltSegment s = build_segment(tids, 5);
    EXPECT_LE(s.header.ntid_pages, kMaxTidPages);
    for (uint16_t p = 0; p < s.header.ntid_pages; p++)
        ASSERT_TRUE(problem_is(check_tid_page(s.tid_pages[p].b, s.header, p), PageProblem::None));
    expect_all_tids_read_back(s);
}

TEST(SegmentPages, DamageIsCaught)
{
    std::mt19937_64 rng(12);
    BuiltSegment s = build_segment(heap_order_tids(5000, rng), 0x12345);
    Page header;
    page_init(header.b);
    segment_header_fill(header.b, s.header);
    auto header_ok = [&](const uint8_t *p) {
        return check_segment_page(p, 0x12345, 5000, 10, 104, 0, 4, header_at(s.header), 1000);
    };
    // Any single flipped bit of the header's payload or special space.
    for (uint32_t off = 24; off < kBlockSize; off += (off < 24 + sizeof(SegmentHeader) ? 1 : 8)) {
        if (off >= 24 + sizeof(SegmentHeader) && off < kSpecialOffset)
            continue;
        Page bad = header;
        bad.b[off] ^= 0x10;
        ASSERT_FALSE(problem_is(header_ok(bad.b), PageProblem::None)) << "byte " << off;
    }
    // Another segment's header, a wrong row count or slice start, blocks past the end.
    EXPECT_TRUE(problem_is(check_segment_page(header.b, 0x12346, 5000, 10, 104, 0, 4, header_at(s.header), 1000),
                           PageProblem::BadSegment));
    EXPECT_TRUE(problem_is(check_segment_page(header.b, 0x12345, 4999, 10, 104, 0, 4, header_at(s.header), 1000),
                           PageProblem::BadSegment));
    EXPECT_TRUE(problem_is(check_segment_page(header.b, 0x12345, 5000, 11, 104, 0, 4, header_at(s.header), 1000),
                           PageProblem::BadSegment));
    EXPECT_TRUE(problem_is(check_segment_page(header.b, 0x12345, 5000, 10, 104, 0, 4, header_at(s.header), 115),
                           PageProblem::BadSegment));
    // Packed slices: 5,000 rows, 12 a page, 104 slices on 9 pages; the live
    // page after them; the header must say as its entry says.
    {
        SegmentHeader packed = s.header;
        packed.slices_per_page = packed_slices_per_page(5000);
        ASSERT_EQ(packed.slices_per_page, 12u);
        packed.live_block = 10 + 9;
        for (uint32_t p = 0; p < packed.ntid_pages; p++)
            packed.tid_blocks[p] = 10 + 9 + 1 + p;
        Page ph;
        page_init(ph.b);
        segment_header_fill(ph.b, packed);
        EXPECT_TRUE(problem_is(check_segment_page(ph.b, 0x12345, 5000, 10, 104, 12, 4, header_at(packed), 1000),
                               PageProblem::None));
        EXPECT_TRUE(problem_is(check_segment_page(ph.b, 0x12345, 5000, 10, 104, 0, 4, header_at(packed), 1000),
                               PageProblem::BadSegment));
        FreeExtent ext[kMaxSegmentExtents];
        ASSERT_EQ(segment_extents(packed, 10 + 9 + 1 + packed.ntid_pages, 0, ext), 1u);
        EXPECT_EQ(ext[0].first, 10u);
        EXPECT_EQ(ext[0].nblocks, 9u + 1 + packed.ntid_pages + 1);
        packed.slices_per_page = 11; // not as many as fit
        page_init(ph.b);
        segment_header_fill(ph.b, packed);
        EXPECT_TRUE(problem_is(check_segment_page(ph.b, 0x12345, 5000, 10, 104, 11, 4, header_at(packed), 1000),
                               PageProblem::BadSegment));
    }
    // Not one extent: the live page or a TID page elsewhere (sum recomputed).
    for (int which = 0; which < 2; which++) {
        SegmentHeader moved = s.header;
        if (which == 0)
            moved.live_block = 300;
        else
            moved.tid_blocks[0] = 300;
        Page apart;
        page_init(apart.b);
        segment_header_fill(apart.b, moved);
        EXPECT_TRUE(problem_is(header_ok(apart.b), PageProblem::BadSegment)) << which;
    }
    // A sound-looking header (sum recomputed) with groups out of order.
    SegmentHeader h = s.header;
    std::swap(h.groups[3], h.groups[4]);
    Page swapped;
    page_init(swapped.b);
    segment_header_fill(swapped.b, h);
    EXPECT_TRUE(problem_is(header_ok(swapped.b), PageProblem::BadSegment));
    // A header a block past its other pages (a gap inside the segment).
    EXPECT_TRUE(problem_is(check_segment_page(header.b, 0x12345, 5000, 10, 104, 0, 4,
                                              header_at(s.header) + 1, 1000),
                           PageProblem::BadSegment));

    // Key pages: as many as 5,000 rows of 4 keys take, ending right before
    // the header; another count, another column count or a header
    // elsewhere is damage (a merge would read keys past its pages).
    {
        SegmentHeader k = s.header;
        k.key_pages = static_cast<uint16_t>(key_page_count(5000, 4));
        ASSERT_GT(k.key_pages, 1u);
        const uint32_t at = k.live_block + 1 + k.ntid_pages + k.key_pages;
        Page kp;
        page_init(kp.b);
        segment_header_fill(kp.b, k);
        EXPECT_TRUE(problem_is(check_segment_page(kp.b, 0x12345, 5000, 10, 104, 0, 4, at, 1000),
                               PageProblem::None));
        EXPECT_TRUE(problem_is(check_segment_page(kp.b, 0x12345, 5000, 10, 104, 0, 4, at + 1, 1000),
                               PageProblem::BadSegment));
        EXPECT_TRUE(problem_is(check_segment_page(kp.b, 0x12345, 5000, 10, 104, 0, 3, at, 1000),
                               PageProblem::BadSegment));
        k.key_pages--;
        page_init(kp.b);
        segment_header_fill(kp.b, k);
        EXPECT_TRUE(problem_is(check_segment_page(kp.b, 0x12345, 5000, 10, 104, 0, 4, at - 1, 1000),
                               PageProblem::BadSegment));
    }

    // A flipped bit in a TID page's bytes, its id or its index.
    const Page &tp = s.tid_pages[0];
    const uint32_t lower = get_u16(tp.b, kPdLowerOffset);
    for (uint32_t off = 24; off < lower; off++) {
        Page bad = tp;
        bad.b[off] ^= 0x04;
        ASSERT_TRUE(problem_is(check_tid_page(bad.b, s.header, 0), PageProblem::BadTidBytes))
            << "byte " << off;
    }
    EXPECT_TRUE(problem_is(check_tid_page(tp.b, s.header, 1), PageProblem::BadTidPage));
    Page other = tp;
    page_opaque(other.b)->reserved[0] ^= 1;
    EXPECT_TRUE(problem_is(check_tid_page(other.b, s.header, 0), PageProblem::BadTidPage));
    EXPECT_TRUE(problem_is(check_tid_page(header.b, s.header, 0), PageProblem::WrongKind));
}

TEST(SegmentPages, LivePageClearsKeepTheSum)
{
    std::vector<uint64_t> words(kSliceWords, 0);
    const uint32_t rows = 40000;
    for (uint32_t r = 0; r < rows; r++)
        words[r / 64] |= uint64_t{1} << (r % 64);
    Page live;
    page_init(live.b);
    live_page_fill(live.b, words.data(), rows, 9);
    ASSERT_TRUE(problem_is(check_live_page(live.b, rows, 9), PageProblem::None));
    std::mt19937_64 rng(3);
    std::set<uint32_t> cleared;
    for (int i = 0; i < 5000; i++) {
        uint32_t r = static_cast<uint32_t>(rng() % rows);
        EXPECT_EQ(live_page_clear(live.b, r), cleared.insert(r).second) << r;
        ASSERT_TRUE(problem_is(check_live_page(live.b, rows, 9), PageProblem::None)) << i;
    }
    const uint64_t *w = slice_page_words(live.b);
    for (uint32_t r = 0; r < rows; r++)
        ASSERT_EQ((w[r / 64] >> (r % 64)) & 1, cleared.count(r) ? 0u : 1u) << r;
    EXPECT_FALSE(live_page_clear(live.b, kSegmentRows));
    // A bit set again by damage is caught: it would resurrect nothing, but
    // a cleared one would lose a row.
    Page bad = live;
    bad.b[24 + 100] ^= 0x01;
    EXPECT_TRUE(problem_is(check_live_page(bad.b, rows, 9), PageProblem::BadLiveBits));
    EXPECT_TRUE(problem_is(check_live_page(live.b, rows, 10), PageProblem::BadLive));
}

// Directory pages: how many a directory needs and what each holds, their
// fill and check (any changed word, a wrong place or count is caught), and
// the metapage's list of them checked against its segment count.
TEST(DirectoryPages, CountsFillCheckAndTheMetapageList)
{
    EXPECT_EQ(directory_pages(0), 0u);
    EXPECT_EQ(directory_pages(kInlineSegments), 0u);
    EXPECT_EQ(directory_pages(kInlineSegments + 1), 1u);
    EXPECT_EQ(directory_pages(kInlineSegments + kDirectoryPageEntries), 1u);
    EXPECT_EQ(directory_pages(kInlineSegments + kDirectoryPageEntries + 1), 2u);
    EXPECT_EQ(directory_pages(kMaxSegments), kMaxDirectoryPages);
    EXPECT_EQ(directory_page_count(kInlineSegments + 1, 0), 1u);
    EXPECT_EQ(directory_page_count(kInlineSegments + kDirectoryPageEntries + 3, 0),
              kDirectoryPageEntries);
    EXPECT_EQ(directory_page_count(kInlineSegments + kDirectoryPageEntries + 3, 1), 3u);
    EXPECT_EQ(directory_page_count(kMaxSegments, kMaxDirectoryPages - 1), kDirectoryPageEntries);
    // Entries 0..n-1 cover each slot once.
    for (uint32_t n : {225u, 478u, 479u, 1000u, kMaxSegments}) {
        uint32_t total = kInlineSegments;
        for (uint32_t p = 0; p < directory_pages(n); p++)
            total += directory_page_count(n, p);
        EXPECT_EQ(total, n) << n;
    }

    std::vector<SegmentEntry> entries(kDirectoryPageEntries);
    for (uint32_t i = 0; i < entries.size(); i++) {
        std::memset(&entries[i], 0, sizeof entries[i]);
        entries[i].segment_id = 1000 + i;
        entries[i].header_block = 5000 + 3 * i;
        entries[i].rows = entries[i].live_rows = 64;
        entries[i].check = segment_entry_check(entries[i]);
    }
    Page p;
    for (uint16_t count : {uint16_t{1}, uint16_t{77}, uint16_t{kDirectoryPageEntries}}) {
        page_init(p.b);
        directory_page_fill(p.b, entries.data(), count, 3);
        EXPECT_TRUE(problem_is(check_directory_page(p.b, count, 3), PageProblem::None));
        EXPECT_EQ(std::memcmp(directory_page_entries(p.b), entries.data(),
                              count * sizeof(SegmentEntry)), 0);
        EXPECT_TRUE(problem_is(check_directory_page(p.b, count, 2), PageProblem::BadDirectory));
        EXPECT_TRUE(problem_is(check_directory_page(p.b, count - 1, 3), PageProblem::BadDirectory));
        // Every 16-bit word of the entries, changed, is caught.
        for (uint32_t w = 0; w < count * sizeof(SegmentEntry) / 2; w++) {
            Page bad = p;
            bad.b[kPageHeaderSize + 2 * w] ^= 0x10;
            ASSERT_FALSE(problem_is(check_directory_page(bad.b, count, 3), PageProblem::None))
                << "word " << w;
        }
    }
    // Two entries swapped: the weighted sum sees it.
    {
        Page bad = p;
        SegmentEntry *e = directory_page_entries(bad.b);
        std::swap(e[5], e[6]);
        EXPECT_TRUE(problem_is(check_directory_page(bad.b, kDirectoryPageEntries, 3),
                               PageProblem::BadDirectory));
    }
    // A change made in place with its sum kept (VACUUM's live count).
    for (uint32_t place : {0u, 7u, kDirectoryPageEntries - 1}) {
        SegmentEntry before = directory_page_entries(p.b)[place];
        directory_page_entries(p.b)[place].live_rows = static_cast<uint16_t>(10 + place);
        directory_page_entries(p.b)[place].check =
            segment_entry_check(directory_page_entries(p.b)[place]);
        EXPECT_FALSE(problem_is(check_directory_page(p.b, kDirectoryPageEntries, 3),
                                PageProblem::None));
        directory_page_entry_changed(p.b, place, before);
        EXPECT_TRUE(problem_is(check_directory_page(p.b, kDirectoryPageEntries, 3),
                               PageProblem::None))
            << place;
    }
    // Another page kind is not a directory page.
    page_init(p.b);
    free_page_fill(p.b);
    EXPECT_TRUE(problem_is(check_directory_page(p.b, 0, 0), PageProblem::WrongKind));

    // The metapage's list: as many pages as the segment count needs.
    const uint16_t cols[] = {2, 9, 80};
    Page m;
    init_meta_page(m.b, 80, 3, cols);
    auto set_segments = [](uint8_t *page, uint16_t n) {
        DirectoryHeader *d = directory_header(page);
        d->nsegments = n;
        d->check = directory_check(*d);
    };
    auto set_pages = [](uint8_t *page, uint16_t count) {
        DirectoryPageList *l = directory_page_list(page);
        directory_page_list_init(l);
        l->count = count;
        for (uint32_t i = 0; i < count; i++)
            l->blocks[i] = 100 + i;
        l->check = directory_page_list_check(*l);
    };
    set_segments(m.b, static_cast<uint16_t>(kInlineSegments + kDirectoryPageEntries + 1));
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory)); // no pages listed
    set_pages(m.b, 2);
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::None));
    set_pages(m.b, 1);
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
    set_pages(m.b, 3);
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
    set_pages(m.b, 2);
    directory_page_list(m.b)->blocks[1] = 0; // a listed page at block 0
    directory_page_list(m.b)->check = directory_page_list_check(*directory_page_list(m.b));
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
    set_pages(m.b, 2);
    directory_page_list(m.b)->blocks[2] = 7; // a block past the count
    directory_page_list(m.b)->check = directory_page_list_check(*directory_page_list(m.b));
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
    set_pages(m.b, 2);
    directory_page_list(m.b)->blocks[0] = 99; // damage the check misses not
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
    set_segments(m.b, static_cast<uint16_t>(kMaxSegments + 1));
    set_pages(m.b, static_cast<uint16_t>(kMaxDirectoryPages));
    EXPECT_TRUE(problem_is(check_meta_page(m.b), PageProblem::BadDirectory));
}

// directory_apply: the entries after a change are those kept and the one
// added, each once; only the holes and the end move (so few directory
// pages change); a missing or twice-removed id is refused.
TEST(DirectoryPages, ApplyMovesFewEntries)
{
    std::mt19937 rng(11);
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + rng() % 900;
        std::vector<SegmentEntry> entries(n + 1);
        for (uint32_t i = 0; i < n; i++) {
            std::memset(&entries[i], 0, sizeof(SegmentEntry));
            entries[i].segment_id = 10 + 3 * i;
        }
        std::vector<uint32_t> removed;
        for (uint32_t i = 0; i < n; i++)
            if (rng() % 7 == 0 || (round % 5 == 0 && i >= n - 3))
                removed.push_back(entries[i].segment_id);
        std::shuffle(removed.begin(), removed.end(), rng);
        SegmentEntry added;
        std::memset(&added, 0, sizeof added);
        added.segment_id = 100000 + round;
        const bool add = round % 3 != 0;
        std::vector<SegmentEntry> after = entries;
        uint32_t m = directory_apply(after.data(), n, removed.data(),
                                     static_cast<uint32_t>(removed.size()), add ? &added : nullptr);
        ASSERT_EQ(m, n - removed.size() + (add ? 1 : 0)) << round;
        std::multiset<uint32_t> want, got;
        for (uint32_t i = 0; i < n; i++)
            if (std::find(removed.begin(), removed.end(), entries[i].segment_id) == removed.end())
                want.insert(entries[i].segment_id);
        if (add)
            want.insert(added.segment_id);
        for (uint32_t i = 0; i < m; i++)
            got.insert(after[i].segment_id);
        ASSERT_EQ(got, want) << round;
        // Slots that changed: at most one per hole, and the end.
        uint32_t changed = 0;
        for (uint32_t i = 0; i < std::min(m, n); i++)
            changed += after[i].segment_id != entries[i].segment_id;
        ASSERT_LE(changed, removed.size() + (add ? 1 : 0)) << round;
    }
    std::vector<SegmentEntry> e(4);
    for (uint32_t i = 0; i < 3; i++) {
        std::memset(&e[i], 0, sizeof(SegmentEntry));
        e[i].segment_id = i + 1;
    }
    const uint32_t missing[] = {9};
    EXPECT_EQ(directory_apply(e.data(), 3, missing, 1, nullptr), UINT32_MAX);
    const uint32_t twice[] = {2, 2};
    EXPECT_EQ(directory_apply(e.data(), 3, twice, 2, nullptr), UINT32_MAX);
    const uint32_t all[] = {3, 1, 2};
    EXPECT_EQ(directory_apply(e.data(), 3, all, 3, nullptr), 0u);
}

// directory_refile: the entries named take their new group, block and
// slot (checks that pass), nothing else changes; an id missing or there
// twice is refused.
TEST(DirectoryPages, RefileChangesOnlyTheFilterFields)
{
    std::vector<SegmentEntry> e(5);
    for (uint32_t i = 0; i < 5; i++) {
        std::memset(&e[i], 0, sizeof(SegmentEntry));
        e[i].segment_id = 7 + i;
        e[i].header_block = 100 + i;
        e[i].rows = 10;
        e[i].filter_block = 200 + i;
        e[i].filter_group = 7 + i;
        e[i].check = segment_entry_check(e[i]);
    }
    SegmentEntry r[2];
    std::memset(r, 0, sizeof r);
    r[0].segment_id = 9;
    r[0].header_block = 999; // ignored
    r[0].filter_block = 300;
    r[0].filter_offset = 1;
    r[0].filter_group = kFirstGroupId + 5;
    r[1] = r[0];
    r[1].segment_id = 11;
    r[1].filter_offset = 0;
    std::vector<SegmentEntry> after = e;
    ASSERT_TRUE(directory_refile(after.data(), 5, r, 2));
    for (uint32_t i = 0; i < 5; i++) {
        EXPECT_EQ(after[i].check, segment_entry_check(after[i])) << i;
        EXPECT_EQ(after[i].header_block, e[i].header_block) << i;
        const bool refiled = e[i].segment_id == 9 || e[i].segment_id == 11;
        EXPECT_EQ(after[i].filter_block, refiled ? 300u : e[i].filter_block) << i;
        EXPECT_EQ(after[i].filter_group, refiled ? kFirstGroupId + 5 : e[i].filter_group) << i;
    }
    EXPECT_EQ(after[2].filter_offset, 1u);
    EXPECT_EQ(after[4].filter_offset, 0u);
    r[1].segment_id = 42;
    after = e;
    EXPECT_FALSE(directory_refile(after.data(), 5, r, 2));
    e[3].segment_id = 9; // there twice
    after = e;
    EXPECT_FALSE(directory_refile(after.data(), 5, r, 1));
}

TEST(SegmentPages, FreePagesAndPendingLinks)
{
    Page p;
    page_init(p.b);
    free_page_fill(p.b);
    EXPECT_TRUE(problem_is(check_free_page(p.b), PageProblem::None));
    init_data_page(p.b);
    EXPECT_EQ(pending_next(p.b), 0u);
    set_pending_next(p.b, 0xABCDEF12u);
    EXPECT_EQ(pending_next(p.b), 0xABCDEF12u);
    EXPECT_TRUE(problem_is(check_free_page(p.b), PageProblem::WrongKind));
}

// The metapage's free list: pushed and taken with its check kept, damage
// to it caught by the metapage check, and an extent that would overlap
// pages in use refused.
TEST(FreeList, PushTakeCheckAndOverlaps)
{
    Page p;
    const uint16_t bits[2] = {10, 10};
    init_meta_page(p.b, 96, 2, bits);
    ASSERT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    FreeList *list = free_list(p.b);
    EXPECT_EQ(list->count, 0u);
    EXPECT_EQ(free_list_take(list, 1), 0u);
    EXPECT_TRUE(free_list_push(list, 500, 96));
    EXPECT_TRUE(free_list_push(list, 1000, 99));
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    EXPECT_EQ(kMetaPageLower, kFreeListOffset + sizeof(FreeList) + sizeof(PendingFilters));
    EXPECT_EQ(free_list_blocks(*list), 195u);

    // Damage: an extent moved, the count, the reserved field.
    list->extents[0].first = 501;
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::BadDirectory));
    list->extents[0].first = 500;
    list->count = kMaxFreeExtents + 1;
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::BadDirectory));
    list->count = 2;
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    list->reserved = 1;
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::BadDirectory));
    list->reserved = 0;

    // Overlaps: with a segment's extent (slices, live and TID pages, header),
    // another extent, the end.
    SegmentEntry e{};
    e.segment_id = 1;
    e.first_slice = 100;
    e.header_block = 100 + 96 + 2;
    EXPECT_TRUE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    EXPECT_TRUE(free_extent_ok(*list, 1, 96, 2000, &e, 1));
    EXPECT_FALSE(free_extent_ok(*list, 1, 96, 1098, &e, 1)); // past the end
    EXPECT_TRUE(free_extent_ok(*list, 1, 96, 1099, &e, 1));
    EXPECT_FALSE(free_extent_ok(*list, 2, 96, 2000, &e, 1)); // not listed
    e.first_slice = 450;                                      // slices 450..545
    e.header_block = 450 + 96 + 2;
    EXPECT_FALSE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    e.first_slice = 400;                                      // slices 400..495
    e.header_block = 400 + 96 + 2;                            // live 496, TIDs 497, header 498
    EXPECT_TRUE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    e.header_block = 500;                                     // its TID pages reach extent 0
    EXPECT_FALSE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    e.first_slice = 100;
    e.header_block = 595;                                     // a header in extent 0
    EXPECT_FALSE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    e.header_block = 100 + 96 + 2;
    list->extents[1].first = 550;                             // extents overlap
    EXPECT_FALSE(free_extent_ok(*list, 0, 96, 2000, &e, 1));
    EXPECT_FALSE(free_extent_ok(*list, 1, 96, 2000, &e, 1));
    list->extents[1].first = 0;                               // the metapage
    EXPECT_FALSE(free_extent_ok(*list, 1, 96, 2000, &e, 1));
    list->extents[1].first = 1000;
    list->extents[1].nblocks = 0;                             // an empty extent
    EXPECT_FALSE(free_extent_ok(*list, 1, 96, 2000, &e, 1));
    list->extents[1].nblocks = 0xFFFFFF00u;                   // past any index
    EXPECT_FALSE(free_extent_ok(*list, 1, 96, 2000, &e, 1));
    list->extents[1].nblocks = 99;
    list->check = free_list_check(*list);

    // Taken from the start of the lowest extent that has enough.
    EXPECT_EQ(free_list_take(list, 100), 0u);
    EXPECT_EQ(free_list_take(list, 97), 1000u);
    EXPECT_EQ(free_list_take(list, 96), 500u);               // extent 0, whole
    EXPECT_EQ(list->count, 1u);
    EXPECT_EQ(free_list_take(list, 2), 1097u);
    EXPECT_EQ(list->count, 0u);
    EXPECT_EQ(list->extents[0].first, 0u);
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
}

// Blocks that touch are one extent: a churned index's segments, written
// one after another, give back blocks that join up, so the list never
// fills with them; blocks between two extents join them.  A full list
// refuses blocks that touch none, unchanged.
TEST(FreeList, TouchingBlocksJoinIntoOneExtent)
{
    Page p;
    const uint16_t bits[1] = {6};
    init_meta_page(p.b, 16, 1, bits);
    FreeList *list = free_list(p.b);
    // Segments of 16 slices, a live page, a TID page and a header: 19 blocks.
    for (uint32_t i = 0; i < 1000; i++) {
        const uint32_t seg = 100 + 19 * i;
        ASSERT_TRUE(free_list_push(list, seg, 16));
        ASSERT_TRUE(free_list_push(list, seg + 16, 1));
        ASSERT_TRUE(free_list_push(list, seg + 17, 1));
        ASSERT_TRUE(free_list_push(list, seg + 18, 1));
    }
    EXPECT_EQ(list->count, 1u);
    EXPECT_EQ(free_list_blocks(*list), 19000u);
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    EXPECT_TRUE(free_extent_ok(*list, 0, 16, 100 + 19000, nullptr, 0));

    // Before the extent, then a gap closed: one extent again.
    ASSERT_TRUE(free_list_push(list, 84, 16));
    ASSERT_TRUE(free_list_push(list, 40000, 16));
    ASSERT_TRUE(free_list_push(list, 40032, 16));
    EXPECT_EQ(list->count, 3u);
    ASSERT_TRUE(free_list_push(list, 40016, 16));
    EXPECT_EQ(list->count, 2u);
    EXPECT_EQ(free_list_blocks(*list), 19000u + 16 + 48);

    // Full: blocks that touch no extent are refused, blocks that do join.
    while (list->count < kMaxFreeExtents)
        ASSERT_TRUE(free_list_push(list, 100000 + 100 * list->count, 16));
    FreeList before = *list;
    EXPECT_FALSE(free_list_push(list, 900000, 16));
    EXPECT_EQ(std::memcmp(&before, list, sizeof before), 0);
    EXPECT_TRUE(free_list_push(list, 100000 + 100 * 5 + 16, 16));
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));
    for (uint32_t i = 0; i < list->count; i++)
        EXPECT_TRUE(free_extent_ok(*list, i, 16, 1000000, nullptr, 0)) << i;
}

// A segment's blocks as extents: one for a segment written in one piece,
// more where its pages lie apart, none for a header naming a block twice.
// A header of 16 slices from first_slice, its live page at live_block,
// ntid_pages TID pages `tid_step` blocks apart from tid_first.
static SegmentHeader extents_header(uint32_t first_slice, uint32_t live_block,
                                    uint16_t ntid_pages, uint32_t tid_first, uint32_t tid_step)
{
    SegmentHeader h{};
    h.first_slice = first_slice;
    h.nslices = 16;
    h.live_block = live_block;
    h.ntid_pages = ntid_pages;
    for (uint32_t p = 0; p < ntid_pages; p++)
        h.tid_blocks[p] = tid_first + tid_step * p;
    return h;
}

TEST(FreeList, SegmentExtents)
{
    SegmentHeader h = extents_header(100, 116, 2, 117, 1);
    FreeExtent out[kMaxSegmentExtents];
    ASSERT_EQ(segment_extents(h, 119, 0, out), 1u);
    EXPECT_EQ(out[0].first, 100u);
    EXPECT_EQ(out[0].nblocks, 20u);
    // With a filter group of its own (a seal's or merge's) after the header.
    ASSERT_EQ(segment_extents(h, 119, 4, out), 1u);
    EXPECT_EQ(out[0].first, 100u);
    EXPECT_EQ(out[0].nblocks, 24u);

    // Apart, in any order: sorted, touching blocks joined.
    h.live_block = 50;
    h.tid_blocks[0] = 300;
    h.tid_blocks[1] = 51;
    ASSERT_EQ(segment_extents(h, 116, 0, out), 3u);
    EXPECT_EQ(out[0].first, 50u);
    EXPECT_EQ(out[0].nblocks, 2u);
    EXPECT_EQ(out[1].first, 100u);
    EXPECT_EQ(out[1].nblocks, 17u);
    EXPECT_EQ(out[2].first, 300u);
    EXPECT_EQ(out[2].nblocks, 1u);

    // Damage: a block twice, a page count out of range.
    h.tid_blocks[1] = 105;
    EXPECT_EQ(segment_extents(h, 116, 0, out), 0u);
    h.tid_blocks[1] = 300;
    EXPECT_EQ(segment_extents(h, 116, 0, out), 0u);
    h.tid_blocks[1] = 51;
    EXPECT_EQ(segment_extents(h, 99, 2, out), 0u); // a group over the slices
    h.ntid_pages = kMaxTidPages + 1;
    EXPECT_EQ(segment_extents(h, 116, 0, out), 0u);

    // Key pages, after the TID pages and before the header: one extent.
    SegmentHeader k = extents_header(100, 116, 1, 117, 1);
    k.key_pages = 3;
    ASSERT_EQ(segment_extents(k, 121, 0, out), 1u);
    EXPECT_EQ(out[0].first, 100u);
    EXPECT_EQ(out[0].nblocks, 22u);
    // A header among them is damage.
    EXPECT_EQ(segment_extents(k, 119, 0, out), 0u);
    k.key_pages = kMaxKeyPages + 1;
    EXPECT_EQ(segment_extents(k, 1000, 0, out), 0u);

    // The most extents a header can name: every TID page apart, key
    // pages, header and its group (kMaxSegmentExtents before the header
    // and group join; the sentinels after out[] catch a write past it).
    SegmentHeader w = extents_header(10, 1000, kMaxTidPages, 2000, 2);
    w.key_pages = 2;
    struct {
        FreeExtent out[kMaxSegmentExtents];
        FreeExtent guard[2];
    } wide{};
    wide.guard[0] = wide.guard[1] = FreeExtent{0xdeadbeef, 0xdeadbeef};
    ASSERT_EQ(segment_extents(w, 5000, 3, wide.out), kMaxSegmentExtents - 1);
    EXPECT_EQ(wide.guard[0].first, 0xdeadbeefu);
    EXPECT_EQ(wide.guard[0].nblocks, 0xdeadbeefu);
    EXPECT_EQ(wide.out[kMaxSegmentExtents - 2].first, 5000u);
    EXPECT_EQ(wide.out[kMaxSegmentExtents - 2].nblocks, 4u);
}

// Key pages: how many a segment takes, their fill and check (any changed
// byte, a wrong segment, page or row count is caught), every row's keys
// where key_rows_per_page puts them.
TEST(SegmentPages, KeyPagesFillCheckAndPlace)
{
    EXPECT_EQ(key_page_count(1, 6), 1u);
    EXPECT_EQ(key_page_count(339, 6), 1u);
    EXPECT_EQ(key_page_count(340, 6), 2u);
    EXPECT_EQ(key_page_count(kKeyedRowsMax, 6), 48u);
    EXPECT_EQ(key_page_count(kKeyedRowsMax + 1, 6), 0u) << "too many rows keep no keys";
    EXPECT_EQ(key_page_count(kKeyedRowsMax, 32), kMaxKeyPages) << "any width keeps its keys";
    EXPECT_EQ(key_page_count(kKeyedRowsMax, 17), 137u) << "over 128: kept";
    EXPECT_EQ(key_page_count(100, 0), 0u);
    for (uint32_t ncols : {1u, 6u, 32u})
        EXPECT_LE(key_page_count(std::min(kKeyedRowsMax, kMaxKeyPages * key_rows_per_page(ncols)),
                                 ncols),
                  kMaxKeyPages);

    const uint16_t ncols = 6, rows = 700;
    std::vector<uint32_t> keys(size_t{rows} * ncols);
    std::mt19937 rng(7);
    for (auto &k : keys)
        k = rng();
    const uint32_t per = key_rows_per_page(ncols);
    const uint32_t npages = key_page_count(rows, ncols);
    ASSERT_EQ(npages, 3u);
    for (uint32_t p = 0; p < npages; p++) {
        Page page;
        page_init(page.b);
        const uint16_t n = static_cast<uint16_t>(std::min<uint32_t>(per, rows - p * per));
        key_page_fill(page.b, keys.data() + size_t{p} * per * ncols, n, ncols,
                      static_cast<uint16_t>(p), 9);
        ASSERT_TRUE(problem_is(check_key_page(page.b, 9, rows, ncols, static_cast<uint16_t>(p)),
                               PageProblem::None));
        EXPECT_EQ(segment_page_owner(page.b), 9u);
        EXPECT_EQ(std::memcmp(key_page_keys(page.b), keys.data() + size_t{p} * per * ncols,
                              size_t{n} * ncols * 4),
                  0);
        EXPECT_TRUE(problem_is(check_key_page(page.b, 10, rows, ncols, static_cast<uint16_t>(p)),
                               PageProblem::BadKeyPage));
        EXPECT_TRUE(problem_is(check_key_page(page.b, 9, rows + 400, ncols, static_cast<uint16_t>(p)),
                               PageProblem::BadKeyPage) ||
                    p + 1 < npages);
        EXPECT_TRUE(problem_is(check_key_page(page.b, 9, rows, ncols, static_cast<uint16_t>(p + 1)),
                               PageProblem::BadKeyPage));
        for (uint32_t at = 0; at < uint32_t{n} * ncols * 4; at += 97) {
            Page bad = page;
            bad.b[24 + at] ^= 0x10;
            EXPECT_TRUE(problem_is(check_key_page(bad.b, 9, rows, ncols, static_cast<uint16_t>(p)),
                                   PageProblem::BadKeyBytes))
                << p << " " << at;
            EXPECT_TRUE(problem_is(check_key_page(bad.b, 9, rows, ncols, static_cast<uint16_t>(p),
                                                  Sums::Trust),
                                   PageProblem::None));
        }
    }
}

// Segments take the lowest extent that holds them, from its start, so that
// free blocks gather at the index's end (VACUUM truncates them); extents
// are dropped whole; blocks already listed are refused (a double free is
// damage, never written); listed pages are their own kind.
TEST(FreeList, LowestFitDropAndDoubleFree)
{
    Page p;
    const uint16_t bits[1] = {6};
    init_meta_page(p.b, 16, 1, bits);
    FreeList *list = free_list(p.b);
    ASSERT_TRUE(free_list_push(list, 1000, 200));
    ASSERT_TRUE(free_list_push(list, 100, 20));
    ASSERT_TRUE(free_list_push(list, 500, 50));
    EXPECT_EQ(free_list_take(list, 19), 100u);  // the lowest, from its start
    EXPECT_EQ(free_list_take(list, 30), 500u);  // the 50-block one, below the 200
    EXPECT_EQ(free_list_take(list, 21), 1000u);  // 1 and 20 left below: only the 200 has 21
    EXPECT_EQ(free_list_blocks(*list), 1u + 20 + 200 - 21);
    FreeList before = *list;
    EXPECT_FALSE(free_list_push(list, 1100, 10)); // inside the listed 1021..1199
    EXPECT_FALSE(free_list_push(list, 118, 2));    // overlaps block 119
    EXPECT_EQ(std::memcmp(&before, list, sizeof before), 0);
    EXPECT_TRUE(free_list_overlaps(*list, 1021, 1));
    EXPECT_FALSE(free_list_overlaps(*list, 1016, 5));
    EXPECT_FALSE(free_list_drop(list, 119, 2));    // not listed exactly so
    EXPECT_TRUE(free_list_drop(list, 119, 1));
    EXPECT_FALSE(free_list_overlaps(*list, 119, 1));
    EXPECT_TRUE(problem_is(check_meta_page(p.b), PageProblem::None));

    Page listed;
    page_init(listed.b);
    listed_page_fill(listed.b);
    EXPECT_TRUE(problem_is(check_listed_page(listed.b), PageProblem::None));
    EXPECT_FALSE(problem_is(check_free_page(listed.b), PageProblem::None)); // no insert takes it
    EXPECT_EQ(segment_page_owner(listed.b), 0u);
}

// Pending rows of an index with filters keep each column's filter key
// after their TID (the tail): the page holds fewer rows, the keys read
// back as written, compaction moves them with their rows, and the TID sum
// covers them, so a damaged key (which a seal would build a filter from)
// is found like a damaged TID.
TEST(RowPage, FilterKeysTravelWithTheirRows)
{
    std::mt19937_64 rng(57);
    for (uint32_t ncols : {1u, 6u, 32u}) {
        const RowPageGeometry g = row_page_geometry(26, ncols);
        ASSERT_EQ(g.tail_bytes, kTidSize + 4 * ncols);
        ASSERT_EQ(g.keys, ncols);
        ASSERT_EQ(g.capacity, kPayloadBytes / (26 + kTidSize + 4 * ncols));
        ASSERT_LT(g.capacity, row_page_geometry(26).capacity);
        Page p;
        init_data_page(p.b);
        std::vector<std::vector<uint8_t>> tails;
        for (uint32_t i = 0; i < g.capacity; i++) {
            std::vector<uint8_t> sig(26), tail(g.tail_bytes);
            fill_random(sig.data(), sig.size(), rng);
            fill_random(tail.data(), tail.size(), rng);
            row_page_append(p.b, g, sig.data(), tail.data());
            tails.push_back(tail);
        }
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
        ASSERT_GE(read_u16(p.b + kPdUpperOffset), read_u16(p.b + kPdLowerOffset));
        for (uint32_t i = 0; i < g.capacity; i++)
            for (uint32_t c = 0; c < ncols; c++) {
                uint32_t want;
                std::memcpy(&want, tails[i].data() + kTidSize + 4 * c, 4);
                uint32_t got;
                std::memcpy(&got, row_tid(p.b, g, i) + kTidSize + 4 * c, 4);
                ASSERT_EQ(got, want) << i << " " << c;
            }
        // Compaction: entry 5 into slot 1, keep two.
        row_page_move(p.b, g, 5, 1);
        row_page_truncate(p.b, g, 2);
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
        ASSERT_EQ(std::memcmp(row_tid(p.b, g, 1), tails[5].data(), g.tail_bytes), 0);
        // A flipped bit in a key.
        uint8_t *key = row_tid(p.b, g, 1) + kTidSize + 4 * (ncols - 1);
        key[2] ^= 0x10;
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::BadTids));
        ASSERT_TRUE(problem_is(check_row_page_tids(p.b, g), PageProblem::BadTids));
        key[2] ^= 0x10;
        // The page read with the keyless geometry is refused (other bounds).
        ASSERT_FALSE(problem_is(check_row_page(p.b, row_page_geometry(26)), PageProblem::None));
    }
}

TEST(MetaPage, FilterKeysSetTheCapacity)
{
    Page page;
    init_page(page.b, kPageMeta, static_cast<uint16_t>(kMetaPageLower));
    const uint16_t bits[3] = {3, 3, 3};
    const uint8_t hashing[3] = {kHashByValue, kHashByValue, kHashByValue};
    meta_fill(meta_data(page.b), 100, 3, bits, hashing, true);
    EXPECT_EQ(meta_data(page.b)->filter_keys, 1);
    EXPECT_EQ(meta_data(page.b)->capacity, row_page_geometry(signature_bytes(100), 3).capacity);
    EXPECT_EQ(meta_row_geometry(*meta_data(page.b)).keys, 3u);
    meta_fill(meta_data(page.b), 100, 3, bits, hashing, false);
    EXPECT_EQ(meta_row_geometry(*meta_data(page.b)).keys, 0u);
    EXPECT_EQ(meta_data(page.b)->capacity, row_page_geometry(signature_bytes(100)).capacity);
}

// A build's last rows become a packed segment once they fill more than a
// few pending pages, and where the segment takes no more pages than they
// would pending (a few rows of a long signature take a 64-byte line of
// each of its many slices), or by the rule of one slice a page, whichever
// comes first (a long signature's tail of over 32,256 rows takes a page a
// slice, more than pending, yet a query would read every pending page).
TEST(SegmentPages, PackedTailIsASegmentWhereItTakesNoMorePages)
{
    for (uint32_t m : {16u, 64u, 104u, 400u, 1000u, 4000u}) {
        const uint32_t capacity = row_page_geometry(static_cast<uint32_t>(signature_bytes(m)), 4).capacity;
        const uint64_t from = tail_segment_rows(m, 3, capacity, kSegmentRows, true);
        const uint64_t unpacked = tail_segment_rows(m, 3, capacity, kSegmentRows, false);
        EXPECT_GE(from, uint64_t{kTailPendingPages} * capacity) << m;
        EXPECT_LE(from, unpacked) << m;
        for (uint64_t rows = from; rows < unpacked; rows += 97) {
            const uint32_t r = static_cast<uint32_t>(rows);
            const uint64_t pending_pages = (rows + capacity - 1) / capacity;
            ASSERT_LE(slice_page_count(m, packed_slices_per_page(r)) + 3 + r * 2 / kPayloadBytes,
                      pending_pages)
                << m << " bits, " << rows << " rows";
        }
    }
    // Short signatures: from just past 4 pages; a 4,000-bit one: near a segment.
    const uint32_t cap64 = row_page_geometry(static_cast<uint32_t>(signature_bytes(64)), 4).capacity;
    EXPECT_LE(tail_segment_rows(64, 3, cap64, kSegmentRows, true), 6u * cap64);
    // A 4,000-bit one: by the rule of one slice a page, 1,000 pages' rows.
    EXPECT_EQ(tail_segment_rows(4000, 3, row_page_geometry(500, 0).capacity, kSegmentRows, true),
              tail_segment_rows(4000, 3, row_page_geometry(500, 0).capacity, kSegmentRows, false));
    // One slice a page (format 13's layout): m / (nsegments + 1) pages.
    EXPECT_EQ(tail_segment_rows(64, 3, cap64, kSegmentRows, false), 16u * cap64);
}
