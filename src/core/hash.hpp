// Hashing of indexed values to 64 bits: XXH3 for values whose equality is
// byte equality, with a per-column seed so that equal values in different
// columns set different bits.  This is the only file that knows the hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// XXH3 is inlined where it is used: on 8-byte keys the call cost as much
// as the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>

// XXH3's output is stable only from xxHash 0.8.0 (before, it was marked
// experimental and changed between releases): an index must never be read
// by a build that hashes differently.
#if !defined(XXH_VERSION_NUMBER) || XXH_VERSION_NUMBER < 800
#error "bloomidx needs xxHash 0.8.0 or later (a stable XXH3)"
#endif

namespace bloomidx {

// Seed of index column `column` (0-based).
uint64_t column_seed(int column) noexcept;

// Hash of a byte string.
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed) noexcept;

// Hash of an integer.  Every integer width is widened to int64 first, so
// that equal int2, int4 and int8 values hash alike (cross-type equality).
// The bytes hashed are the little-endian ones on every platform.  (Built
// byte by byte, a store-to-load forwarding stall cost more than the hash.)
inline uint64_t hash_int(int64_t value, uint64_t seed) noexcept
{
    uint64_t v = static_cast<uint64_t>(value);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    unsigned char bytes[8];
    std::memcpy(bytes, &v, sizeof bytes);
    return XXH3_64bits_withSeed(bytes, sizeof bytes, seed);
}

// The hash a NULL in column `column` stands for: a NULL sets bits like a
// value of its own, so "col IS NULL" can be searched.
uint64_t null_hash(int column) noexcept;

// MurmurHash3's 64-bit finalizer: every bit of h reaches every bit of
// the result.  The segment filters spread a filter key (32 bits of a
// value's hash) over a filter's blocks and probe bits with it.
inline uint64_t mix64(uint64_t h) noexcept
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

// Checks the hashes above against answers pinned when the on-disk format
// (kHashXxh3V2) was fixed, and XXH3 against its published test vector.
// False means this build hashes differently from the one that wrote the
// indexes (another xxHash, a miscompilation): the glue refuses to load.
bool hash_known_answers_ok() noexcept;

} // namespace bloomidx
