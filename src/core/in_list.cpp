#include "in_list.hpp"

#include "positions.hpp"

#include "core_guard.hpp"

namespace bloomidx {

void build_element_masks(uint8_t *masks, uint32_t words, const uint64_t *hashes, size_t count,
                         uint32_t length, uint32_t bits, int nbytes) noexcept
{
    const size_t stride = element_mask_stride(words);
    uint8_t query[kMaxSignatureBytes];
    SignatureMask mask;

    for (size_t e = 0; e < count; e++, masks += stride) {
        std::memset(query, 0, static_cast<size_t>(nbytes));
        add_value(query, length, bits, hashes[e]);
        mask.build(query, nbytes);
        // An element sets `bits` bits, so it has at most `words` non-zero
        // words; were there more, dropping some would only let more rows
        // through to the recheck, never lose one.
        uint16_t n = static_cast<uint16_t>(mask.words() < static_cast<int>(words)
                                               ? mask.words() : static_cast<int>(words));
        std::memset(masks, 0, stride);
        for (uint16_t i = 0; i < n; i++) {
            uint64_t w = mask.word(i);
            uint16_t offset = mask.word_offset(i);
            std::memcpy(masks + 8 * i, &w, sizeof w);
            std::memcpy(masks + 8 * words + 2 * i, &offset, sizeof offset);
        }
        std::memcpy(masks + 10 * static_cast<size_t>(words), &n, sizeof n);
    }
}

void HashSet::init(uint64_t *table, size_t slots) noexcept
{
    table_ = table;
    slots_ = slots;
    size_ = 0;
    has_zero_ = false;
    if (slots > 0)
        std::memset(table, 0, slots * sizeof *table);
}

bool HashSet::insert(uint64_t h) noexcept
{
    if (h == 0) {
        if (has_zero_)
            return true;
        if (size_ == capacity(slots_))
            return false;
        has_zero_ = true;
        size_++;
        return true;
    }
    if (slots_ == 0)
        return false;
    // The hashes are uniform: their high bits pick the slot.
    size_t i = static_cast<size_t>((static_cast<unsigned __int128>(h) * slots_) >> 64);
    while (table_[i] != 0) {
        if (table_[i] == h)
            return true;
        if (++i == slots_)
            i = 0;
    }
    if (size_ == capacity(slots_))
        return false;
    table_[i] = h;
    size_++;
    return true;
}

size_t HashSet::compact() noexcept
{
    size_t n = 0;
    for (size_t i = 0; i < slots_; i++)
        if (table_[i] != 0)
            table_[n++] = table_[i];
    // Fewer non-zero hashes than the capacity, so below slots_.
    if (has_zero_)
        table_[n++] = 0;
    return n;
}

size_t hash_set_slots(size_t items, size_t stride, size_t budget) noexcept
{
    // capacity(s) >= items from s = ceil(4 items / 3); and s slots with
    // the masks of capacity(s) <= 3s/4 elements take at most
    // s (32 + 3 stride) / 4 bytes.
    size_t needed = items / 3 * 4 + (items % 3 * 4 + 2) / 3;
    size_t affordable = budget / (32 + 3 * stride) * 4 + budget % (32 + 3 * stride) * 4 / (32 + 3 * stride);
    if (needed < 1)
        needed = 1;
    return needed < affordable ? needed : affordable;
}

} // namespace bloomidx
