// Unit tests of src/core/page_layout.{hpp,cpp}: the on-disk format.
//
// Pages are built by hand in 8 KB buffers: PageInit belongs to PostgreSQL,
// so the tests set pd_lower / pd_upper / pd_special (little-endian uint16
// at kPdLowerOffset etc.) and the special space themselves.
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

// What PageInit(page, BLCKSZ, sizeof(PageOpaque)) plus the glue would do,
// on top of whatever garbage the buffer holds.
void init_page(uint8_t *page, uint16_t flags, uint16_t lower)
{
    std::memset(page, 0, kPageHeaderSize);
    put_u16(page, kPdLowerOffset, lower);
    put_u16(page, kPdUpperOffset, static_cast<uint16_t>(kSpecialOffset));
    put_u16(page, kPdSpecialOffset, static_cast<uint16_t>(kSpecialOffset));
    PageOpaque *op = page_opaque(page);
    op->count = 0;
    op->flags = flags;
    op->format = flags == kPageData ? kFormatRowWise : 0;
    op->page_id = kPageId;
}

void init_meta_page(uint8_t *page, uint16_t bits, uint16_t ncols, const uint16_t *column_bits)
{
    std::memset(page, 0, kBlockSize);
    init_page(page, kPageMeta, static_cast<uint16_t>(kPageHeaderSize + sizeof(MetaPageData)));
    meta_fill(meta_data(page), bits, ncols, column_bits);
}

void init_data_page(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    init_page(page, kPageData, static_cast<uint16_t>(kPageHeaderSize));
}

const PageProblem kAllProblems[] = {
    PageProblem::None,       PageProblem::NotBloomidx, PageProblem::WrongKind,
    PageProblem::BadFormat,  PageProblem::BadCount,    PageProblem::BadBounds,
    PageProblem::BadMagic,   PageProblem::BadVersion,  PageProblem::BadOptions,
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
    EXPECT_EQ(kSpecialOffset, 8184u);
    EXPECT_EQ(kPayloadBytes, 8160u);
    EXPECT_EQ(kMetaMagic, 0x626C6478u);
    EXPECT_EQ(kPageId, 0xB1D5);
    EXPECT_EQ(kPageMeta, 1);
    EXPECT_EQ(kPageData, 2);
    EXPECT_EQ(kFormatRowWise, 1);
    EXPECT_EQ(kMetaVersion, 1);
    EXPECT_EQ(offsetof(PageOpaque, count), 0u);
    EXPECT_EQ(offsetof(PageOpaque, flags), 2u);
    EXPECT_EQ(offsetof(PageOpaque, format), 4u);
    EXPECT_EQ(offsetof(PageOpaque, page_id), 6u);
    EXPECT_EQ(offsetof(MetaPageData, magic), 0u);
    EXPECT_EQ(offsetof(MetaPageData, version), 4u);
    EXPECT_EQ(offsetof(MetaPageData, format), 6u);
    EXPECT_EQ(offsetof(MetaPageData, hash_version), 8u);
    EXPECT_EQ(offsetof(MetaPageData, signature_bits), 10u);
    EXPECT_EQ(offsetof(MetaPageData, signature_bytes), 12u);
    EXPECT_EQ(offsetof(MetaPageData, ncolumns), 14u);
    EXPECT_EQ(offsetof(MetaPageData, capacity), 16u);
    EXPECT_EQ(offsetof(MetaPageData, insert_block), 20u);
    EXPECT_EQ(offsetof(MetaPageData, column_bits), 24u);

    // Where the accessors point.
    Page p;
    EXPECT_EQ(reinterpret_cast<uint8_t *>(page_opaque(p.b)), p.b + 8184);
    EXPECT_EQ(reinterpret_cast<uint8_t *>(meta_data(p.b)), p.b + 24);
    EXPECT_EQ(row_signatures(p.b), p.b + 24);
}

TEST(RowPageGeometry, ContribBloomDefault)
{
    // 80 bits: 10-byte signatures + 6-byte TIDs, contrib/bloom's 16-byte
    // tuples, 510 per page.
    constexpr RowPageGeometry g = row_page_geometry(10);
    static_assert(g.capacity == 510, "contrib/bloom's tuples per page");
    EXPECT_EQ(g.signature_bytes, 10u);
    EXPECT_EQ(g.capacity, 510u);
    EXPECT_EQ(g.tid_offset, 24u + 510u * 10u);
}

