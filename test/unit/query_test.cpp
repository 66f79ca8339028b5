// Unit tests of src/core/query.hpp: a query built from (column, hashes)
// keys, held to what it must mean: every row holding a value of every key
// passes it (pending rows by the masks, sealed rows by the positions), the
// masks and positions are those of the keys' values bit by bit, the
// filter keys are the tested keys in order, long lists are left to the
// recheck, and a build interrupted at any point ends as one that is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/page_layout.hpp"
#include "core/positions.hpp"
#include "core/query.hpp"
#include "core/signature.hpp"
#include "core/sizing.hpp"

using namespace bloomidx;

namespace {

MetaPageData make_meta(uint16_t length, const std::vector<uint16_t> &bits)
{
    MetaPageData meta;
    std::vector<uint8_t> hashing(bits.size(), 0);
    meta_fill(&meta, length, static_cast<uint16_t>(bits.size()), bits.data(), hashing.data());
    return meta;
}

// The bits one value sets, as a signature.
std::vector<uint8_t> value_signature(const MetaPageData &meta, int column, uint64_t hash)
{
    std::vector<uint8_t> sig(meta.signature_bytes, 0);
    add_value(sig.data(), meta.signature_bits, meta.column_bits[column], hash);
    return sig;
}

std::vector<uint16_t> set_positions(const std::vector<uint8_t> &sig, uint32_t length)
{
    std::vector<uint16_t> out;
    for (uint32_t j = 0; j < length; j++)
        if (signature_test_bit(sig.data(), j))
            out.push_back(static_cast<uint16_t>(j));
    return out;
}

// A query built in memory it owns (8-byte aligned, as palloc's).
struct Built {
    std::vector<KeyUse> uses;
    std::vector<uint64_t> memory;
    Query query;
    int calls = 0;
};

struct StopEvery {
    int every;
    int asked = 0;
};

bool stop_every(void *arg)
{
    StopEvery *s = static_cast<StopEvery *>(arg);
    return ++s->asked % s->every == 0;
}

void build(const MetaPageData &meta, const std::vector<QueryKey> &keys, Built *b,
           double *rates, int stop = 0)
{
    b->uses.assign(keys.size() + 1, KeyUse::Bits);
    size_t bytes = plan_query(meta, keys.data(), static_cast<int>(keys.size()), b->uses.data(),
                              rates, &b->query);
    b->memory.assign(bytes / 8 + 1, 0);
    StopEvery s{stop};
    b->calls = 1;
    while (!build_query(meta, keys.data(), static_cast<int>(keys.size()), b->uses.data(),
                        b->memory.data(), &b->query, stop ? stop_every : nullptr, &s))
        b->calls++;
}

std::vector<double> no_rates()
{
    return std::vector<double>(kMaxColumns, -1);
}

// A row's signature from one hash per column.
std::vector<uint8_t> row_signature(const MetaPageData &meta, const std::vector<uint64_t> &row)
{
    std::vector<uint8_t> sig(meta.signature_bytes, 0);
    for (int c = 0; c < meta.ncolumns; c++)
        add_value(sig.data(), meta.signature_bits, meta.column_bits[c], row[c]);
    return sig;
}

// Whether the sliced form of the query keeps a row: every base position
// set, and for each list every position of one element.
bool slices_keep(const SliceQuery &q, const std::vector<uint8_t> &sig)
{
    for (uint32_t i = 0; i < q.nbase; i++)
        if (!signature_test_bit(sig.data(), q.base[i]))
            return false;
    for (int l = 0; l < q.nlists; l++) {
        const SliceList &list = q.lists[l];
        bool any = false;
        for (uint32_t e = 0; e < list.count && !any; e++) {
            bool all = true;
            for (uint32_t p = 0; p < list.per_element && all; p++)
                all = signature_test_bit(sig.data(), list.positions[size_t{e} * list.per_element + p]);
            any = all;
        }
        if (!any)
            return false;
    }
    return true;
}

bool masks_keep(const Query &q, const std::vector<uint8_t> &sig)
{
    QueryMatcher matcher(q.base, q.lists, q.nlists);
    uint16_t out[1];
    return matcher.match_array(sig.data(), 1, out) == 1;
}

} // namespace

