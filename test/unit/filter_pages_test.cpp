// Unit tests of the filter group pages (src/core/filter_pages.cpp): a
// group of 15 segments' filters, written to pages and probed as a scan
// probes them, reports every value a slot holds (never a skipped segment
// that has the value), and the checks catch damage and recycled pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/page_layout.hpp"

using namespace bloomidx;

namespace {

struct alignas(8) Page {
    uint8_t b[kBlockSize];
};

// What PageInit leaves: zeroes, and the bounds.
void init(uint8_t *page)
{
    std::memset(page, 0, kBlockSize);
    uint16_t special = kSpecialOffset;
    std::memcpy(page + kPdLowerOffset, &special, 2);
    std::memcpy(page + kPdUpperOffset, &special, 2);
    std::memcpy(page + kPdSpecialOffset, &special, 2);
}

struct Group {
    FilterGroupHeader header;
    std::vector<Page> pages; // header, then region pages
};

// A group of many segments' id: n above the first (segments n, n + 101, ...).
constexpr uint32_t gid(uint32_t n)
{
    return kFirstGroupId + n;
}

// A group of `slots` segments over ncols columns; keys[s][c] the column
// hashes of slot s; its id gid(n), slot s taken for segment n (slot 0) or
// n + 100 + s.
Group make_group(uint32_t ncols, const std::vector<std::vector<std::vector<uint64_t>>> &keys,
                 const uint32_t *distinct, double bpk, uint32_t n, bool shrink = false)
{
    Group g;
    filter_group_init(&g.header, gid(n), ncols, distinct, bpk, kGroupSlots);
    std::vector<uint8_t> image(size_t{group_region_rows(g.header)} * group_row_bytes(g.header));
    for (uint32_t s = 0; s < keys.size(); s++) {
        for (uint32_t c = 0; c < ncols; c++)
            for (uint64_t h : keys[s][c])
                group_image_add(image.data(), g.header, c, s, h);
        g.header.slot_segment[s] = s == 0 ? n : n + 100 + s;
        g.header.slots_taken = static_cast<uint16_t>(s + 1);
    }
    if (shrink)
        group_image_shrink(image.data(), &g.header);
    g.pages.resize(1 + g.header.region_pages);
    init(g.pages[0].b);
    filter_group_page_fill(g.pages[0].b, g.header);
    uint32_t rows = group_region_rows(g.header);
    for (uint32_t i = 0; i < g.header.region_pages; i++) {
        init(g.pages[1 + i].b);
        const uint32_t per_page = group_rows_per_page(g.header);
        uint32_t n = rows - i * per_page;
        filter_page_fill(g.pages[1 + i].b, g.header,
                         image.data() + size_t{i} * per_page * group_row_bytes(g.header),
                         n < per_page ? n : per_page, i);
    }
    return g;
}

// A group's slot set as a number (groups here have at most 64 slots).
uint64_t low(SlotMask m)
{
    EXPECT_EQ(m.bits[1], 0u);
    return m.bits[0];
}

SlotMask probe(const Group &g, uint32_t column, uint64_t hash)
{
    const FilterGroupHeader *h = filter_group_header(g.pages[0].b);
    uint32_t page, offset;
    if (!group_row_of(*h, column, hash, &page, &offset))
        return SlotMask::first(h->slots_taken);
    return group_row_probe(g.pages[1 + page].b + offset, h->columns[column].probes,
                           h->slots_taken, hash);
}

} // namespace

TEST(FilterPages, EveryValueFindsItsSlots)
{
    std::mt19937_64 rng(21);
    const uint32_t ncols = 3;
    // A near-unique column, a 1,000-value column, a 6-value column.
    const uint32_t distinct[ncols] = {5000, 1000, 6};
    std::vector<uint64_t> mid(1000), low(6);
    for (auto &v : mid)
        v = rng();
    for (auto &v : low)
        v = rng();
    std::vector<std::vector<std::vector<uint64_t>>> keys(kGroupSlots,
                                                         std::vector<std::vector<uint64_t>>(ncols));
    for (uint32_t s = 0; s < kGroupSlots - 2; s++) // two slots left free
        for (uint32_t r = 0; r < 5000; r++) {
            keys[s][0].push_back(rng());
            keys[s][1].push_back(mid[rng() % mid.size()]);
            keys[s][2].push_back(low[rng() % 3]); // three of the six values
        }
    keys.resize(kGroupSlots - 2);
    Group g = make_group(ncols, keys, distinct, filter_bits_per_key(0.01), 77);

    const FilterGroupHeader *h = filter_group_header(g.pages[0].b);
    ASSERT_EQ(check_filter_group_page(g.pages[0].b, gid(77), ncols, 10, 11 + h->region_pages),
              PageProblem::None);
    for (uint32_t i = 0; i < h->region_pages; i++)
        ASSERT_EQ(check_filter_page(g.pages[1 + i].b, *h, i), PageProblem::None);
    EXPECT_EQ(h->columns[2].blocks, 2u); // 6 values at 12 bits: 72 bits
    EXPECT_GT(h->columns[0].blocks, 90u);
    EXPECT_EQ(h->region_pages, group_region_pages(*h));

    // Every slot's values (the first 100 of each column: a probe asks all
    // 1,014 slots) find their slot.
    for (uint32_t s = 0; s < keys.size(); s++)
        for (uint32_t c = 0; c < ncols; c++)
            for (uint32_t i = 0; i < keys[s][c].size() && i < 100; i++)
                ASSERT_TRUE(probe(g, c, keys[s][c][i]).has(s)) << "slot " << s << " column " << c;
    // Absent values pass few slots, and never a slot not taken.
    uint64_t passed = 0;
    for (int i = 0; i < 2000; i++) {
        SlotMask m = probe(g, 0, rng());
        ASSERT_FALSE((m & ~SlotMask::first(h->slots_taken)).any());
        passed += m.count();
    }
    EXPECT_LT(double(passed) / (2000.0 * h->slots_taken), 0.02);
    // The six-value column: the three values never added pass few slots
    // (two 64-bit blocks holding three values' probes: about 1e-4 each).
    for (int v = 3; v < 6; v++)
        EXPECT_LE(probe(g, 2, low[v]).count(), 10u);
}

