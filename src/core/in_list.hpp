// IN lists (col = ANY (array)): a signature matches a list when it holds
// every bit of at least one element.  OR-ing the elements into one mask
// would be wrong (a row could hold half the bits of one element and half of
// another), so each element is tested on its own.
//
// Lists may be huge, so nothing here is sized by the longest signature: an
// element sets only its column's `bits` bits, so its mask has at most that
// many non-zero words, and is stored in element_mask_stride() bytes of a
// buffer the caller provides.  Equal hashes give equal masks: a list is first
// reduced to its distinct hashes (HashSet, over a table the caller provides),
// as it is read.  The core allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "signature.hpp"

namespace bloomidx {

// Words the mask of an element may need, for a column whose values set
// `bits` bits of a signature of nbytes bytes (SignatureMask tests each bit
// in exactly one word).
constexpr uint32_t element_mask_words(int nbytes, uint32_t bits)
{
    return bits < 1 ? 1
         : bits < static_cast<uint32_t>(signature_words(nbytes)) ? bits
         : static_cast<uint32_t>(signature_words(nbytes));
}

// Bytes one mask of `words` words takes: the words, then their offsets in
// the signature (16 bits each), then how many are used (16 bits), rounded
// up to 8 so that the next mask's words stay aligned.
constexpr size_t element_mask_stride(uint32_t words)
{
    return (10 * static_cast<size_t>(words) + 2 + 7) / 8 * 8;
}

// Whether an IN list of `distinct` elements on a column whose one-value
// false-positive rate is column_rate excludes rows worth the test of every
// element on every signature: at distinct * column_rate >= 1 most rows
// pass one element anyway, and the list is better left to the recheck.
constexpr bool in_list_worth_testing(double distinct, double column_rate)
{
    return distinct * column_rate < 1.0;
}

// The masks of one IN list's distinct elements.
struct ElementMasks {
    const uint8_t *masks; // count masks of element_mask_stride(words) bytes
    uint32_t count;
    uint32_t words;
};

// Writes to masks (room for count masks of `words` words) the masks of the
// values hashed to hashes[0..count), in an index column whose values set
// `bits` of `length` bits of signatures of nbytes bytes; words is
// element_mask_words(nbytes, bits).
void build_element_masks(uint8_t *masks, uint32_t words, const uint64_t *hashes, size_t count,
                         uint32_t length, uint32_t bits, int nbytes) noexcept;

namespace detail {

inline uint16_t load_u16(const uint8_t *p) noexcept
{
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

} // namespace detail

// True when sig, a signature of nbytes bytes, holds every bit of one of the
// list's masks.  The scan's inner loop with IN lists: most elements fail on
// their first (fullest) word, so that word is tested without looking at
// the mask's word count first (a mask with no words has a first word of 0,
// which every signature holds).
inline bool any_element_matches(const ElementMasks &list, const uint8_t *sig, int nbytes) noexcept
{
    const size_t stride = element_mask_stride(list.words);
    const size_t offsets = 8 * static_cast<size_t>(list.words);
    const size_t used = 10 * static_cast<size_t>(list.words);
    const uint8_t *mask = list.masks;
    const uint8_t *const end = mask + stride * list.count;

    if (nbytes <= 8) {
        // One word, at offset 0.
        uint64_t s = 0;
        switch (nbytes) { // a constant size: no call to memcpy per signature
        case 8: std::memcpy(&s, sig, 8); break;
        case 6: std::memcpy(&s, sig, 6); break;
        case 4: std::memcpy(&s, sig, 4); break;
        default: std::memcpy(&s, sig, static_cast<size_t>(nbytes)); break;
        }
        for (; mask < end; mask += stride) {
            const uint64_t w = load_u64(mask);
            if ((s & w) == w)
                return true;
        }
        return false;
    }
    for (; mask < end; mask += stride) {
        const uint64_t w0 = load_u64(mask);
        if ((load_u64(sig + detail::load_u16(mask + offsets)) & w0) != w0)
            continue;
        const uint16_t n = detail::load_u16(mask + used);
        uint16_t i = 1;
        while (i < n) {
            const uint64_t w = load_u64(mask + 8 * i);
            if ((load_u64(sig + detail::load_u16(mask + offsets + 2 * i)) & w) != w)
                break;
            i++;
        }
        if (i >= n)
            return true;
    }
    return false;
}

// A set of 64-bit hashes in a table of `slots` words that the caller
// provides (open addressing, linear probing): an IN list's repeated
// elements are dropped as the list is read, in time proportional to its
// length.  It holds at most capacity(slots), three quarters of the slots,
// so that probes stay short and always end.  Plain data.
class HashSet {
public:
    static constexpr size_t capacity(size_t slots) { return slots / 4 * 3 + slots % 4 * 3 / 4; }

    // Empties the table (zeroes it).
    void init(uint64_t *table, size_t slots) noexcept;

    // Adds h; false, changing nothing, when h is new and the set is full.
    bool insert(uint64_t h) noexcept;

    size_t size() const noexcept { return size_; }

    // Moves the distinct hashes to table[0..size()), in no order, and
    // returns size().  The set is spent.
    size_t compact() noexcept;

private:
    uint64_t *table_;
    size_t slots_;
    size_t size_;
    bool has_zero_; // 0 marks a free slot, so the hash 0 is held here
};

// Slots of the HashSet for an IN list of `items` elements whose masks take
// `stride` bytes each: enough for every element when the table and the
// masks of that many fit in budget bytes, else as many as do (so a list
// that fills it needs more than budget).  0 when not even one fits.
size_t hash_set_slots(size_t items, size_t stride, size_t budget) noexcept;

// A whole scan's test: every bit of base, and one element of each IN list.
class QueryMatcher {
public:
    QueryMatcher(const SignatureMask &base, const ElementMasks *lists, int nlists) noexcept
        : base_(base), lists_(lists), nlists_(nlists)
    {
    }

    // As SignatureMask::match_array, for the whole query: the base mask's
    // fast loop first, then the lists on the signatures it kept.
    int match_array(const uint8_t *sigs, int count, uint16_t *out) const noexcept
    {
        int n = base_.match_array(sigs, count, out);
        if (nlists_ == 0)
            return n;
        const int nbytes = base_.bytes();
        int kept = 0;
        for (int j = 0; j < n; j++) {
            const uint8_t *sig = sigs + static_cast<size_t>(out[j]) * static_cast<size_t>(nbytes);
            int g = 0;
            while (g < nlists_ && any_element_matches(lists_[g], sig, nbytes))
                g++;
            if (g == nlists_)
                out[kept++] = out[j];
        }
        return kept;
    }

private:
    const SignatureMask &base_;
    const ElementMasks *lists_;
    int nlists_;
};

} // namespace bloomidx
