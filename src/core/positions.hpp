// Bit positions: which bits of a signature one value sets.
//
// Each value sets exactly `bits` distinct positions in [0, length), all
// derived from one 64-bit hash.  Plain double hashing (h1 + i*h2 mod m)
// repeats and clusters positions at the small m of a per-row filter and
// gives many times the analytic false-positive rate; instead we step a
// 64-bit LCG seeded by the hash, map its high 32 bits to [0, m) with a
// multiply-shift, and skip positions this value already chose.
#pragma once

#include <cstdint>

namespace bloomidx {

// Sets `bits` distinct bits chosen by `hash` in sig, a signature of at
// least `length` bits.  Needs 1 <= bits <= length <= kMaxSignatureBits.
// Bits that other values set are left as they are.  Out of contract,
// bits > length sets all length bits and length outside 1..4096 nothing.
void add_value(uint8_t *sig, uint32_t length, uint32_t bits, uint64_t hash) noexcept;

} // namespace bloomidx
