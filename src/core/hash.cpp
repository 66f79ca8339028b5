#include "hash.hpp"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core_guard.hpp"

namespace bloomidx {

uint64_t column_seed(int column) noexcept
{
    // Distinct, well-spread seeds; XXH3 mixes the seed into every lane.
    return 0x6a09e667f3bcc908ULL + static_cast<uint64_t>(column + 1) * 0x9e3779b97f4a7c15ULL;
}

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed) noexcept
{
    return XXH3_64bits_withSeed(data, len, seed);
}

uint64_t hash_int(int64_t value, uint64_t seed) noexcept
{
    // Little-endian bytes of the value, so the hash is the same on every
    // platform that reads the index.  (Built byte by byte, the store-to-load
    // forwarding stall cost more than the hash itself.)
    uint64_t v = static_cast<uint64_t>(value);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    unsigned char bytes[8];
    std::memcpy(bytes, &v, sizeof bytes);
    return XXH3_64bits_withSeed(bytes, sizeof bytes, seed);
}

uint64_t null_hash(int column) noexcept
{
    // A tag no value hashes through: values go through hash_bytes or
    // hash_int with the plain column seed, NULL with a seed of its own.
    static const char tag[] = "bloomidx:NULL";
    return XXH3_64bits_withSeed(tag, sizeof tag - 1, ~column_seed(column));
}

} // namespace bloomidx
