// A scan's query from its keys (query.hpp).
#include "query.hpp"

#include <cstring>

#include "page_layout.hpp"
#include "positions.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

constexpr size_t align8(size_t n)
{
    return (n + 7) / 8 * 8;
}

// Where build_query's pieces lie in the caller's memory: the lists' masks
// and positions follow three arrays, each 8-byte aligned.
struct Layout {
    ElementMasks *lists;
    SliceList *slice_lists;
    FilterKey *filter_keys;
    uint8_t *data; // per List key: its masks, then its positions
};

int list_count(const KeyUse *uses, int nkeys)
{
    int n = 0;
    for (int k = 0; k < nkeys; k++)
        if (uses[k] == KeyUse::List)
            n++;
    return n;
}

size_t arrays_bytes(int nlists, int nkeys)
{
    return align8(sizeof(ElementMasks) * static_cast<size_t>(nlists)) +
           align8(sizeof(SliceList) * static_cast<size_t>(nlists)) +
           align8(sizeof(FilterKey) * static_cast<size_t>(nkeys));
}

Layout layout_of(void *memory, int nlists, int nkeys)
{
    uint8_t *p = static_cast<uint8_t *>(memory);
    Layout l;
    l.lists = reinterpret_cast<ElementMasks *>(p);
    p += align8(sizeof(ElementMasks) * static_cast<size_t>(nlists));
    l.slice_lists = reinterpret_cast<SliceList *>(p);
    p += align8(sizeof(SliceList) * static_cast<size_t>(nlists));
    l.filter_keys = reinterpret_cast<FilterKey *>(p);
    p += align8(sizeof(FilterKey) * static_cast<size_t>(nkeys));
    l.data = p;
    return l;
}

uint32_t mask_words(const MetaPageData &meta, int column)
{
    return element_mask_words(meta.signature_bytes, meta.column_bits[column]);
}

// Bytes of a List key's masks and of its positions.
size_t masks_bytes(const MetaPageData &meta, const QueryKey &key)
{
    return align8(element_mask_stride(mask_words(meta, key.column)) * key.nhashes);
}

size_t positions_bytes(const MetaPageData &meta, const QueryKey &key)
{
    return align8(sizeof(uint16_t) * meta.column_bits[key.column] * size_t{key.nhashes});
}

// Writes the positions of the bits set in sig (length bits); returns how many.
uint32_t signature_positions(const uint8_t *sig, uint32_t length, uint16_t *positions)
{
    uint32_t n = 0;
    for (uint32_t j = 0; j < length; j++)
        if (signature_test_bit(sig, j))
            positions[n++] = static_cast<uint16_t>(j);
    return n;
}

} // namespace

size_t list_element_bytes(const MetaPageData &meta, int column) noexcept
{
    if (column < 0 || column >= meta.ncolumns || column >= kMaxColumns)
        return 0;
    return element_mask_stride(mask_words(meta, column)) +
           sizeof(uint16_t) * meta.column_bits[column];
}

size_t plan_query(const MetaPageData &meta, const QueryKey *keys, int nkeys, KeyUse *uses,
                  double *column_rates, Query *query) noexcept
{
    size_t bytes = 0;
    for (int k = 0; k < nkeys; k++) {
        const QueryKey &key = keys[k];
        if (key.column < 0 || key.column >= meta.ncolumns || key.column >= kMaxColumns ||
            key.nhashes == 0 || key.hashes == nullptr) {
            uses[k] = KeyUse::TooCommon;
            continue;
        }
        if (key.nhashes == 1) {
            uses[k] = KeyUse::Bits;
            continue;
        }
        double &rate = column_rates[key.column];
        if (rate < 0)
            rate = false_positive_rate(meta, 1u << key.column);
        if (!in_list_worth_testing(key.nhashes, rate)) {
            // Nearly every row would pass some element: testing them all is wasted.
            uses[k] = KeyUse::TooCommon;
            continue;
        }
        uses[k] = KeyUse::List;
        bytes += masks_bytes(meta, key) + positions_bytes(meta, key);
    }
    std::memset(query->signature, 0, sizeof query->signature);
    query->next_key = 0;
    query->next_element = 0;
    return bytes + arrays_bytes(list_count(uses, nkeys), nkeys);
}

uint32_t list_mask_word(const QueryKey *keys, int nkeys, const KeyUse *uses, int k) noexcept
{
    uint32_t words = 0;
    for (int i = 0; i < nkeys && i <= k; i++) {
        if (uses[i] != KeyUse::List)
            continue;
        const uint32_t need = list_mask_words(keys[i].nhashes);
        if (words + need > kMaxFilterElementWords) {
            if (i == k)
                return kListNotAsked;
            continue;
        }
        if (i == k)
            return words;
        words += need;
    }
    return k >= nkeys ? words : kListNotAsked;
}