// A probe of some slots of a row (bloomidx_verify's, one segment's) is
// the probe of every slot, less the others.
TEST(FilterPages, ProbeWithinSomeSlots)
{
    std::mt19937_64 rng(24);
    std::vector<uint8_t> row(kGroupSlots * kFilterBlockBytes);
    for (auto &b : row)
        b = static_cast<uint8_t>(rng() | rng()); // about 3/4 of the bits set
    for (int t = 0; t < 200; t++) {
        SlotMask within = SlotMask::none();
        for (int i = 0; i < t % 40; i++)
            within.set(static_cast<uint32_t>(rng() % kGroupSlots));
        const uint32_t key = static_cast<uint32_t>(rng());
        const uint32_t probes = 1 + t % 8;
        SlotMask all = group_row_probe(row.data(), probes, kGroupSlots, key);
        ASSERT_TRUE(group_row_probe_within(row.data(), probes, within, key) == (all & within)) << t;
    }
}

TEST(FilterPages, ChecksCatchDamage)
{
    std::mt19937_64 rng(22);
    const uint32_t distinct[2] = {3000, 3000};
    std::vector<std::vector<std::vector<uint64_t>>> keys(4, std::vector<std::vector<uint64_t>>(2));
    for (auto &slot : keys)
        for (auto &col : slot)
            for (int r = 0; r < 3000; r++)
                col.push_back(rng());
    Group g = make_group(2, keys, distinct, 10, 5);
    const uint32_t pages = filter_group_header(g.pages[0].b)->region_pages;
    const uint32_t nblocks = 1 + 1 + pages;

    // Header: another group, another column count, blocks past the index.
    EXPECT_EQ(check_filter_group_page(g.pages[0].b, gid(6), 2, 1, nblocks), PageProblem::BadFilter);
    EXPECT_EQ(check_filter_group_page(g.pages[0].b, gid(5), 3, 1, nblocks), PageProblem::BadFilter);
    EXPECT_EQ(check_filter_group_page(g.pages[0].b, gid(5), 2, 1, nblocks - 1), PageProblem::BadFilter);
    EXPECT_EQ(check_filter_group_page(g.pages[1].b, gid(5), 2, 1, nblocks), PageProblem::WrongKind);
    // Any header byte changed.
    for (uint32_t off = kPageHeaderSize; off < kPageHeaderSize + sizeof(FilterGroupHeader); off++) {
        Page p = g.pages[0];
        p.b[off] ^= 0x10;
        EXPECT_NE(check_filter_group_page(p.b, gid(5), 2, 1, nblocks), PageProblem::None) << off;
    }
    // Region pages: a flipped bit, another group, another place.
    const FilterGroupHeader *h = filter_group_header(g.pages[0].b);
    FilterGroupHeader other = *h;
    other.group_id = gid(4);
    for (uint32_t i = 0; i < pages; i++) {
        Page p = g.pages[1 + i];
        p.b[kPageHeaderSize + (rng() % (group_rows_per_page(*h) * group_row_bytes(*h)))] ^=
            static_cast<uint8_t>(1u << (rng() % 8));
        EXPECT_EQ(check_filter_page(p.b, *h, i), PageProblem::BadFilterBits);
        EXPECT_EQ(check_filter_page(p.b, *h, i, Sums::Trust), PageProblem::None);
        EXPECT_EQ(check_filter_page(g.pages[1 + i].b, other, i), PageProblem::BadFilter);
        EXPECT_EQ(check_filter_page(g.pages[1 + i].b, *h, i + 1), PageProblem::BadFilter);
    }
}

// A region page's place in its group is 32 bits over the special space's
// tid_sum (low) and count (high): a group of 1,016 slots of many
// near-unique columns has more than 65,535 region pages (7 columns of
// data set A: 67,550), and a place kept in 16 bits would fail its check.
TEST(FilterPages, RegionPagePlacePast16Bits)
{
    const uint32_t distinct[1] = {10};
    FilterGroupHeader h;
    filter_group_init(&h, gid(8), 1, distinct, 10, kGroupSlots);
    std::vector<uint8_t> rows(group_row_bytes(h), 0x5A);
    for (uint32_t place : {0u, 65535u, 65536u, 70000u, 1u << 20}) {
        Page p;
        init(p.b);
        filter_page_fill(p.b, h, rows.data(), 1, place);
        uint32_t id = 0;
        EXPECT_EQ(filter_page_place(p.b, &id), int64_t{place} + 1) << place;
        EXPECT_EQ(id, gid(8));
        EXPECT_EQ(check_filter_page(p.b, h, place), PageProblem::None) << place;
        EXPECT_EQ(check_filter_page(p.b, h, place ^ 0x10000), PageProblem::BadFilter) << place;
        EXPECT_EQ(check_filter_page(p.b, h, place + 1), PageProblem::BadFilter) << place;
    }
}

TEST(FilterPages, NoFiltersMeansEverySlotPasses)
{
    const uint32_t distinct[2] = {10, 10};
    FilterGroupHeader h;
    filter_group_init(&h, 9, 2, distinct, 0, kGroupSlots);
    EXPECT_EQ(group_region_rows(h), 0u);
    uint32_t page, offset;
    EXPECT_FALSE(group_row_of(h, 0, 123, &page, &offset));
    EXPECT_FALSE(group_row_of(h, 5, 123, &page, &offset));
}

