// Bit positions: which bits of a signature one value sets.
//
// Each value sets exactly `bits` distinct positions in [0, length), all
// derived from one 64-bit hash.  Plain double hashing (h1 + i*h2 mod m)
// repeats and clusters positions at the small m of a per-row filter and
// gives many times the analytic false-positive rate; instead we step a
// 64-bit LCG seeded by the hash, map its high 32 bits to [0, m) with a
// multiply-shift, and skip positions this value already chose (or, past
// half the length, choose the positions it leaves out).
#pragma once

#include <cstdint>

namespace bloomidx {

// Signatures up to this many bits are built in four 64-bit words.
constexpr uint32_t kShortLength = 256;

namespace detail {

// Knuth's MMIX LCG: full period 2^64, so the walk reaches every position
// in [0, m) and the rejection loops always end.
inline uint32_t next_position(uint64_t &state, uint32_t m) noexcept
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t r = static_cast<uint32_t>(state >> 32);
    return static_cast<uint32_t>((static_cast<uint64_t>(r) * m) >> 32);
}

// Marks `count` distinct positions of [0, m <= 256) in `chosen` (zeroed by
// the caller), in the order the walk from `hash` finds them.
inline void draw_short(uint64_t chosen[4], uint32_t m, uint32_t count, uint64_t hash) noexcept
{
    uint64_t state = hash;
    for (uint32_t n = 0; n < count;) {
        uint32_t pos = next_position(state, m);
        uint64_t bit = 1ULL << (pos & 63);
        if (chosen[pos >> 6] & bit)
            continue;
        chosen[pos >> 6] |= bit;
        n++;
    }
}

} // namespace detail

// For a signature of length <= 256 bits held as four words (bit i of the
// signature is bit i % 64 of words[i / 64]): adds the value's bits.  The
// same positions as add_value.  Inline, so a row's columns build in
// registers and their walks overlap.  Needs 1 <= bits <= length.
inline void add_value_short(uint64_t words[4], uint32_t length, uint32_t bits,
                            uint64_t hash) noexcept
{
    uint64_t chosen[4] = {0, 0, 0, 0}; // two vector stores, not `rep stos`
    if (2 * bits <= length) {
        detail::draw_short(chosen, length, bits, hash);
        for (int w = 0; w < 4; w++)
            words[w] |= chosen[w];
        return;
    }
    // More than half the positions: drawing the ones left out keeps the
    // rejection loop short.
    detail::draw_short(chosen, length, length - bits, hash);
    for (uint32_t w = 0; w < 4; w++) {
        uint32_t first = 64 * w;
        uint64_t in_length = length >= first + 64 ? ~0ULL
                           : length > first       ? (1ULL << (length - first)) - 1
                                                  : 0;
        words[w] |= ~chosen[w] & in_length;
    }
}

// ORs four words made by add_value_short into a signature of
// `length` bits (it writes only the bytes that hold those bits).
void or_short_words(uint8_t *sig, const uint64_t words[4], uint32_t length) noexcept;

// Sets `bits` distinct bits chosen by `hash` in sig, a signature of at
// least `length` bits.  Needs 1 <= bits <= length <= kMaxSignatureBits.
// Bits that other values set are left as they are.  Out of contract,
// bits > length sets all length bits and length outside 1..4096 nothing.
void add_value(uint8_t *sig, uint32_t length, uint32_t bits, uint64_t hash) noexcept;

} // namespace bloomidx