TEST(Query, EqualitiesMakeTheBaseMaskAndItsPositions)
{
    MetaPageData meta = make_meta(80, {3, 5, 2});
    std::vector<uint64_t> h = {0x1234, 0xabcdef, 42};
    std::vector<QueryKey> keys = {{0, &h[0], 1}, {2, &h[2], 1}};
    std::vector<double> rates = no_rates();
    Built b;
    build(meta, keys, &b, rates.data());

    std::vector<uint8_t> want(meta.signature_bytes, 0);
    add_value(want.data(), meta.signature_bits, 3, h[0]);
    add_value(want.data(), meta.signature_bits, 2, h[2]);
    std::vector<uint16_t> positions = set_positions(want, meta.signature_bits);

    EXPECT_EQ(b.uses[0], KeyUse::Bits);
    EXPECT_EQ(b.uses[1], KeyUse::Bits);
    EXPECT_EQ(b.query.nlists, 0);
    EXPECT_EQ(b.query.elements, 0);
    ASSERT_EQ(b.query.slices.nbase, positions.size());
    EXPECT_TRUE(std::equal(positions.begin(), positions.end(), b.query.slices.base));
    EXPECT_EQ(b.query.slices.nlists, 0);
    // The mask keeps the query's own bits and drops a signature lacking one.
    EXPECT_TRUE(b.query.base.matches(want.data()));
    std::vector<uint8_t> less = want;
    less[positions.back() / 8] &= static_cast<uint8_t>(~(1u << (positions.back() % 8)));
    EXPECT_FALSE(b.query.base.matches(less.data()));
    // Both keys asked of the filters, in their order.
    ASSERT_EQ(b.query.filter.nkeys, 2);
    EXPECT_EQ(b.query.filter.keys[0].column, 0);
    EXPECT_EQ(b.query.filter.keys[0].hashes, &h[0]);
    EXPECT_EQ(b.query.filter.keys[1].column, 2);
    EXPECT_EQ(b.query.filter.keys[1].nhashes, 1u);
}

TEST(Query, ListsGetOneMaskAndOneSetOfPositionsPerElement)
{
    MetaPageData meta = make_meta(160, {4, 6});
    std::mt19937_64 rng(7);
    std::vector<uint64_t> list(300);
    for (auto &x : list)
        x = rng();
    std::vector<uint64_t> eq = {rng()};
    std::vector<QueryKey> keys = {{1, list.data(), static_cast<uint32_t>(list.size())},
                                  {0, eq.data(), 1}};
    std::vector<double> rates = no_rates();
    Built b;
    build(meta, keys, &b, rates.data());

    ASSERT_EQ(b.uses[0], KeyUse::List);
    ASSERT_EQ(b.query.nlists, 1);
    EXPECT_EQ(b.query.elements, 300);
    const SliceList &sl = b.query.slices.lists[0];
    ASSERT_EQ(sl.count, 300u);
    ASSERT_EQ(sl.per_element, 6u);
    for (uint32_t e = 0; e < sl.count; e++) {
        std::vector<uint8_t> sig = value_signature(meta, 1, list[e]);
        std::vector<uint16_t> want = set_positions(sig, meta.signature_bits);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), sl.positions + size_t{e} * 6)) << e;
        // The element's own bits pass its list; the base is the equality's.
        ASSERT_TRUE(any_element_matches(b.query.lists[0], sig.data(), meta.signature_bytes));
    }
    // Both asked of the filters, the list's 300 answers in a segment's
    // first 5 mask words.
    ASSERT_EQ(b.query.filter.nkeys, 2);
    EXPECT_EQ(b.query.filter.keys[0].column, 1);
    EXPECT_EQ(b.query.filter.keys[0].nhashes, 300u);
    EXPECT_EQ(b.query.filter.keys[0].mask_word, 0u);
    EXPECT_EQ(sl.mask_word, 0u);
    EXPECT_EQ(b.query.filter.keys[1].column, 0);
    EXPECT_EQ(b.query.filter.element_words, 5u);
}

