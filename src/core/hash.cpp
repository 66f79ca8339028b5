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

bool hash_known_answers_ok() noexcept
{
    // XXH3_64bits of the empty input, seed 0: xxHash's own test vector.
    return XXH3_64bits_withSeed(nullptr, 0, 0) == 0x2D06800538D394C2ULL &&
           hash_int(42, column_seed(0)) == 0x4fcfa6b7fa3ef77cULL &&
           hash_bytes("abc", 3, column_seed(2)) == 0x8838378c57132352ULL &&
           null_hash(31) == 0x4679f0fc5a341659ULL;
}

} // namespace bloomidx