TEST(FilterPages, AShrunkGroupKeepsEveryValue)
{
    // A build's last group, of fewer segments than a group holds, is laid
    // out again for them alone: 4 slots, 32-byte rows, 254 a page.
    std::mt19937_64 rng(23);
    const uint32_t distinct[2] = {4000, 50};
    std::vector<uint64_t> few(50);
    for (auto &v : few)
        v = rng();
    std::vector<std::vector<std::vector<uint64_t>>> keys(4, std::vector<std::vector<uint64_t>>(2));
    for (auto &slot : keys)
        for (int r = 0; r < 4000; r++) {
            slot[0].push_back(rng());
            slot[1].push_back(few[rng() % few.size()]);
        }
    Group full = make_group(2, keys, distinct, 10, 31);
    Group g = make_group(2, keys, distinct, 10, 31, true);
    const FilterGroupHeader *h = filter_group_header(g.pages[0].b);
    EXPECT_EQ(h->slot_capacity, 4u);
    EXPECT_EQ(group_row_bytes(*h), 32u);
    EXPECT_EQ(group_rows_per_page(*h), 254u);
    EXPECT_LT(h->region_pages * 3, filter_group_header(full.pages[0].b)->region_pages);
    ASSERT_EQ(check_filter_group_page(g.pages[0].b, gid(31), 2, 1, 2 + h->region_pages), PageProblem::None);
    for (uint32_t i = 0; i < h->region_pages; i++)
        ASSERT_EQ(check_filter_page(g.pages[1 + i].b, *h, i), PageProblem::None);
    for (uint32_t s = 0; s < 4; s++)
        for (uint32_t c = 0; c < 2; c++)
            for (uint64_t v : keys[s][c]) {
                ASSERT_TRUE(probe(g, c, v).has(s)) << "slot " << s << " column " << c;
                ASSERT_EQ(probe(g, c, v), probe(full, c, v));
            }
}

TEST(FilterPages, AddingAColumnAtOnceIsAddingEachValue)
{
    std::mt19937_64 rng(24);
    const uint32_t distinct[3] = {3000, 200, 5};
    FilterGroupHeader h;
    filter_group_init(&h, 3, 3, distinct, 9, kGroupSlots);
    const size_t bytes = size_t{group_region_rows(h)} * group_row_bytes(h);
    std::vector<uint8_t> one(bytes), many(bytes);
    // Scratch left dirty by an earlier column: each slot starts from zero.
    std::vector<uint8_t> scratch(kFilterScratchBytes, 0xff);
    std::vector<uint32_t> rows(3000 * 3);
    for (auto &v : rows)
        v = static_cast<uint32_t>(rng());
    for (uint32_t slot : {0u, 7u, 14u}) {
        for (uint32_t r = 0; r < 3000; r++)
            for (uint32_t c = 0; c < 3; c++)
                group_image_add(one.data(), h, c, slot, rows[r * 3 + c]);
        for (uint32_t c = 0; c < 3; c++)
            group_image_add_column(many.data(), h, c, slot, rows.data() + c, 3000, 3,
                                   scratch.data());
    }
    EXPECT_EQ(one, many);
}

// A merged segment's group (filter_merge.cpp): each source slot's filter
// widened into a slot of its own, or ORed with others into a shared one;
// every key a source slot holds passes the slot it went to, page by page
// as VACUUM reads the sources.  A column whose probes differ between the
// sources has no filter in the merged group (every slot passes).
TEST(FilterPages, MergedGroupKeepsEverySourceKey)
{
    std::mt19937_64 rng(31);
    const uint32_t ncols = 3;
    auto keys_of = [&](uint32_t nslots, uint32_t n) {
        std::vector<std::vector<std::vector<uint64_t>>> keys(nslots);
        for (auto &slot : keys) {
            slot.resize(ncols);
            for (auto &col : slot)
                for (uint32_t i = 0; i < n; i++)
                    col.push_back(rng() & 0xFFFFFFFFu);
        }
        return keys;
    };
    // Two sources of other sizes: the first holds 3 slots (build group),
    // the second 2, sized for fewer values (fewer blocks).
    const uint32_t d1[ncols] = {3000, 40, 900}, d2[ncols] = {700, 40, 200};
    auto k1 = keys_of(3, 500), k2 = keys_of(2, 300);
    Group g1 = make_group(ncols, k1, d1, 10, 7, true);
    Group g2 = make_group(ncols, k2, d2, 10, 9, true);
    const FilterGroupHeader sources[2] = {g1.header, g2.header};
    for (uint32_t slots : {5u, 2u, 1u}) {
        FilterGroupHeader to;
        merged_group_init(&to, sources, 2, ncols, slots);
        ASSERT_EQ(to.slot_capacity, slots);
        for (uint32_t c = 0; c < ncols; c++) {
            ASSERT_EQ(to.columns[c].blocks,
                      std::max(g1.header.columns[c].blocks, g2.header.columns[c].blocks));
            ASSERT_EQ(to.columns[c].probes, g1.header.columns[c].probes);
        }
        std::vector<uint8_t> image(size_t{group_region_rows(to)} * group_row_bytes(to));
        int16_t map1[kGroupSlots], map2[kGroupSlots];
        std::fill(map1, map1 + kGroupSlots, -1);
        std::fill(map2, map2 + kGroupSlots, -1);
        uint32_t next = 0;
        for (uint32_t s = 0; s < 3; s++)
            map1[s] = static_cast<int16_t>(next++ % slots);
        for (uint32_t s = 0; s < 2; s++)
            map2[s] = static_cast<int16_t>(next++ % slots);
        for (uint32_t p = 0; p < g1.header.region_pages; p++)
            group_image_merge_page(image.data(), to, g1.header, p, g1.pages[1 + p].b + kPageHeaderSize,
                                   map1);
        for (uint32_t p = 0; p < g2.header.region_pages; p++)
            group_image_merge_page(image.data(), to, g2.header, p, g2.pages[1 + p].b + kPageHeaderSize,
                                   map2);
        for (uint32_t s = 0; s < slots; s++)
            to.slot_segment[s] = 50;
        to.group_id = gid(50);
        to.slots_taken = static_cast<uint16_t>(slots);
        Group merged;
        merged.header = to;
        merged.pages.resize(1 + to.region_pages);
        init(merged.pages[0].b);
        filter_group_page_fill(merged.pages[0].b, to);
        for (uint32_t i = 0; i < to.region_pages; i++) {
            const uint32_t per_page = group_rows_per_page(to);
            uint32_t n = group_region_rows(to) - i * per_page;
            init(merged.pages[1 + i].b);
            filter_page_fill(merged.pages[1 + i].b, to,
                             image.data() + size_t{i} * per_page * group_row_bytes(to),
                             n < per_page ? n : per_page, i);
        }
        ASSERT_EQ(check_filter_group_page(merged.pages[0].b, gid(50), ncols, 1, 2 + to.region_pages),
                  PageProblem::None);
        EXPECT_EQ(low(group_segment_slots(to, 50)), (1u << slots) - 1);
        for (uint32_t s = 0; s < 3; s++)
            for (uint32_t c = 0; c < ncols; c++)
                for (uint64_t v : k1[s][c])
                    ASSERT_TRUE(probe(merged, c, v).has(map1[s])) << "source 1 slot " << s;
        for (uint32_t s = 0; s < 2; s++)
            for (uint32_t c = 0; c < ncols; c++)
                for (uint64_t v : k2[s][c])
                    ASSERT_TRUE(probe(merged, c, v).has(map2[s])) << "source 2 slot " << s;
        // Absent values mostly fail in every slot: the merged filter still
        // filters (about the sources' rate each, in a slot of its own; slots
        // shared by several sources fill up).
        uint32_t passed = 0;
        for (int i = 0; i < 10000; i++)
            passed += probe(merged, 0, rng() & 0xFFFFFFFFu).any();
        EXPECT_LT(passed, slots == 5 ? 10000u * 5 / 20 : 10000u / 5) << slots << " slots";
    }
    // Other probes on column 1 (another rate): no filter there in the merged group.
    FilterGroupHeader other = g2.header;
    other.columns[1].probes = static_cast<uint8_t>(other.columns[1].probes + 1);
    const FilterGroupHeader mixed[2] = {g1.header, other};
    FilterGroupHeader to;
    merged_group_init(&to, mixed, 2, ncols, 5);
    EXPECT_EQ(to.columns[1].blocks, 0u);
    EXPECT_EQ(to.columns[1].probes, 0u);
    EXPECT_GT(to.columns[0].blocks, 0u);
    EXPECT_EQ(low(group_segment_slots(g1.header, 7)), 1u);
    EXPECT_EQ(low(group_segment_slots(g1.header, 7 + 100 + 2)), 4u);
    EXPECT_EQ(low(group_segment_slots(g1.header, 999)), 0u);
}