// Lists are asked in the keys' order while their mask words fit in
// kMaxFilterElementWords; one that does not fit is not asked, and a later
// one that fits still is.  A segment's answers then say which elements
// are tested there.
TEST(Query, ListsAreAskedWhileTheirMasksFit)
{
    MetaPageData meta = make_meta(256, {4, 4, 4, 4});
    auto make_list = [](uint32_t n, uint64_t seed) {
        std::vector<uint64_t> v(n);
        for (uint32_t i = 0; i < n; i++)
            v[i] = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        return v;
    };
    std::vector<uint64_t> a = make_list(64 * 40 + 1, 1), b = make_list(64 * 30, 2),
                          c = make_list(64 * 22, 3), d = make_list(2, 4);
    std::vector<QueryKey> keys = {{0, a.data(), static_cast<uint32_t>(a.size())},
                                  {1, b.data(), static_cast<uint32_t>(b.size())},
                                  {2, c.data(), static_cast<uint32_t>(c.size())},
                                  {3, d.data(), 2}};
    std::vector<double> rates(kMaxColumns, 1e-12); // every list worth testing
    Built built;
    build(meta, keys, &built, rates.data());
    for (int k = 0; k < 4; k++)
        ASSERT_EQ(built.uses[k], KeyUse::List) << k;
    // a takes 41 words, b's 30 would pass 64, c's 22 fit after a, d's 1 after c.
    EXPECT_EQ(list_mask_word(keys.data(), 4, built.uses.data(), 0), 0u);
    EXPECT_EQ(list_mask_word(keys.data(), 4, built.uses.data(), 1), kListNotAsked);
    EXPECT_EQ(list_mask_word(keys.data(), 4, built.uses.data(), 2), 41u);
    EXPECT_EQ(list_mask_word(keys.data(), 4, built.uses.data(), 3), 63u);
    EXPECT_EQ(list_mask_word(keys.data(), 4, built.uses.data(), 4), 64u);
    EXPECT_EQ(built.query.filter.element_words, 64u);
    ASSERT_EQ(built.query.filter.nkeys, 3);
    EXPECT_EQ(built.query.filter.keys[0].column, 0);
    EXPECT_EQ(built.query.filter.keys[1].column, 2);
    EXPECT_EQ(built.query.filter.keys[1].mask_word, 41u);
    EXPECT_EQ(built.query.filter.keys[2].mask_word, 63u);
    EXPECT_EQ(built.query.slices.lists[1].mask_word, kListNotAsked);
    EXPECT_EQ(built.query.slices.lists[2].mask_word, 41u);

    // A segment's mask: element e of list 2 tested only where its bit is set;
    // list 1 (not asked) always.
    std::vector<uint64_t> mask(64, 0);
    mask[41 + 1] = uint64_t{1} << 5; // element 69 of list 2
    const SliceList &l1 = built.query.slices.lists[1], &l2 = built.query.slices.lists[2];
    EXPECT_TRUE(element_may_hold(mask.data(), l2, 69));
    EXPECT_FALSE(element_may_hold(mask.data(), l2, 68));
    EXPECT_FALSE(element_may_hold(mask.data(), l2, 5));
    EXPECT_TRUE(element_may_hold(mask.data(), l1, 5));
    EXPECT_TRUE(element_may_hold(nullptr, l2, 68));
    EXPECT_EQ(elements_held(mask.data(), l2), 1u);
    EXPECT_EQ(elements_held(mask.data(), l1), l1.count);
    // A list's words count whole, and no word of another list's.
    mask[41 + 21] = ~uint64_t{0};
    EXPECT_EQ(elements_held(mask.data(), l2), 1u + 64u);
    mask[41 + 22] = ~uint64_t{0}; // list 3's word, of its 2 elements
    EXPECT_EQ(elements_held(mask.data(), l2), 1u + 64u);
    EXPECT_EQ(elements_held(mask.data(), built.query.slices.lists[3]), 2u);
    element_mark(mask.data(), 41, 68);
    EXPECT_TRUE(element_may_hold(mask.data(), l2, 68));
}

