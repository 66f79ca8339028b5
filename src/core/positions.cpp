#include "positions.hpp"

#include "signature.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

// Knuth's MMIX LCG: full period 2^64, so the walk below reaches every
// position in [0, m) and the rejection loop always ends.
inline uint32_t next_position(uint64_t &state, uint32_t m) noexcept
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t r = static_cast<uint32_t>(state >> 32);
    return static_cast<uint32_t>((static_cast<uint64_t>(r) * m) >> 32);
}

// Draws `count` distinct positions of [0, m), marking them in `chosen`
// (zeroed here) and handing each to on_pick.
template <class OnPick>
inline void draw_distinct(uint32_t m, uint32_t count, uint64_t hash, uint64_t *chosen,
                          OnPick on_pick) noexcept
{
    for (uint32_t w = 0; w < (m + 63) / 64; w++)
        chosen[w] = 0;
    uint64_t state = hash;
    for (uint32_t n = 0; n < count;) {
        uint32_t pos = next_position(state, m);
        uint64_t bit = 1ULL << (pos & 63);
        if (chosen[pos >> 6] & bit)
            continue;
        chosen[pos >> 6] |= bit;
        on_pick(pos);
        n++;
    }
}

// Up to this length, repeats are found in a four-word bitmap; past it, up
// to this many bits per value, in a small array.
constexpr uint32_t kShortLength = 256;
constexpr uint32_t kFewBits = 16;

} // namespace

void add_value(uint8_t *sig, uint32_t length, uint32_t bits, uint64_t hash) noexcept
{
    // Out of contract; never loop forever or write out of bounds over it.
    if (length == 0 || length > kMaxSignatureBits)
        return;
    if (bits > length)
        bits = length;

    if (length <= kShortLength && 2 * bits <= length) {
        // The usual case, a short signature: the positions seen fit in four
        // words cleared with two vector stores (a general clearing loop
        // became `rep stos`, which cost more than the draws).
        uint64_t seen[kShortLength / 64] = {0, 0, 0, 0};
        uint64_t state = hash;
        for (uint32_t n = 0; n < bits;) {
            uint32_t pos = next_position(state, length);
            uint64_t bit = 1ULL << (pos & 63);
            if (seen[pos >> 6] & bit)
                continue;
            seen[pos >> 6] |= bit;
            signature_set_bit(sig, pos);
            n++;
        }
        return;
    }
    if (bits <= kFewBits && 2 * bits <= length) {
        // A long signature, a few bits: remember them in a small array,
        // which needs no clearing at all.
        uint32_t picked[kFewBits];
        uint64_t state = hash;
        for (uint32_t n = 0; n < bits;) {
            uint32_t pos = next_position(state, length);
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