uint32_t elements_held(const uint64_t *elements, const SliceList &list) noexcept
{
    if (elements == nullptr || list.mask_word == kListNotAsked)
        return list.count;
    const uint64_t *words = elements + list.mask_word;
    const uint32_t full = list.count / 64;
    uint32_t n = 0;
    for (uint32_t w = 0; w < full; w++)
        n += static_cast<uint32_t>(__builtin_popcountll(words[w]));
    // The last word's bits past the list's elements are not its answers.
    if (list.count % 64 != 0)
        n += static_cast<uint32_t>(
            __builtin_popcountll(words[full] & ((uint64_t{1} << (list.count % 64)) - 1)));
    return n;
}

bool build_query(const MetaPageData &meta, const QueryKey *keys, int nkeys, const KeyUse *uses,
                 void *memory, Query *query, Interrupted interrupted, void *arg) noexcept
{
    const int nlists = list_count(uses, nkeys);
    const Layout l = layout_of(memory, nlists, nkeys);
    const uint32_t length = meta.signature_bits;
    const int nbytes = meta.signature_bytes;

    // The filter keys, in the keys' order: every key tested, but for lists
    // too long to ask (cheap: made again on every call).
    int nfilter = 0;
    for (int k = 0, lists_before = 0; k < nkeys; k++) {
        const bool is_list = uses[k] == KeyUse::List;
        const uint32_t mask_word = is_list ? list_mask_word(keys, nkeys, uses, k) : kListNotAsked;
        lists_before += is_list;
        if (uses[k] == KeyUse::TooCommon || (is_list && mask_word == kListNotAsked))
            continue;
        l.filter_keys[nfilter++] = FilterKey{keys[k].column, keys[k].nhashes, keys[k].hashes,
                                             is_list ? lists_before - 1 : -1, mask_word};
    }

    // The keys, from where the last call stopped.
    uint8_t *data = l.data;
    int list = 0;
    for (int k = 0; k < nkeys; k++) {
        const QueryKey &key = keys[k];
        const bool is_list = uses[k] == KeyUse::List;
        uint8_t *masks = data;
        uint16_t *positions = nullptr;
        if (is_list) {
            positions = reinterpret_cast<uint16_t *>(data + masks_bytes(meta, key));
            data += masks_bytes(meta, key) + positions_bytes(meta, key);
        }
        if (k < query->next_key) {
            list += is_list;
            continue;
        }
        if (uses[k] == KeyUse::Bits) {
            add_value(query->signature, length, meta.column_bits[key.column], key.hashes[0]);
        } else if (is_list) {
            const uint32_t words = mask_words(meta, key.column);
            const uint32_t bits = meta.column_bits[key.column];
            const size_t stride = element_mask_stride(words);
            uint8_t sig[kMaxSignatureBytes];

            while (query->next_element < key.nhashes) {
                uint32_t first = query->next_element;
                uint32_t n = key.nhashes - first < kQueryElementsPerCheck
                                 ? key.nhashes - first : kQueryElementsPerCheck;
                build_element_masks(masks + stride * first, words, key.hashes + first, n, length,
                                    bits, nbytes);
                for (uint32_t e = first; e < first + n; e++) {
                    std::memset(sig, 0, static_cast<size_t>(nbytes));
                    add_value(sig, length, bits, key.hashes[e]);
                    signature_positions(sig, length, positions + size_t{e} * bits);
                }
                query->next_element = first + n;
                if (query->next_element < key.nhashes && interrupted && interrupted(arg))
                    return false;
            }
            l.lists[list] = ElementMasks{masks, key.nhashes, words};
            l.slice_lists[list] =
                SliceList{positions, key.nhashes, bits, list_mask_word(keys, nkeys, uses, k)};
            list++;
        }
        query->next_key = k + 1;
        query->next_element = 0;
        if (is_list && k + 1 < nkeys && interrupted && interrupted(arg))
            return false;
    }

    query->base.build(query->signature, nbytes);
    query->lists = l.lists;
    query->nlists = nlists;
    query->elements = 0;
    for (int i = 0; i < nlists; i++)
        query->elements += l.lists[i].count;
    query->slices.nbase = signature_positions(query->signature, length, query->slices.base);
    query->slices.lists = l.slice_lists;
    query->slices.nlists = nlists;
    query->filter.keys = l.filter_keys;
    query->filter.nkeys = nfilter;
    query->filter.element_words = list_mask_word(keys, nkeys, uses, nkeys);
    return true;
}

} // namespace bloomidx