// What the scan budgets per element (list_element_bytes, against
// work_mem) covers what the query takes per element: its masks and its
// positions both, whatever the column's bits.
TEST(Query, AListTakesWhatItsElementsAreBudgeted)
{
    for (uint16_t bits : {1, 6, 64, 700, 2000}) {
        MetaPageData meta = make_meta(4096, {3, bits});
        std::vector<uint64_t> one = {1}, list(1000);
        for (size_t i = 0; i < list.size(); i++)
            list[i] = 0x9E3779B97F4A7C15ull * (i + 1);
        std::vector<QueryKey> keys = {{1, list.data(), static_cast<uint32_t>(list.size())}};
        std::vector<double> rates = no_rates();
        std::vector<KeyUse> uses(1);
        Query query;
        size_t with_list = plan_query(meta, keys.data(), 1, uses.data(), rates.data(), &query);
        ASSERT_EQ(uses[0], KeyUse::List) << bits;
        keys[0] = {0, one.data(), 1};
        size_t without = plan_query(meta, keys.data(), 1, uses.data(), rates.data(), &query);
        size_t per_element = list_element_bytes(meta, 1);
        EXPECT_GE(per_element, size_t{2} * bits) << bits; // the positions alone
        // The list's share, less the per-list arrays and alignment.
        EXPECT_LE(with_list - without, list.size() * per_element + 256) << bits;
        EXPECT_GE(with_list - without, list.size() * per_element) << bits;
    }
    EXPECT_EQ(list_element_bytes(make_meta(64, {3, 3}), 5), 0u);
}

TEST(Query, ShortListsAreAskedOfTheFilters)
{
    MetaPageData meta = make_meta(96, {5, 5});
    std::vector<uint64_t> list = {11, 22, 33};
    std::vector<uint64_t> many(kMaxFilterElements - 64);
    for (uint32_t i = 0; i < many.size(); i++)
        many[i] = 1000 + i;
    std::vector<QueryKey> keys = {{0, list.data(), 3},
                                  {1, many.data(), static_cast<uint32_t>(many.size())}};
    std::vector<double> rates = no_rates();
    rates[1] = 1e-12; // so that the many elements are worth testing
    Built b;
    build(meta, keys, &b, rates.data());
    ASSERT_EQ(b.uses[0], KeyUse::List);
    ASSERT_EQ(b.uses[1], KeyUse::List);
    ASSERT_EQ(b.query.filter.nkeys, 2);
    EXPECT_EQ(b.query.filter.keys[0].nhashes, 3u);
    EXPECT_EQ(b.query.filter.keys[1].nhashes, kMaxFilterElements - 64);
    EXPECT_EQ(b.query.filter.keys[1].mask_word, 1u);
    EXPECT_EQ(b.query.filter.element_words, kMaxFilterElementWords);
    // Each names its list, whose element e is its hash e: a segment told
    // which hashes its filters may hold tests those elements' positions.
    for (int k = 0; k < 2; k++) {
        const FilterKey &fk = b.query.filter.keys[k];
        ASSERT_EQ(fk.list, k);
        const SliceList &sl = b.query.slices.lists[fk.list];
        ASSERT_EQ(sl.count, fk.nhashes);
        for (uint32_t e = 0; e < sl.count; e++) {
            std::vector<uint8_t> sig = value_signature(meta, fk.column, fk.hashes[e]);
            std::vector<uint16_t> want = set_positions(sig, meta.signature_bits);
            ASSERT_TRUE(std::equal(want.begin(), want.end(), sl.positions + size_t{e} * sl.per_element));
        }
    }
}