// A build's group of many segments, composed row by row from each
// segment's filters made alone (one-slot groups of their own sizes):
// byte for byte what merging their pages into an image makes, through
// windows of any size, and every key passes its slot.  A source that
// cannot widen into the group, or a window too short, is refused.
TEST(FilterPages, ComposedGroupIsTheMergedImage)
{
    std::mt19937_64 rng(41);
    const uint32_t ncols = 3;
    const uint32_t nslots = 40;
    std::vector<Group> one(nslots);
    // keys[s]: the keys of the one-slot group of segment s.
    std::vector<std::vector<std::vector<std::vector<uint64_t>>>> keys(nslots);
    std::vector<FilterGroupHeader> headers(nslots);
    for (uint32_t s = 0; s < nslots; s++) {
        const uint32_t n = 50 + static_cast<uint32_t>(rng() % 3000);
        const uint32_t distinct[ncols] = {n, 1 + n / 20, 3};
        keys[s].assign(1, std::vector<std::vector<uint64_t>>(ncols));
        for (uint32_t c = 0; c < ncols; c++)
            for (uint32_t i = 0; i < n; i++)
                keys[s][0][c].push_back(rng() & 0xFFFFFFFFu);
        one[s] = make_group(ncols, keys[s], distinct, 10, 1000 + s, true);
        headers[s] = one[s].header;
    }
    FilterGroupHeader to;
    merged_group_init(&to, headers.data(), nslots, ncols, nslots);
    to.group_id = gid(1);
    to.slots_taken = static_cast<uint16_t>(nslots);
    for (uint32_t s = 0; s < nslots; s++)
        to.slot_segment[s] = 1000 + s;

    // The reference: every source page merged into an image.
    const uint32_t rows = group_region_rows(to);
    const uint32_t row_bytes = group_row_bytes(to);
    std::vector<uint8_t> image(size_t{rows} * row_bytes);
    for (uint32_t s = 0; s < nslots; s++) {
        int16_t map[kGroupSlots];
        std::fill(map, map + kGroupSlots, -1);
        map[0] = static_cast<int16_t>(s);
        for (uint32_t p = 0; p < headers[s].region_pages; p++)
            group_image_merge_page(image.data(), to, headers[s], p,
                                   one[s].pages[1 + p].b + kPageHeaderSize, map);
    }
    // Each source's rows back to back, as a build spools them.
    std::vector<std::vector<uint8_t>> spool(nslots);
    for (uint32_t s = 0; s < nslots; s++) {
        const uint32_t per_page = group_rows_per_page(headers[s]);
        const uint32_t bytes = group_row_bytes(headers[s]);
        for (uint32_t r = 0; r < group_region_rows(headers[s]); r++) {
            const uint8_t *row = one[s].pages[1 + r / per_page].b + kPageHeaderSize +
                                 (r % per_page) * bytes;
            spool[s].insert(spool[s].end(), row, row + bytes);
        }
    }
    std::vector<uint8_t> composed(image.size());
    for (uint32_t first = 0; first < rows;) {
        const uint32_t n = std::min<uint32_t>(rows - first, 1 + static_cast<uint32_t>(rng() % 200));
        std::vector<GroupRowsSource> src(nslots);
        for (uint32_t s = 0; s < nslots; s++) {
            uint32_t a, b;
            group_source_window(to, first, n, headers[s], &a, &b);
            ASSERT_LT(a, b);
            src[s] = GroupRowsSource{&headers[s], spool[s].data() + size_t{a} * group_row_bytes(headers[s]),
                                     a, b, s};
        }
        ASSERT_TRUE(group_rows_compose(composed.data() + size_t{first} * row_bytes, to, first, n,
                                       src.data(), nslots));
        // One row short of the window: refused.
        if (src[3].end_row > src[3].first_row + 1) {
            src[3].end_row--;
            std::vector<uint8_t> scratch(size_t{n} * row_bytes);
            EXPECT_FALSE(group_rows_compose(scratch.data(), to, first, n, src.data(), nslots));
        }
        first += n;
    }
    ASSERT_EQ(composed, image);

    // Every key passes its slot in the group written from the composed rows.
    Group g;
    g.header = to;
    g.pages.resize(1 + to.region_pages);
    init(g.pages[0].b);
    filter_group_page_fill(g.pages[0].b, to);
    ASSERT_EQ(check_filter_group_page(g.pages[0].b, gid(1), ncols, 1, 2 + to.region_pages),
              PageProblem::None);
    for (uint32_t i = 0; i < to.region_pages; i++) {
        const uint32_t per_page = group_rows_per_page(to);
        init(g.pages[1 + i].b);
        filter_page_fill(g.pages[1 + i].b, to, composed.data() + size_t{i} * per_page * row_bytes,
                         std::min(per_page, rows - i * per_page), i);
    }
    for (uint32_t s = 0; s < nslots; s++)
        for (uint32_t c = 0; c < ncols; c++)
            for (uint64_t v : keys[s][0][c])
                ASSERT_TRUE(probe(g, c, v).has(s)) << "slot " << s << " column " << c;

    // A source with other probes, or more blocks than the group: refused.
    FilterGroupHeader odd = headers[0];
    odd.columns[0].probes = static_cast<uint8_t>(odd.columns[0].probes + 1);
    GroupRowsSource bad{&odd, spool[0].data(), 0, group_region_rows(headers[0]), 0};
    std::vector<uint8_t> row(row_bytes);
    EXPECT_FALSE(group_rows_compose(row.data(), to, 0, 1, &bad, 1));
    odd = headers[0];
    odd.columns[0].blocks = static_cast<uint16_t>(to.columns[0].blocks + 1);
    EXPECT_FALSE(group_rows_compose(row.data(), to, 0, 1, &bad, 1));
    // Slots past the group's capacity: refused.
    GroupRowsSource late{&headers[0], spool[0].data(), 0, group_region_rows(headers[0]), nslots};
    EXPECT_FALSE(group_rows_compose(row.data(), to, 0, 1, &late, 1));
}