TEST(RowPageGeometry, EverySignatureSizeFits)
{
    for (int bits = 1; bits <= kMaxSignatureBits; bits++) {
        uint32_t s = static_cast<uint32_t>(signature_bytes(bits));
        RowPageGeometry g = row_page_geometry(s);
        ASSERT_EQ(g.signature_bytes, s);
        ASSERT_LE(g.capacity * (s + kTidSize), kPayloadBytes) << "S " << s;
        ASSERT_GT((g.capacity + 1) * (s + kTidSize), kPayloadBytes) << "S " << s << ": room left";
        ASSERT_EQ(g.tid_offset, kPageHeaderSize + g.capacity * s) << "S " << s;
        // The TID array ends before the special space.
        ASSERT_LE(g.tid_offset + g.capacity * kTidSize, kSpecialOffset) << "S " << s;
        ASSERT_GE(g.capacity, 15u);
        ASSERT_LE(g.capacity, 1020u); // fits the uint16_t count and match_array output
        ASSERT_EQ(row_page_free_bytes(g, 0), g.capacity * (s + kTidSize));
        ASSERT_EQ(row_page_free_bytes(g, g.capacity), 0u);
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
    EXPECT_EQ(meta->hash_version, kHashXxh3V1);
    EXPECT_EQ(meta->signature_bits, 80);
    EXPECT_EQ(meta->signature_bytes, 10);
    EXPECT_EQ(meta->ncolumns, 3);
    EXPECT_EQ(meta->capacity, 510);
    EXPECT_EQ(meta->reserved, 0);
    EXPECT_EQ(meta->insert_block, 0u);
    EXPECT_EQ(meta->column_bits[0], 2);
    EXPECT_EQ(meta->column_bits[1], 9);
    EXPECT_EQ(meta->column_bits[2], 80);
    for (int i = 3; i < 32; i++)
        EXPECT_EQ(meta->column_bits[i], 0) << i;
    // The magic is stored little-endian right after the page header.
    EXPECT_EQ(p.b[24], 0x78);
    EXPECT_EQ(p.b[27], 0x62);

    // meta_fill writes only its own struct, and all of it (no stale bytes).
    Page q;
    std::memset(q.b, 0xCC, kBlockSize);
    meta_fill(meta_data(q.b), 80, 3, cols);
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
        {"version", PageProblem::BadVersion, [](uint8_t *p) { meta_data(p)->version = 2; }},
        {"version zero", PageProblem::BadVersion, [](uint8_t *p) { meta_data(p)->version = 0; }},
        {"hash_version", PageProblem::BadVersion, [](uint8_t *p) { meta_data(p)->hash_version = 2; }},
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
        {"page_id", PageProblem::NotBloomidx, [](uint8_t *p) { page_opaque(p)->page_id = 0xFF81; }},
        {"pd_special", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, 8176); }},
        {"pd_special zero (a new page)", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, 0); }},
        {"pd_lower zero", PageProblem::BadBounds, [](uint8_t *p) { put_u16(p, kPdLowerOffset, 0); }},
        {"pd_lower inside the header", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, 23); }},
        {"pd_lower > pd_upper", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdLowerOffset, static_cast<uint16_t>(get_u16(p, kPdUpperOffset) + 1)); }},
        {"pd_upper > pd_special", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 8185); }},
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
        for (uint8_t &byte : p.b)
            byte = static_cast<uint8_t>(rng()); // garbage where nothing is written
        init_page(p.b, kPageData, static_cast<uint16_t>(kPageHeaderSize));
        Page before = p;

        std::vector<std::vector<uint8_t>> sigs, tids;
        for (uint32_t i = 0; i < g.capacity; i++) {
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
            ASSERT_EQ(row_page_free_bytes(g, page_opaque(p.b)->count), (g.capacity - i) * (s + kTidSize));
            std::vector<uint8_t> sig(s), tid(kTidSize);
            for (uint8_t &byte : sig)
                byte = static_cast<uint8_t>(rng());
            for (uint8_t &byte : tid)
                byte = static_cast<uint8_t>(rng());
            row_page_append(p.b, g, sig.data(), tid.data());
            ASSERT_EQ(page_opaque(p.b)->count, i + 1);
            sigs.push_back(sig);
            tids.push_back(tid);
        }
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None)) << "full page";
        EXPECT_EQ(row_page_free_bytes(g, page_opaque(p.b)->count), 0u);

        // Every entry where the format says, back to back.
        for (uint32_t i = 0; i < g.capacity; i++) {
            ASSERT_EQ(std::memcmp(p.b + kPageHeaderSize + i * s, sigs[i].data(), s), 0) << i;
            ASSERT_EQ(row_signature(p.b, g, i), p.b + kPageHeaderSize + i * s);
            ASSERT_EQ(std::memcmp(p.b + g.tid_offset + i * kTidSize, tids[i].data(), kTidSize), 0) << i;
            const Page &cp = p;
            ASSERT_EQ(row_tid(cp.b, g, i), p.b + g.tid_offset + i * kTidSize);
        }
        // The header, the hole and the special space (but the count) kept.
        uint32_t end = g.tid_offset + g.capacity * kTidSize;
        for (uint32_t i = 0; i < kBlockSize; i++) {
            bool entries = i >= kPageHeaderSize && i < end;
            bool count = i == kSpecialOffset || i == kSpecialOffset + 1;
            if (!entries && !count) {
                ASSERT_EQ(p.b[i], before.b[i]) << "bits " << bits << " byte " << i;
            }
        }
        EXPECT_EQ(page_opaque(p.b)->flags, kPageData);
        EXPECT_EQ(page_opaque(p.b)->format, kFormatRowWise);
        EXPECT_EQ(page_opaque(p.b)->page_id, kPageId);

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

