// Hashing of indexed values to 64 bits: XXH3 for values whose equality is
// byte equality, with a per-column seed so that equal values in different
// columns set different bits.  This is the only file that knows the hash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bloomidx {

// Seed of index column `column` (0-based).
uint64_t column_seed(int column) noexcept;

// Hash of a byte string.
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed) noexcept;

// Hash of an integer.  Every integer width is widened to int64 first, so
// that equal int2, int4 and int8 values hash alike (cross-type equality).
uint64_t hash_int(int64_t value, uint64_t seed) noexcept;

// The hash a NULL in column `column` stands for: a NULL sets bits like a
// value of its own, so "col IS NULL" can be searched.
uint64_t null_hash(int column) noexcept;

} // namespace bloomidx