// A group of many segments takes an id above every segment's, a group of
// one segment's own that segment's: the header's check holds either to it.
TEST(FilterPages, GroupIdsTellOwnGroupsFromShared)
{
    const uint32_t distinct[2] = {3000, 3000};
    std::vector<std::vector<std::vector<uint64_t>>> keys(2, std::vector<std::vector<uint64_t>>(2, {1, 2, 3}));
    Group g = make_group(2, keys, distinct, 10, 5);
    const uint32_t nblocks = 2 + g.header.region_pages;
    ASSERT_EQ(check_filter_group_page(g.pages[0].b, gid(5), 2, 1, nblocks), PageProblem::None);
    // The same group named by a segment's id, or holding a group id as a segment.
    FilterGroupHeader h = g.header;
    h.group_id = 5;
    Page p;
    init(p.b);
    filter_group_page_fill(p.b, h);
    EXPECT_EQ(check_filter_group_page(p.b, 5, 2, 1, nblocks), PageProblem::BadFilter);
    h = g.header;
    h.slot_segment[1] = gid(9);
    init(p.b);
    filter_group_page_fill(p.b, h);
    EXPECT_EQ(check_filter_group_page(p.b, gid(5), 2, 1, nblocks), PageProblem::BadFilter);
}

// A build writes its segments in groups whose rows fill their pages.
TEST(FilterPages, PackedGroupSizes)
{
    std::vector<uint32_t> packed;
    for (uint32_t c = 1; c <= kGroupSlots; c++)
        if (group_slots_packed(c) == c)
            packed.push_back(c);
    std::vector<uint32_t> expected;
    for (uint32_t c = 1; c <= kGroupSlots; c++)
        if (c <= 169 || (c >= 174 && c <= 203) || (c >= 217 && c <= 254) ||
            (c >= 289 && c <= 339) || (c >= 434 && c <= 509) || c >= 867)
            expected.push_back(c);
    EXPECT_EQ(packed, expected);
    EXPECT_EQ(group_slots_packed(700), 509u);
    EXPECT_EQ(group_slots_packed(16), 16u);
    EXPECT_EQ(group_slots_packed(210), 203u);
    EXPECT_EQ(group_slots_packed(2000), 1016u);
    EXPECT_EQ(group_slots_packed(0), 0u);
    for (uint32_t n = 1; n <= kGroupSlots; n++) {
        FilterGroupHeader h{};
        h.slot_capacity = static_cast<uint16_t>(group_slots_packed(n));
        ASSERT_GE(group_rows_per_page(h) * group_row_bytes(h) * 100, kPayloadBytes * 85u) << n;
    }
}