// An equality's filter key names no list; a list after it names its own.
TEST(Query, FilterKeysNameTheirLists)
{
    MetaPageData meta = make_meta(96, {5, 5, 5});
    std::vector<uint64_t> eq = {7}, list = {11, 22, 33};
    std::vector<QueryKey> keys = {{0, eq.data(), 1}, {2, list.data(), 3}};
    std::vector<double> rates = no_rates();
    Built b;
    build(meta, keys, &b, rates.data());
    ASSERT_EQ(b.query.filter.nkeys, 2);
    EXPECT_EQ(b.query.filter.keys[0].list, -1);
    EXPECT_EQ(b.query.filter.keys[1].list, 0);
}

TEST(Query, ListsTooLongToPayAreLeftToTheRecheck)
{
    MetaPageData meta = make_meta(64, {3, 3});
    std::vector<uint64_t> list(200);
    for (size_t i = 0; i < list.size(); i++)
        list[i] = i * 7919 + 1;
    std::vector<QueryKey> keys = {{0, list.data(), 200}};

    // The decision follows in_list_worth_testing at the column's rate,
    // taken from the caller's cache where it has one.
    std::vector<double> rates = no_rates();
    rates[0] = 0.01; // 200 * 0.01 >= 1
    Built b;
    build(meta, keys, &b, rates.data());
    EXPECT_EQ(b.uses[0], KeyUse::TooCommon);
    EXPECT_EQ(b.query.nlists, 0);
    EXPECT_EQ(b.query.filter.nkeys, 0);
    EXPECT_EQ(b.query.slices.nbase, 0u);

    rates[0] = 0.001; // 200 * 0.001 < 1
    Built c;
    build(meta, keys, &c, rates.data());
    EXPECT_EQ(c.uses[0], KeyUse::List);

    // Without a cached rate, the model's is computed and kept.
    std::vector<double> fresh = no_rates();
    Built d;
    build(meta, keys, &d, fresh.data());
    EXPECT_DOUBLE_EQ(fresh[0], false_positive_rate(meta, 1u));
    EXPECT_EQ(d.uses[0], in_list_worth_testing(200, fresh[0]) ? KeyUse::List : KeyUse::TooCommon);
    EXPECT_LT(fresh[1], 0); // a column no list asked about stays unknown
}

TEST(Query, KeysItCannotUseTestNothing)
{
    MetaPageData meta = make_meta(64, {3, 3});
    uint64_t h = 5;
    std::vector<QueryKey> keys = {{2, &h, 1}, {-1, &h, 1}, {0, nullptr, 0}, {1, &h, 0}};
    std::vector<double> rates = no_rates();
    Built b;
    build(meta, keys, &b, rates.data());
    for (size_t k = 0; k < keys.size(); k++)
        EXPECT_EQ(b.uses[k], KeyUse::TooCommon) << k;
    EXPECT_EQ(b.query.slices.nbase, 0u);
    EXPECT_EQ(b.query.filter.nkeys, 0);
    std::vector<uint8_t> zero(meta.signature_bytes, 0);
    EXPECT_TRUE(b.query.base.matches(zero.data())); // every row a candidate
}

