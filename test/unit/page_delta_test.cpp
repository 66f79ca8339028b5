// Unit tests of src/core/page_delta.{hpp,cpp} and row_page_append_ranges:
// the WAL record of an append, replayed as PostgreSQL's generic_redo does
// (each range copied, then the hole between pd_lower and pd_upper zeroed),
// must turn the page before the append into the page after it, byte for
// byte, for every signature length and every fill of the page.  The
// replay here is written from the format's description; that it is
// PostgreSQL's is checked by wal_consistency_checking in the regression
// cluster and TAP 002's standby.
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

uint16_t get_u16(const uint8_t *p)
{
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// generic_xlog.c's applyPageRedo followed by generic_redo's hole zeroing,
// written from the format's description.
void replay(uint8_t *page, const uint8_t *delta, uint32_t len)
{
    const uint8_t *p = delta, *end = delta + len;
    while (p < end) {
        uint16_t offset = get_u16(p), length = get_u16(p + 2);
        ASSERT_LE(uint32_t{offset} + length, kBlockSize);
        std::memcpy(page + offset, p + 4, length);
        p += 4 + length;
    }
    ASSERT_EQ(p, end);
    uint16_t lower = get_u16(page + kPdLowerOffset), upper = get_u16(page + kPdUpperOffset);
    ASSERT_LE(lower, upper);
    std::memset(page + lower, 0, upper - lower);
}

// An empty row-wise data page as PageInit leaves it: all zero but the
// header's bounds and the special space.
void empty_data_page(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    uint16_t lower = kPageHeaderSize, upper = kSpecialOffset;
    std::memcpy(page + kPdLowerOffset, &lower, 2);
    std::memcpy(page + kPdUpperOffset, &upper, 2);
    std::memcpy(page + kPdSpecialOffset, &upper, 2);
    page_opaque(page)->flags = kPageData;
    page_opaque(page)->format = kFormatRowWise;
    page_opaque(page)->page_id = kPageId;
}

} // namespace

TEST(PageDelta, AppendRecordReplaysToTheSamePage)
{
    std::mt19937_64 rng(11);
    for (int bits : {1, 16, 40, 80, 112, 120, 256, 1000, kMaxSignatureBits}) {
        RowPageGeometry g = row_page_geometry(static_cast<uint32_t>(signature_bytes(bits)));
        Page page;
        empty_data_page(page.b);
        for (uint32_t i = 0; i < g.capacity; i++) {
            std::vector<uint8_t> sig(g.signature_bytes), tid(kTidSize);
            for (auto &b : sig)
                b = static_cast<uint8_t>(rng());
            for (auto &b : tid)
                b = static_cast<uint8_t>(rng());
            Page standby = page;
            PageRange ranges[kAppendRanges];
            row_page_append_ranges(g, page_opaque(page.b)->count, ranges);
            row_page_append(page.b, g, sig.data(), tid.data());

            std::vector<uint8_t> delta(page_delta_size(kAppendRanges, g.signature_bytes + 64));
            uint32_t len = write_page_delta(page.b, ranges, kAppendRanges, delta.data(),
                                            static_cast<uint32_t>(delta.size()));
            ASSERT_GT(len, 0u) << "bits " << bits << " append " << i;
            ASSERT_EQ(len, append_delta_size(g));
            ASSERT_NO_FATAL_FAILURE(replay(standby.b, delta.data(), len));
            ASSERT_EQ(std::memcmp(standby.b, page.b, kBlockSize), 0)
                << "bits " << bits << " append " << i;
        }
    }
}

TEST(PageDelta, RefusesRangesOffThePageAndTooLittleRoom)
{
    Page page;
    std::memset(page.b, 7, kBlockSize);
    uint8_t out[64];
    PageRange inside{kBlockSize - 4, 4}, off{kBlockSize - 4, 5};
    EXPECT_EQ(write_page_delta(page.b, &inside, 1, out, sizeof out), page_delta_size(1, 4));
    EXPECT_EQ(write_page_delta(page.b, &off, 1, out, sizeof out), 0u);
    PageRange big{0, 61};
    EXPECT_EQ(write_page_delta(page.b, &big, 1, out, sizeof out), 0u);
    PageRange fits{0, 60};
    EXPECT_EQ(write_page_delta(page.b, &fits, 1, out, sizeof out), 64u);
    EXPECT_EQ(out[4], 7);
}