// A group of one segment's own (a seal's or merge's) lists where its
// region pages are: they may lie anywhere, and the header's check refuses
// a list that points outside the index, at the metapage or at the header.
TEST(FilterPages, ListedRegionPages)
{
    const uint32_t distinct[2] = {30000, 20};
    FilterGroupHeader h;
    filter_group_init(&h, 0, 2, distinct, 10, 1);
    ASSERT_GE(h.region_pages, 2u);
    h.group_id = 77;
    h.slots_taken = 1;
    h.slot_segment[0] = 77;
    h.flags = kGroupListed;
    std::vector<uint32_t> blocks;
    for (uint32_t i = 0; i < h.region_pages; i++)
        blocks.push_back(500 - 7 * i);
    Page p;
    init(p.b);
    filter_group_page_fill(p.b, h, blocks.data());
    ASSERT_EQ(check_filter_group_page(p.b, 77, 2, 900, 1000), PageProblem::None);
    for (uint32_t i = 0; i < h.region_pages; i++)
        EXPECT_EQ(group_region_block(p.b, 900, i), blocks[i]);
    uint32_t group = 0;
    EXPECT_EQ(filter_page_place(p.b, &group), 0);
    EXPECT_EQ(group, 77u);
    // Past the index, the metapage, the header itself.
    EXPECT_EQ(check_filter_group_page(p.b, 77, 2, 900, 501), PageProblem::None);
    EXPECT_EQ(check_filter_group_page(p.b, 77, 2, 900, 500), PageProblem::BadFilter);
    for (uint32_t bad : {0u, 900u, 5000u}) {
        std::vector<uint32_t> damaged = blocks;
        damaged.back() = bad;
        Page q;
        init(q.b);
        filter_group_page_fill(q.b, h, damaged.data());
        EXPECT_EQ(check_filter_group_page(q.b, 77, 2, 900, 1000), PageProblem::BadFilter) << bad;
    }
    // The flag without its list (pd_lower), or an unknown flag.
    Page r = p;
    write_u16(r.b + kPdLowerOffset, read_u16(r.b + kPdLowerOffset) - 4);
    EXPECT_EQ(check_filter_group_page(r.b, 77, 2, 900, 1000), PageProblem::BadFilter);
    FilterGroupHeader odd = h;
    odd.flags = 2;
    Page s;
    init(s.b);
    filter_group_page_fill(s.b, odd, blocks.data());
    EXPECT_EQ(check_filter_group_page(s.b, 77, 2, 900, 1000), PageProblem::BadFilter);
    // A region page tells its place and group.
    std::vector<uint8_t> rows(size_t{group_rows_per_page(h)} * group_row_bytes(h));
    Page region;
    init(region.b);
    filter_page_fill(region.b, h, rows.data(), group_rows_per_page(h), 1);
    group = 0;
    EXPECT_EQ(filter_page_place(region.b, &group), 2);
    EXPECT_EQ(group, 77u);
    Page other;
    init(other.b);
    EXPECT_EQ(filter_page_place(other.b, &group), -1);
}

// SlotMask: capacities up to its 1,024 slots, every word.
TEST(SlotMask, SetsFirstAndOperators)
{
    for (uint32_t n : {0u, 1u, 15u, 63u, 64u, 65u, 127u, 128u, 500u, 1015u, 1016u, 1024u}) {
        SlotMask m = SlotMask::first(n);
        ASSERT_EQ(m.count(), n) << n;
        for (uint32_t s = 0; s < 64 * SlotMask::kWords; s++)
            ASSERT_EQ(m.has(s), s < n) << n << " " << s;
        ASSERT_EQ(m.any(), n > 0);
    }
    SlotMask a = SlotMask::one(3) | SlotMask::one(100);
    SlotMask b = SlotMask::one(100) | SlotMask::one(127);
    EXPECT_EQ((a & b), SlotMask::one(100));
    EXPECT_EQ((a | b).count(), 3u);
    EXPECT_TRUE((a & ~b) == SlotMask::one(3));
    SlotMask c = a;
    c &= b;
    EXPECT_TRUE(c == SlotMask::one(100));
    c |= SlotMask::one(0);
    EXPECT_TRUE(c.has(0) && c.has(100) && !c.has(3));
    EXPECT_FALSE(SlotMask::none().any());
    EXPECT_FALSE(SlotMask::one(64 * SlotMask::kWords).any()); // past the mask: ignored
    EXPECT_TRUE(SlotMask::one(kGroupSlots - 1).has(kGroupSlots - 1));
    EXPECT_EQ(SlotMask::first(kGroupSlots).count(), kGroupSlots);
}

// Every segment's slots found in one pass span group_segment_slots' for
// it, from its lowest to its highest: a group of 1,016 slots taken for 60
// segments (some with one slot, some with several, apart; one never
// named), asked for 61 ids in any order, one not in the group, one twice
// (damage: the same range at each place); and the filter scan's order
// sorts by block, then entry.
TEST(FilterPages, AllSegmentsSlotsInOnePass)
{
    std::mt19937_64 rng(43);
    const uint32_t distinct[1] = {100};
    FilterGroupHeader h;
    filter_group_init(&h, kFirstGroupId + 5, 1, distinct, 9, kGroupSlots);
    h.slots_taken = kGroupSlots;
    for (uint32_t s = 0; s < kGroupSlots; s++)
        h.slot_segment[s] = 1000 + static_cast<uint32_t>(rng() % 60) * 7;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < 60; i++)
        ids.push_back(1000 + i * 7);
    ids.push_back(5);
    ids.push_back(1000 + 3 * 7);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<uint32_t> table(group_slot_table_size(static_cast<uint32_t>(ids.size())));
    EXPECT_GE(table.size(), 2 * ids.size());
    std::vector<SlotRange> ranges(ids.size());
    group_segments_slot_ranges(h, ids.data(), static_cast<uint32_t>(ids.size()), table.data(),
                               ranges.data());
    uint32_t total = 0;
    for (size_t j = 0; j < ids.size(); j++) {
        SlotMask want = group_segment_slots(h, ids[j]);
        if (!want.any()) {
            EXPECT_TRUE(ranges[j].is_empty()) << "segment " << ids[j];
            continue;
        }
        uint32_t lo = kGroupSlots, hi = 0;
        for (uint32_t s = 0; s < kGroupSlots; s++)
            if (want.has(s)) {
                lo = std::min(lo, s);
                hi = std::max(hi, s);
            }
        EXPECT_EQ(ranges[j].first, lo) << "segment " << ids[j];
        EXPECT_EQ(ranges[j].last, hi) << "segment " << ids[j];
        SlotMask in_range = SlotMask::none();
        in_range.set_range(ranges[j].first, ranges[j].last);
        EXPECT_TRUE((want & ~in_range) == SlotMask::none());
        for (uint32_t s = 0; s < kGroupSlots; s++)
            ASSERT_EQ(SlotMask::one(s).any_in(ranges[j].first, ranges[j].last),
                      ranges[j].has(s));
        if (std::find(ids.begin(), ids.begin() + j, ids[j]) == ids.begin() + j)
            total += want.count(); // the id repeated counted once
    }
    EXPECT_EQ(total, kGroupSlots);
    EXPECT_FALSE(SlotMask::first(kGroupSlots).any_in(5, 4));
    EXPECT_TRUE(SlotMask::first(kGroupSlots).any_in(1000, 2000));
    EXPECT_FALSE(SlotMask::one(700).any_in(0, 699));
    EXPECT_TRUE(SlotMask::one(700).any_in(0, 700));
    EXPECT_TRUE(SlotMask::one(700).any_in(640, 703));

    std::vector<uint64_t> keys;
    for (uint32_t i = 0; i < 500; i++)
        keys.push_back(group_order_key(static_cast<uint32_t>(rng() % 9) + 1, i));
    sort_group_order(keys.data(), static_cast<uint32_t>(keys.size()));
    for (size_t i = 1; i < keys.size(); i++) {
        EXPECT_LE(keys[i - 1] >> 32, keys[i] >> 32);
        if (keys[i - 1] >> 32 == keys[i] >> 32) {
            EXPECT_LT(keys[i - 1] & 0xFFFFFFFFu, keys[i] & 0xFFFFFFFFu);
        }
    }
}

