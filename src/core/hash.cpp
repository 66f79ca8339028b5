#include "hash.hpp"

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

uint64_t null_hash(int column) noexcept
{
    // A tag no value hashes through: values go through hash_bytes or
    // hash_int with the plain column seed, NULL with a seed of its own.
    static const char tag[] = "bloomidx:NULL";
    return XXH3_64bits_withSeed(tag, sizeof tag - 1, ~column_seed(column));
}

} // namespace bloomidx
