// A scan's query, built in one place from (column, hashes) keys.
//
// The glue turns PostgreSQL's scan keys into keys of this kind (a column
// and the distinct hashes of the values a matching row may hold there: one
// for an equality or IS NULL, an IN list's distinct elements) and hands
// them over; everything a scan then tests is made here, in one call:
//  - the base mask: the bits of every one-value key, which a row must hold
//    all of (pending pages test it row by row);
//  - per IN list worth testing, one mask per element, of which a row must
//    hold one (in_list.hpp);
//  - the same query as bit positions, for the slices of sealed segments
//    (SliceQuery);
//  - the keys asked of the segment filters before any slice is read
//    (FilterQuery).
// An IN list so long that most rows would pass one of its elements is not
// tested at all (in_list_worth_testing): the recheck decides.
//
// The core allocates nothing: plan_query says how many bytes the query
// needs, the caller provides them, and build_query fills them in.  A list
// of millions of elements takes a while, so build_query asks the caller's
// Interrupted check every kQueryElementsPerCheck elements and, when told to
// stop, returns false with its place kept: called again with the same
// arguments, it goes on from there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "in_list.hpp"
#include "signature.hpp"
#include "sizing.hpp"

namespace bloomidx {

struct MetaPageData; // page_layout.hpp

// A key of the query: `column` (0-based) holds one of hashes[0..nhashes),
// which are distinct (nhashes >= 1).
struct QueryKey {
    int column;
    const uint64_t *hashes;
    uint32_t nhashes;
};

// What plan_query made of a key.
enum class KeyUse : uint8_t {
    Bits,     // one value: its bits are in the base mask
    List,     // an IN list whose elements are tested one by one
    TooCommon // an IN list so long that most rows pass one element: not tested
};

// IN lists are asked of the segment filters element by element, and each
// segment is told which of a list's elements its filters may hold: a bit
// an element in the segment's element mask, a list taking whole 64-bit
// words of it.  Asking costs an element a region page a filter group;
// not asking costs it its slices in every segment its other keys let
// through (over 150 segments on 10 M rows, each element held in about 14
// of them): so every list is asked, in the keys' order, while the
// segment's mask words stay within kMaxFilterElementWords (4,096 elements
// in all), which bounds the masks a scan keeps at 512 bytes a segment
// (16 MB at the format's 32,228 segments).  A list past that tests every
// element wherever its other keys pass.
constexpr uint32_t kMaxFilterElementWords = 64;
constexpr uint32_t kMaxFilterElements = 64 * kMaxFilterElementWords;
// A list not asked of the filters (its mask_word).
constexpr uint32_t kListNotAsked = UINT32_MAX;
// The words a list of `elements` elements takes in a segment's element mask.
constexpr uint32_t list_mask_words(uint32_t elements)
{
    return elements / 64 + (elements % 64 != 0);
}

// Elements of IN lists built between two Interrupted checks.
constexpr uint32_t kQueryElementsPerCheck = 4096;

// One IN list as bit positions: each element's `per_element` positions
// (its column's bits), back to back.
struct SliceList {
    const uint16_t *positions;
    uint32_t count; // elements
    uint32_t per_element;
    uint32_t mask_word; // its first word in a segment's element mask; kListNotAsked
};

// The query as bit positions, for a segment's slices: every base position,
// and one element of each list.
struct SliceQuery {
    uint16_t base[kMaxSignatureBits];
    uint32_t nbase;
    const SliceList *lists;
    int nlists;
};

// A key asked of the segment filters: a segment passes it when its filter
// may hold one of the hashes.  For an IN list (`list`: its index among the
// query's lists, else -1), hashes[e] is the list's element e: a segment
// whose filters rule an element out need not test that element's slices.
struct FilterKey {
    int column;
    uint32_t nhashes;
    const uint64_t *hashes;
    int list;
    uint32_t mask_word; // a list's first word in a segment's element mask
};

// The keys asked of the filters, in the order of the query's keys, and
// the words of a segment's element mask (its lists' answers).
struct FilterQuery {
    const FilterKey *keys;
    int nkeys;
    uint32_t element_words;
};

// Whether bit e of a list's answers in a segment's element mask
// (`elements`, nullptr: not asked) is set: element e may be held there.
inline bool element_may_hold(const uint64_t *elements, const SliceList &list, uint32_t e) noexcept
{
    return elements == nullptr || list.mask_word == kListNotAsked ||
           ((elements[list.mask_word + e / 64] >> (e % 64)) & 1) != 0;
}
// Sets bit e of the list whose answers start at mask_word of a segment's
// element mask `elements`.
inline void element_mark(uint64_t *elements, uint32_t mask_word, uint32_t e) noexcept
{
    elements[mask_word + e / 64] |= uint64_t{1} << (e % 64);
}
// How many of a list's elements element_may_hold says yes to.
uint32_t elements_held(const uint64_t *elements, const SliceList &list) noexcept;

// Everything a scan tests.  Plain data; what it points to lies in the
// memory the caller gave build_query, and in the keys' hashes.
struct Query {
    SignatureMask base;
    const ElementMasks *lists; // nlists of them
    int nlists;
    double elements;           // in those lists
    SliceQuery slices;
    FilterQuery filter;

    // build_query's place, kept when it is interrupted.
    uint8_t signature[kMaxSignatureBytes]; // the base keys' bits
    int next_key;
    uint32_t next_element;
};

// The bytes one distinct element of an IN list on `column` takes in the
// query: its mask and its slice positions.  What work_mem must hold per
// element (the scan's hash set is sized by it), so that a list's whole
// query stays within work_mem, not only its masks.
size_t list_element_bytes(const MetaPageData &meta, int column) noexcept;

// Decides what each of the nkeys keys becomes (uses[k]), readies *query
// for build_query and returns the bytes build_query needs.  The column
// rates it needs (a column's one-value false-positive rate, sizing.hpp)
// are taken from column_rates[column] where that is not negative, else
// computed and stored there: the caller may keep them from query to query
// (kMaxColumns of them, -1 at first).  A key on a column the index does
// not have, or with no hash, is not tested (TooCommon): no row is lost.
size_t plan_query(const MetaPageData &meta, const QueryKey *keys, int nkeys, KeyUse *uses,
                  double *column_rates, Query *query) noexcept;

// Builds the query planned by plan_query (same meta, keys and uses) in
// `memory` (the bytes plan_query asked for, 8-byte aligned).  Asks
// interrupted(arg) (if not null) every kQueryElementsPerCheck list
// elements: when it says stop, returns false, its place kept in *query;
// call again with the same arguments to go on.  True when built.
bool build_query(const MetaPageData &meta, const QueryKey *keys, int nkeys, const KeyUse *uses,
                 void *memory, Query *query, Interrupted interrupted = nullptr,
                 void *arg = nullptr) noexcept;

// Where key k's answers lie in a segment's element mask when it is a list
// asked of the filters (kMaxFilterElementWords), else kListNotAsked; with
// k = nkeys, the words of the mask.  build_query asks exactly these.
uint32_t list_mask_word(const QueryKey *keys, int nkeys, const KeyUse *uses, int k) noexcept;

} // namespace bloomidx
