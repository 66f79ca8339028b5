// Unit tests of src/core/in_list.hpp: element masks sized by the
// signature, the any-element test against a bit-by-bit reference, the
// hash set that drops repeated elements within a fixed table, its sizing
// under a memory budget, and the whole query test (base mask and lists).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "core/in_list.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"
#include "reference.hpp"

using namespace bloomidx;

namespace {

const int kLengths[] = {1, 16, 17, 48, 63, 64, 65, 80, 96, 100, 127, 128, 250, 1000, 4096};

bool reference_matches(const uint8_t *sig, const uint8_t *q, int nbytes)
{
    return reference::matches(sig, q, nbytes);
}

// The query signature of one element.
std::vector<uint8_t> element_query(uint32_t m, uint32_t bits, uint64_t hash)
{
    std::vector<uint8_t> q(signature_bytes(static_cast<int>(m)), 0);
    add_value(q.data(), m, bits, hash);
    return q;
}

// Masks of hashes in a buffer with guard bytes after it.
struct Masks {
    std::vector<uint64_t> storage; // 8-byte aligned, as palloc's
    uint32_t words;
    size_t bytes;
    ElementMasks list;

    Masks(const std::vector<uint64_t> &hashes, uint32_t m, uint32_t bits)
    {
        int nbytes = signature_bytes(static_cast<int>(m));
        words = element_mask_words(nbytes, bits);
        bytes = element_mask_stride(words) * hashes.size();
        storage.assign(bytes / 8 + 4, 0xA5A5A5A5A5A5A5A5ULL);
        build_element_masks(reinterpret_cast<uint8_t *>(storage.data()), words, hashes.data(),
                            hashes.size(), m, bits, nbytes);
        list = ElementMasks{reinterpret_cast<const uint8_t *>(storage.data()),
                            static_cast<uint32_t>(hashes.size()), words};
    }
};

uint32_t bits_for(uint32_t m, std::mt19937_64 &rng)
{
    return 1 + static_cast<uint32_t>(rng() % (m < 12 ? m : 12));
}

} // namespace

TEST(SignatureMask, TestsEachQueryBitInOneWord)
{
    // The last word may overlap the one before it; its overlapping bytes
    // are left to that word, so an element of `bits` bits needs at most
    // `bits` words, whatever the length.
    std::mt19937_64 rng(21);
    for (int m = 1; m <= kMaxSignatureBits; m += (m < 300 ? 1 : 37)) {
        int nbytes = signature_bytes(m);
        for (int trial = 0; trial < 20; trial++) {
            uint32_t bits = bits_for(static_cast<uint32_t>(m), rng);
            std::vector<uint8_t> q = element_query(static_cast<uint32_t>(m), bits, rng());
            SignatureMask mask;
            mask.build(q.data(), nbytes);
            int popcount = 0;
            for (int i = 0; i < mask.words(); i++)
                popcount += __builtin_popcountll(mask.word(i));
            ASSERT_EQ(popcount, static_cast<int>(bits)) << "m " << m;
            ASSERT_LE(static_cast<uint32_t>(mask.words()), element_mask_words(nbytes, bits));
        }
    }
}

TEST(ElementMasks, SizedByTheSignatureNotTheLongest)
{
    // The old per-element SignatureMask took 664 bytes whatever the length.
    EXPECT_EQ(element_mask_words(2, 5), 1u);
    EXPECT_EQ(element_mask_words(8, 9), 1u);
    EXPECT_EQ(element_mask_words(10, 7), 2u);
    EXPECT_EQ(element_mask_words(512, 10), 10u);
    EXPECT_EQ(element_mask_words(512, 4096), 64u);
    EXPECT_EQ(element_mask_stride(1), 16u);
    EXPECT_EQ(element_mask_stride(2), 24u);
    EXPECT_EQ(element_mask_stride(10), 104u);
    for (uint32_t w = 1; w <= 64; w++) {
        EXPECT_EQ(element_mask_stride(w) % 8, 0u);
        EXPECT_GE(element_mask_stride(w), 10 * w + 2);
        EXPECT_LT(element_mask_stride(w), 10 * w + 2 + 8);
    }
}

