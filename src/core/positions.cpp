#include "positions.hpp"

#include "signature.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

// Draws `count` distinct positions of [0, m), marking them in `chosen`
// (zeroed here) and handing each to on_pick.  The walk of draw_short, for
// any length.
template <class OnPick>
inline void draw_distinct(uint32_t m, uint32_t count, uint64_t hash, uint64_t *chosen,
                          OnPick on_pick) noexcept
{
    for (uint32_t w = 0; w < (m + 63) / 64; w++)
        chosen[w] = 0;
    uint64_t state = hash;
    for (uint32_t n = 0; n < count;) {
        uint32_t pos = detail::next_position(state, m);
        uint64_t bit = 1ULL << (pos & 63);
        if (chosen[pos >> 6] & bit)
            continue;
        chosen[pos >> 6] |= bit;
        on_pick(pos);
        n++;
    }
}

// Past kShortLength, up to this many bits per value, repeats are found in
// a small array, which needs no clearing at all.
constexpr uint32_t kFewBits = 16;

} // namespace

void or_short_words(uint8_t *sig, const uint64_t words[4], uint32_t length) noexcept
{
    uint32_t nbytes = (length + 7) / 8;
    uint32_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    // A word's bytes are the signature's bytes in memory order: OR whole words.
    for (; i + 8 <= nbytes; i += 8) {
        uint64_t v = load_u64(sig + i) | words[i / 8];
        std::memcpy(sig + i, &v, sizeof v);
    }
#endif
    for (; i < nbytes; i++)
        sig[i] = static_cast<uint8_t>(sig[i] | (words[i / 8] >> (8 * (i % 8))));
}

void add_value(uint8_t *sig, uint32_t length, uint32_t bits, uint64_t hash) noexcept
{
    // Out of contract; never loop forever or write out of bounds over it.
    if (length == 0 || length > kMaxSignatureBits)
        return;
    if (bits > length)
        bits = length;

    if (length <= kShortLength) {
        uint64_t words[4] = {0, 0, 0, 0};
        add_value_short(words, length, bits, hash);
        or_short_words(sig, words, length);
        return;
    }
    if (bits <= kFewBits && 2 * bits <= length) {
        uint32_t picked[kFewBits];
        uint64_t state = hash;
        for (uint32_t n = 0; n < bits;) {
            uint32_t pos = detail::next_position(state, length);
            uint32_t i = 0;
            while (i < n && picked[i] != pos)
                i++;
            if (i < n)
                continue;
            picked[n++] = pos;
            signature_set_bit(sig, pos);
        }
        return;
    }
    uint64_t chosen[kMaxSignatureBits / 64];
    if (2 * bits <= length) {
        draw_distinct(length, bits, hash, chosen,
                      [sig](uint32_t pos) { signature_set_bit(sig, pos); });
        return;
    }
    // More than half the positions: drawing the ones left out keeps the
    // rejection loop short.
    draw_distinct(length, length - bits, hash, chosen, [](uint32_t) {});
    for (uint32_t pos = 0; pos < length; pos++)
        if (!((chosen[pos >> 6] >> (pos & 63)) & 1))
            signature_set_bit(sig, pos);
}

} // namespace bloomidx