TEST(Query, InterruptedBuildsEndAsUninterruptedOnes)
{
    MetaPageData meta = make_meta(256, {7, 4, 9});
    std::mt19937_64 rng(11);
    std::vector<std::vector<uint64_t>> lists = {std::vector<uint64_t>(kQueryElementsPerCheck * 2 + 17),
                                                std::vector<uint64_t>(3),
                                                std::vector<uint64_t>(kQueryElementsPerCheck + 1)};
    for (auto &l : lists)
        for (auto &x : l)
            x = rng();
    uint64_t eq = rng();
    std::vector<QueryKey> keys = {{0, lists[0].data(), static_cast<uint32_t>(lists[0].size())},
                                  {1, &eq, 1},
                                  {2, lists[1].data(), 3},
                                  {1, lists[2].data(), static_cast<uint32_t>(lists[2].size())}};
    std::vector<double> rates(kMaxColumns, 1e-9);
    Built plain;
    build(meta, keys, &plain, rates.data());
    ASSERT_EQ(plain.calls, 1);
    for (int every : {1, 2, 3}) {
        Built cut;
        build(meta, keys, &cut, rates.data(), every);
        EXPECT_GT(cut.calls, 1) << every;
        ASSERT_EQ(cut.memory.size(), plain.memory.size());
        // Same masks and positions (pointers differ: other memory).
        const uint8_t *a = reinterpret_cast<const uint8_t *>(plain.memory.data());
        const uint8_t *c = reinterpret_cast<const uint8_t *>(cut.memory.data());
        size_t arrays = reinterpret_cast<const uint8_t *>(plain.query.lists[0].masks) - a;
        EXPECT_EQ(std::memcmp(a + arrays, c + arrays, plain.memory.size() * 8 - arrays), 0) << every;
        EXPECT_EQ(cut.query.nlists, plain.query.nlists);
        EXPECT_EQ(cut.query.elements, plain.query.elements);
        EXPECT_EQ(cut.query.filter.nkeys, plain.query.filter.nkeys);
        ASSERT_EQ(cut.query.slices.nbase, plain.query.slices.nbase);
        EXPECT_TRUE(std::equal(plain.query.slices.base, plain.query.slices.base + plain.query.slices.nbase,
                               cut.query.slices.base));
    }
}

// The promise: a row that holds a value of every key is never dropped,
// by the masks (pending rows) or by the positions (sealed rows); and rows
// that hold none are mostly dropped.
TEST(Query, NoRowHoldingTheKeysIsLost)
{
    std::mt19937_64 rng(2026);
    for (int round = 0; round < 200; round++) {
        int ncols = 1 + static_cast<int>(rng() % 6);
        uint16_t length = static_cast<uint16_t>(16 * (1 + rng() % 24));
        std::vector<uint16_t> bits(ncols);
        for (auto &b : bits)
            b = static_cast<uint16_t>(1 + rng() % std::min<uint32_t>(length / 2, 9));
        MetaPageData meta = make_meta(length, bits);

        // Keys on a random subset of columns: an equality or a list.
        std::vector<std::vector<uint64_t>> values(ncols);
        std::vector<QueryKey> keys;
        for (int c = 0; c < ncols; c++) {
            if (rng() % 3 == 0)
                continue;
            size_t n = rng() % 2 ? 1 : 2 + rng() % 40;
            values[c].resize(n);
            for (auto &x : values[c])
                x = rng();
            keys.push_back(QueryKey{c, values[c].data(), static_cast<uint32_t>(n)});
        }
        std::vector<double> rates = no_rates();
        Built b;
        build(meta, keys, &b, rates.data(), round % 2 ? 1 : 0);

        int dropped = 0;
        for (int r = 0; r < 200; r++) {
            std::vector<uint64_t> row(ncols);
            bool matches = true;
            for (int c = 0; c < ncols; c++) {
                if (!values[c].empty() && rng() % 4 != 0)
                    row[c] = values[c][rng() % values[c].size()];
                else {
                    row[c] = rng();
                    matches = matches && values[c].empty();
                }
            }
            std::vector<uint8_t> sig = row_signature(meta, row);
            bool by_masks = masks_keep(b.query, sig);
            bool by_slices = slices_keep(b.query.slices, sig);
            if (matches) {
                ASSERT_TRUE(by_masks) << "round " << round << " row " << r;
                ASSERT_TRUE(by_slices) << "round " << round << " row " << r;
            }
            // Both forms test the same bits.
            ASSERT_EQ(by_masks, by_slices) << "round " << round << " row " << r;
            dropped += !by_masks;
        }
        bool tested = std::any_of(b.uses.begin(), b.uses.begin() + keys.size(),
                                  [](KeyUse u) { return u != KeyUse::TooCommon; });
        if (tested && length >= 128) {
            EXPECT_GT(dropped, 0) << "round " << round;
        }
    }
}