TEST(ElementMasks, AgreeWithBitByBitReference)
{
    // Random lists against signatures holding one element (must match),
    // random signatures of every density, and signatures one bit short of
    // an element; every answer checked against the element queries bit by
    // bit.  Nothing is written past the masks.
    std::mt19937_64 rng(22);
    long outcomes[2] = {0, 0};
    for (int m : kLengths) {
        uint32_t um = static_cast<uint32_t>(m);
        int nbytes = signature_bytes(m);
        for (int trial = 0; trial < 60; trial++) {
            uint32_t bits = bits_for(um, rng);
            std::vector<uint64_t> hashes(1 + rng() % 12);
            for (uint64_t &h : hashes)
                h = rng();
            Masks masks(hashes, um, bits);
            const uint8_t *end = reinterpret_cast<const uint8_t *>(masks.storage.data()) + masks.bytes;
            for (size_t i = 0; i < 16; i++)
                ASSERT_EQ(end[i], 0xA5) << "m " << m << ": written past the masks";

            std::vector<std::vector<uint8_t>> queries;
            for (uint64_t h : hashes)
                queries.push_back(element_query(um, bits, h));
            for (int s = 0; s < 40; s++) {
                std::vector<uint8_t> sig(nbytes, 0);
                double density = (s % 8) / 8.0;
                for (int pos = 0; pos < m; pos++)
                    if (std::bernoulli_distribution(density)(rng))
                        signature_set_bit(sig.data(), static_cast<uint32_t>(pos));
                if (s % 4 == 1) // holds one element
                    add_value(sig.data(), um, bits, hashes[rng() % hashes.size()]);
                if (s % 4 == 2) { // one bit short of an element
                    const std::vector<uint8_t> &q = queries[rng() % queries.size()];
                    for (int b = 0; b < nbytes; b++)
                        sig[b] |= q[b];
                    for (int pos = 0; pos < m; pos++)
                        if (signature_test_bit(q.data(), static_cast<uint32_t>(pos))) {
                            sig[pos / 8] = static_cast<uint8_t>(sig[pos / 8] & ~(1u << (pos % 8)));
                            break;
                        }
                }
                bool ref = false;
                for (const std::vector<uint8_t> &q : queries)
                    ref = ref || reference_matches(sig.data(), q.data(), nbytes);
                ASSERT_EQ(any_element_matches(masks.list, sig.data(), nbytes), ref)
                    << "m " << m << " bits " << bits << " s " << s;
                if (s % 4 == 1) {
                    ASSERT_TRUE(ref);
                }
                outcomes[ref]++;
            }
        }
    }
    EXPECT_GT(outcomes[0], 5000);
    EXPECT_GT(outcomes[1], 5000);
}

TEST(ElementMasks, EmptyListMatchesNothingAndReadsNoBytePastTheSignature)
{
    std::mt19937_64 rng(23);
    for (int m : kLengths) {
        int nbytes = signature_bytes(m);
        std::vector<uint8_t> exact(nbytes, 0xFF); // on the heap: a sanitizer sees over-reads
        ElementMasks none{nullptr, 0, element_mask_words(nbytes, 1)};
        EXPECT_FALSE(any_element_matches(none, exact.data(), nbytes));
        std::vector<uint64_t> hashes = {rng(), rng()};
        Masks masks(hashes, static_cast<uint32_t>(m), 1);
        EXPECT_TRUE(any_element_matches(masks.list, exact.data(), nbytes)) << "m " << m;
    }
}

TEST(HashSet, KeepsEachHashOnce)
{
    std::mt19937_64 rng(24);
    for (size_t n : {0, 1, 2, 7, 100, 5000}) {
        std::vector<uint64_t> distinct(n);
        for (uint64_t &h : distinct)
            h = rng();
        if (n > 3)
            distinct[3] = 0; // 0 marks a free slot: it must still count
        std::vector<uint64_t> list;
        for (int copies = 0; copies < 3; copies++)
            list.insert(list.end(), distinct.begin(), distinct.end());
        std::shuffle(list.begin(), list.end(), rng);

        size_t slots = hash_set_slots(list.size(), 16, 1 << 30);
        std::vector<uint64_t> table(slots);
        HashSet set;
        set.init(table.data(), slots);
        for (uint64_t h : list)
            ASSERT_TRUE(set.insert(h));
        ASSERT_EQ(set.size(), n);
        size_t kept = set.compact();
        ASSERT_EQ(kept, n);
        std::vector<uint64_t> got(table.begin(), table.begin() + static_cast<long>(kept));
        std::sort(got.begin(), got.end());
        std::sort(distinct.begin(), distinct.end());
        ASSERT_EQ(got, distinct) << "n " << n;
    }
}

TEST(HashSet, RefusesNewHashesWhenFullAndAlwaysEnds)
{
    std::mt19937_64 rng(25);
    for (size_t slots = 0; slots <= 40; slots++) {
        std::vector<uint64_t> table(slots + 1, 0);
        table[slots] = 0x5A5A; // guard
        HashSet set;
        set.init(table.data(), slots);
        size_t capacity = HashSet::capacity(slots);
        ASSERT_LT(capacity, slots + (slots == 0));
        std::vector<uint64_t> added;
        for (size_t i = 0; i < capacity; i++) {
            added.push_back(i == 1 ? 0 : rng() | 1);
            ASSERT_TRUE(set.insert(added.back()));
        }
        ASSERT_EQ(set.size(), capacity);
        ASSERT_FALSE(set.insert(rng() | 1)) << "slots " << slots;
        if (capacity < 2) {
            ASSERT_FALSE(set.insert(0)) << "slots " << slots;
        }
        for (uint64_t h : added)
            ASSERT_TRUE(set.insert(h)); // present: no room needed
        ASSERT_EQ(set.size(), capacity);
        ASSERT_EQ(set.compact(), capacity);
        ASSERT_EQ(table[slots], 0x5A5Au);
    }
}