// A pending group (format 17): slots are pending pages, written one by one
// into zeroed region pages as pages fill; a probe finds every key of every
// slot written, slots not yet named in the header are not asked, and the
// checks catch links and slots out of place.
TEST(FilterPages, PendingGroupSlotsHoldTheirPagesKeys)
{
    const uint32_t ncols = 3, rows = 185;
    FilterGroupHeader h;
    pending_group_init(&h, gid(3), ncols, rows, 10);
    ASSERT_EQ(h.flags, kGroupListed | kGroupPending);
    ASSERT_EQ(h.slot_capacity, kPendingGroupSlots);
    ASSERT_GT(h.region_pages, ncols - 1);
    std::vector<uint32_t> blocks;
    for (uint32_t i = 0; i < h.region_pages; i++)
        blocks.push_back(200 + 3 * i);
    std::vector<Page> region(h.region_pages);
    for (uint32_t i = 0; i < h.region_pages; i++) {
        init(region[i].b);
        filter_page_fill(region[i].b, h, region[i].b, 0, i);
        ASSERT_EQ(check_filter_page(region[i].b, h, i), PageProblem::None);
    }
    Page header;
    init(header.b);
    PendingGroupLinks links{};
    pending_group_page_fill(header.b, h, blocks.data(), links);
    ASSERT_EQ(check_pending_group_page(header.b, gid(3), ncols, 100, 1000), PageProblem::None);
    // Not a group of segments' (the kind each reader checks for).
    EXPECT_EQ(check_filter_group_page(header.b, gid(3), ncols, 100, 1000), PageProblem::BadFilter);

    std::mt19937_64 rng(17);
    const uint32_t slots = 40;
    std::vector<std::vector<uint32_t>> keys(slots, std::vector<uint32_t>(rows * ncols));
    std::vector<std::vector<std::vector<uint8_t>>> filters(slots,
                                                           std::vector<std::vector<uint8_t>>(ncols));
    // Slots written in batches of 1 to 5, each region page once a batch.
    for (uint32_t first = 0, n = 1; first < slots; first += n, n = n % 5 + 1) {
        n = std::min(n, slots - first);
        std::vector<const uint8_t *> column_blocks(size_t{n} * kMaxColumns, nullptr);
        for (uint32_t j = 0; j < n; j++) {
            const uint32_t s = first + j;
            for (uint32_t &k : keys[s])
                k = static_cast<uint32_t>(rng());
            for (uint32_t c = 0; c < ncols; c++) {
                filters[s][c].assign(size_t{h.columns[c].blocks} * kFilterBlockBytes, 0);
                filter_add_many(filters[s][c].data(), kFilterBlockBytes, h.columns[c].blocks,
                                h.columns[c].probes, keys[s].data() + c, rows, ncols);
                column_blocks[size_t{j} * kMaxColumns + c] = filters[s][c].data();
            }
        }
        for (uint32_t i = 0; i < h.region_pages; i++) {
            // Every byte the write changes is in the ranges the WAL logs
            // (pending_slots_ranges), which never leave the page.
            Page before = region[i];
            pending_slots_write(region[i].b, h, i, first, n, column_blocks.data());
            ASSERT_EQ(check_filter_page(region[i].b, h, i), PageProblem::None);
            PageRange ranges[kPendingSlotRanges];
            uint32_t nranges = pending_slots_ranges(h, i, first, n, ranges);
            ASSERT_GT(nranges, 0u);
            std::vector<bool> logged(kBlockSize, false);
            for (uint32_t k = 0; k < nranges; k++) {
                ASSERT_LE(uint32_t{ranges[k].offset} + ranges[k].length, kBlockSize);
                for (uint32_t b = 0; b < ranges[k].length; b++)
                    logged[ranges[k].offset + b] = true;
            }
            for (uint32_t b = 0; b < kBlockSize; b++)
                ASSERT_TRUE(logged[b] || before.b[b] == region[i].b[b])
                    << "byte " << b << " of region page " << i << " changed, not logged";
        }
        for (uint32_t j = 0; j < n; j++)
            h.slot_segment[first + j] = 500 + first + j;
        h.slots_taken = static_cast<uint16_t>(first + n);
        links.after = 500 + first + n;
        pending_group_page_fill(header.b, h, nullptr, links);
        ASSERT_EQ(check_pending_group_page(header.b, gid(3), ncols, 100, 1000), PageProblem::None);
        EXPECT_EQ(pending_group_links(header.b).after, 500 + first + n);
        EXPECT_EQ(group_region_block(header.b, 100, 0), blocks[0]) << "the list kept";
    }
    // Every key of every slot is found in its slot; a random key passes few.
    uint32_t passed_by_chance = 0;
    for (uint32_t s = 0; s < slots; s++)
        for (uint32_t r = 0; r < rows; r += 7)
            for (uint32_t c = 0; c < ncols; c++) {
                uint32_t key = keys[s][r * ncols + c];
                uint32_t page = 0, offset = 0;
                ASSERT_TRUE(group_row_of(h, c, key, &page, &offset));
                SlotMask m = group_row_probe(region[page].b + offset, h.columns[c].probes,
                                             h.slots_taken, key);
                ASSERT_TRUE(m.has(s)) << "slot " << s << " row " << r << " column " << c;
                EXPECT_FALSE(m.has(slots)) << "no slot past those taken";
                uint32_t other = static_cast<uint32_t>(rng());
                ASSERT_TRUE(group_row_of(h, c, other, &page, &offset));
                passed_by_chance += group_row_probe(region[page].b + offset, h.columns[c].probes,
                                                    h.slots_taken, other).count();
            }
    EXPECT_LT(passed_by_chance, 0.05 * slots * (rows / 7 + 1) * ncols * slots);

    // A header whose rows no pending group has (many rows a page): no ranges.
    FilterGroupHeader narrow = h;
    narrow.slot_capacity = 8;
    PageRange few[kPendingSlotRanges];
    EXPECT_EQ(pending_slots_ranges(narrow, 0, 0, 1, few), 0u);

    // Damage: a slot's page past the index or at the header, links out of place.
    auto with = [&](auto change) {
        FilterGroupHeader hh = h;
        PendingGroupLinks ll = links;
        change(hh, ll);
        Page q;
        init(q.b);
        pending_group_page_fill(q.b, hh, blocks.data(), ll);
        return check_pending_group_page(q.b, gid(3), ncols, 100, 1000);
    };
    EXPECT_EQ(with([](FilterGroupHeader &, PendingGroupLinks &) {}), PageProblem::None);
    EXPECT_EQ(with([](FilterGroupHeader &hh, PendingGroupLinks &) { hh.slot_segment[3] = 1000; }),
              PageProblem::BadFilter);
    EXPECT_EQ(with([](FilterGroupHeader &hh, PendingGroupLinks &) { hh.slot_segment[3] = 100; }),
              PageProblem::BadFilter);
    EXPECT_EQ(with([](FilterGroupHeader &, PendingGroupLinks &ll) { ll.after = 0; }),
              PageProblem::BadFilter);
    EXPECT_EQ(with([](FilterGroupHeader &, PendingGroupLinks &ll) { ll.after = 1000; }),
              PageProblem::BadFilter);
    EXPECT_EQ(with([](FilterGroupHeader &, PendingGroupLinks &ll) {
                  ll.next_group = 300;
                  ll.next_group_id = gid(4);
              }),
              PageProblem::BadFilter)
        << "a next group behind a group not full";
    EXPECT_EQ(with([](FilterGroupHeader &hh, PendingGroupLinks &) {
                  hh.flags = kGroupListed;
              }),
              PageProblem::BadFilter);
    Page q = header;
    uint32_t lower = read_u16(q.b + kPdLowerOffset);
    q.b[lower - 8] ^= 1; // the links' bytes
    EXPECT_EQ(check_pending_group_page(q.b, gid(3), ncols, 100, 1000), PageProblem::BadFilter);
    EXPECT_EQ(check_pending_group_page(header.b, gid(4), ncols, 100, 1000), PageProblem::BadFilter)
        << "another group's id: recycled";
}