TEST(RowPage, MoveCompactsLikeVacuum)
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
                for (uint8_t &byte : e)
                    byte = static_cast<uint8_t>(rng());
                row_page_append(p.b, g, e.data(), e.data() + s);
                entries.push_back(e);
            }
            // Delete about a third, then compact as vacuum does.
            std::vector<bool> live(n);
            for (uint32_t i = 0; i < n; i++)
                live[i] = rng() % 3 != 0;
            uint32_t to = 0;
            for (uint32_t from = 0; from < n; from++) {
                if (!live[from])
                    continue;
                if (to != from)
                    row_page_move(p.b, g, from, to);
                to++;
            }
            ASSERT_EQ(page_opaque(p.b)->count, n) << "row_page_move must not change the count";
            page_opaque(p.b)->count = static_cast<uint16_t>(to);
            ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
            uint32_t k = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (!live[i])
                    continue;
                ASSERT_EQ(std::memcmp(row_signature(p.b, g, k), entries[i].data(), s), 0)
                    << "bits " << bits << " slot " << k;
                ASSERT_EQ(std::memcmp(row_tid(p.b, g, k), entries[i].data() + s, kTidSize), 0)
                    << "bits " << bits << " slot " << k;
                k++;
            }
            ASSERT_EQ(k, to);
            // Appending after compaction fills the first free slot.
            if (to < g.capacity) {
                std::vector<uint8_t> e(s + kTidSize, 0x42);
                row_page_append(p.b, g, e.data(), e.data() + s);
                EXPECT_EQ(std::memcmp(row_signature(p.b, g, to), e.data(), s), 0);
                EXPECT_EQ(std::memcmp(row_tid(p.b, g, to), e.data() + s, kTidSize), 0);
                EXPECT_EQ(page_opaque(p.b)->count, to + 1);
            }
        }
    }
}

TEST(RowPage, CheckFindsEachProblem)
{
    RowPageGeometry g = row_page_geometry(10);
    struct Corruption {
        const char *what;
        PageProblem expect;
        void (*apply)(uint8_t *page);
    };
    const Corruption corruptions[] = {
        {"count = capacity", PageProblem::None, [](uint8_t *p) { page_opaque(p)->count = 510; }},
        {"count > capacity", PageProblem::BadCount, [](uint8_t *p) { page_opaque(p)->count = 511; }},
        {"count huge", PageProblem::BadCount, [](uint8_t *p) { page_opaque(p)->count = 0xFFFF; }},
        {"flags meta", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = kPageMeta; }},
        {"flags zero", PageProblem::WrongKind, [](uint8_t *p) { page_opaque(p)->flags = 0; }},
        {"flags both", PageProblem::WrongKind,
         [](uint8_t *p) { page_opaque(p)->flags = kPageMeta | kPageData; }},
        {"format 2", PageProblem::BadFormat, [](uint8_t *p) { page_opaque(p)->format = 2; }},
        {"format 0", PageProblem::BadFormat, [](uint8_t *p) { page_opaque(p)->format = 0; }},
        {"page_id", PageProblem::NotBloomidx, [](uint8_t *p) { page_opaque(p)->page_id = 0; }},
        {"pd_special", PageProblem::NotBloomidx,
         [](uint8_t *p) { put_u16(p, kPdSpecialOffset, kSpecialOffset - 8); }},
        {"pd_lower", PageProblem::BadBounds, [](uint8_t *p) { put_u16(p, kPdLowerOffset, 10); }},
        {"pd_upper < pd_lower", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 20); }},
        {"pd_upper past special", PageProblem::BadBounds,
         [](uint8_t *p) { put_u16(p, kPdUpperOffset, 8190); }},
    };
    for (const Corruption &c : corruptions) {
        Page p;
        init_data_page(p.b);
        page_opaque(p.b)->count = 100;
        ASSERT_TRUE(problem_is(check_row_page(p.b, g), PageProblem::None));
        c.apply(p.b);
        EXPECT_TRUE(problem_is(check_row_page(p.b, g), c.expect)) << c.what;
    }
    // A full page of 80-bit signatures checked with the geometry of 96-bit
    // ones (a metapage / data page mismatch) has too many entries.
    Page p;
    init_data_page(p.b);
    page_opaque(p.b)->count = 510;
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(12)), PageProblem::BadCount));
    EXPECT_TRUE(problem_is(check_row_page(p.b, row_page_geometry(8)), PageProblem::None));
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
    EXPECT_EQ(static_cast<int>(PageProblem::BadOptions) + 1,
              static_cast<int>(sizeof kAllProblems / sizeof kAllProblems[0]))
        << "a new PageProblem: add it to kAllProblems";
}