TEST(HashSet, SlotsFitTheBudgetWithTheMasks)
{
    for (size_t stride : {16, 24, 104, 648})
        for (size_t budget : {0, 100, 64 * 1024, 4 * 1024 * 1024, 999999}) {
            for (size_t items : {1, 10, 1000, 100000, 3000000}) {
                size_t slots = hash_set_slots(items, stride, budget);
                size_t capacity = HashSet::capacity(slots);
                // The table and the masks of a full set fit in the budget.
                ASSERT_LE(slots * 8 + capacity * stride, budget)
                    << "stride " << stride << " budget " << budget << " items " << items;
                // Room for every item when the budget allows it.
                if ((items * 4 / 3 + 2) * (8 + stride) <= budget) {
                    ASSERT_GE(capacity, items) << "stride " << stride << " budget " << budget;
                }
                // No bigger than the list needs.
                ASSERT_LE(slots, items * 4 / 3 + 2);
            }
        }
    // 2 million elements of an 80-bit signature in 4 MB: about 160 thousand.
    size_t slots = hash_set_slots(2000000, element_mask_stride(2), 4 << 20);
    EXPECT_GT(HashSet::capacity(slots), 100000u);
    EXPECT_LT(HashSet::capacity(slots), 200000u);
}

TEST(QueryMatcher, BaseAndEveryListAgreeWithReference)
{
    // Up to three lists on different columns of a 4-column signature, with
    // and without equalities; match_array against the reference: the
    // base's bits, and for each list one element's bits.
    std::mt19937_64 rng(26);
    for (int m : {16, 64, 80, 96, 250, 1000}) {
        uint32_t um = static_cast<uint32_t>(m);
        int nbytes = signature_bytes(m);
        const int count = 1020;
        for (int trial = 0; trial < 20; trial++) {
            uint32_t bits = bits_for(um, rng) / 2 + 1;
            // Rows: four columns, values from a small domain so lists hit.
            std::vector<uint8_t> sigs(static_cast<size_t>(count) * nbytes, 0);
            for (int i = 0; i < count; i++)
                for (int c = 0; c < 4; c++)
                    add_value(&sigs[static_cast<size_t>(i) * nbytes], um, bits,
                              rng() % 20 + 1000 * static_cast<uint64_t>(c));
            std::vector<uint8_t> base_q(nbytes, 0);
            bool with_base = trial % 2;
            if (with_base)
                add_value(base_q.data(), um, bits, rng() % 20);
            SignatureMask base;
            base.build(base_q.data(), nbytes);

            int nlists = static_cast<int>(rng() % 4);
            std::vector<Masks *> masks;
            std::vector<ElementMasks> lists;
            std::vector<std::vector<std::vector<uint8_t>>> queries(nlists);
            for (int l = 0; l < nlists; l++) {
                std::vector<uint64_t> hashes(2 + rng() % 5);
                for (uint64_t &h : hashes) {
                    h = rng() % 20 + 1000 * static_cast<uint64_t>(l + 1);
                    queries[l].push_back(element_query(um, bits, h));
                }
                masks.push_back(new Masks(hashes, um, bits));
                lists.push_back(masks.back()->list);
            }
            QueryMatcher matcher(base, lists.data(), nlists);
            std::vector<uint16_t> out(count, 0xFFFF);
            int n = matcher.match_array(sigs.data(), count, out.data());
            std::vector<uint16_t> expect;
            for (int i = 0; i < count; i++) {
                const uint8_t *sig = &sigs[static_cast<size_t>(i) * nbytes];
                bool ok = reference_matches(sig, base_q.data(), nbytes);
                for (int l = 0; ok && l < nlists; l++) {
                    bool any = false;
                    for (const std::vector<uint8_t> &q : queries[l])
                        any = any || reference_matches(sig, q.data(), nbytes);
                    ok = any;
                }
                if (ok)
                    expect.push_back(static_cast<uint16_t>(i));
            }
            ASSERT_EQ(std::vector<uint16_t>(out.begin(), out.begin() + n), expect)
                << "m " << m << " lists " << nlists << " base " << with_base;
            for (Masks *p : masks)
                delete p;
        }
    }
}