// A group's slot owners: each slot of a range owned by that range's
// segment and no slot of none, as any_in over every range answers, when
// the ranges are apart (a build's group, 60 segments in runs of slots,
// one with none); refused when two share a slot (interleaved slots make
// overlapping ranges, and damage repeats an id: the same range twice).
TEST(FilterPages, SlotOwnersWhereRangesAreApart)
{
    FilterGroupHeader h;
    const uint32_t distinct[1] = {100};
    filter_group_init(&h, kFirstGroupId + 6, 1, distinct, 9, kGroupSlots);
    h.slots_taken = 600;
    for (uint32_t s = 0; s < h.slots_taken; s++)
        h.slot_segment[s] = 2000 + s / 10; // 60 segments of 10 slots each
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < 60; i++)
        ids.push_back(2000 + (i * 37) % 60);
    ids.push_back(7); // not in the group
    std::vector<uint32_t> table(group_slot_table_size(static_cast<uint32_t>(ids.size())));
    std::vector<SlotRange> ranges(ids.size());
    group_segments_slot_ranges(h, ids.data(), static_cast<uint32_t>(ids.size()), table.data(),
                               ranges.data());
    int16_t owner[kGroupSlots];
    ASSERT_TRUE(group_slot_owners(ranges.data(), static_cast<uint32_t>(ids.size()), owner));
    for (uint32_t s = 0; s < kGroupSlots; s++) {
        int16_t want = -1;
        for (uint32_t j = 0; j < ids.size(); j++)
            if (SlotMask::one(s).any_in(ranges[j].first, ranges[j].last))
                want = static_cast<int16_t>(j);
        ASSERT_EQ(owner[s], want) << "slot " << s;
    }

    // Interleaved: segment 3000 in slots 0 and 2, 3001 in slot 1.
    h.slot_segment[0] = 3000;
    h.slot_segment[1] = 3001;
    h.slot_segment[2] = 3000;
    std::vector<uint32_t> two = {3000, 3001};
    std::vector<SlotRange> r2(2);
    group_segments_slot_ranges(h, two.data(), 2, table.data(), r2.data());
    EXPECT_FALSE(group_slot_owners(r2.data(), 2, owner));
    // A repeated id: the same range at both places.
    std::vector<uint32_t> twice = {2010, 2010};
    group_segments_slot_ranges(h, twice.data(), 2, table.data(), r2.data());
    EXPECT_FALSE(group_slot_owners(r2.data(), 2, owner));
    // No ranges: no owners.
    EXPECT_TRUE(group_slot_owners(r2.data(), 0, owner));
    EXPECT_EQ(owner[0], -1);
}
