// A sealed segment's membership filter over one column's values: "may a
// row of this segment hold this value?".  A blocked Bloom filter (Putze,
// Sanders & Singler 2007; RocksDB's FastLocalBloom, here with blocks of
// one 64-bit word, as its "cache-local" variant's smallest): the value's
// hash picks one word, and every probe bit of the value is in that word,
// so asking costs one load and one compare.
//
// Why blocked Bloom (test/bench/filter_bench.cpp measures it against a
// binary fuse filter; README, *Segment filters*):
//  - a query asks every segment's filter, so what counts is one word per
//    segment and column; a fuse filter touches three, far apart;
//  - the filters of many segments can sit interleaved by block (block b
//    of every segment of a group side by side, the same block count for
//    all), so that one page answers for many segments: 1,016 of them with
//    8-byte blocks (format 18), where 64-byte blocks gave 127.  The price
//    is bits: 9.5 a key for a 2 % rate where 64-byte blocks took 8.5
//    (storage/README.md, *Filters at scale*);
//  - a segment's filter can be written into such a group in place, a
//    block at a time.
// A fuse filter is about 20 % smaller at the same rate; the space goes to
// the probes instead.
//
// A value's filter key is 32 bits of its column hash (hash.hpp):
// filter_key.  Pending rows keep it per column, 4 bytes each, so that a
// seal builds the new segment's filters from the rows it takes, without
// reading the table again (README, *Segment filters*, has the choice and
// its figures).  The key is remixed to 64 bits here so that the filter's
// bits do not follow the signature's positions.  Bits: block = the
// remix's high 32 bits scaled to the block count (Lemire's
// multiply-shift), probes = `probes` different bits, the top 6 bits of a
// multiplicative sequence over its low 32 bits.  32-bit keys collide for one pair of values in 4
// billion: a false positive, never a false negative.  Pure functions on
// caller memory; no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bloomidx {

constexpr uint32_t kFilterBlockBytes = 8;
constexpr uint32_t kFilterBlockBits = kFilterBlockBytes * 8;
constexpr uint32_t kFilterBlockBitsLog2 = 6;
static_assert(kFilterBlockBits == 1u << kFilterBlockBitsLog2, "a probe is log2(block bits) bits");
constexpr uint32_t kFilterMaxProbes = 16;

// The filter key of a value whose column hash is `column_hash`.
constexpr uint32_t filter_key(uint64_t column_hash)
{
    return static_cast<uint32_t>(column_hash >> 32);
}

// Blocks for `keys` distinct values at `bits_per_key`: at least 1, at
// most max_blocks.
uint32_t filter_blocks(uint64_t keys, double bits_per_key, uint32_t max_blocks) noexcept;

// Probe bits per value that minimize the rate at `bits_per_key`
// (1..kFilterMaxProbes).
uint32_t filter_probes(double bits_per_key) noexcept;

// The rate a blocked filter of `bits_per_key` and `probes` has (the
// number of values a block holds is Poisson, each sets `probes` different
// bits: exact for the bit choice above).
double filter_rate(double bits_per_key, uint32_t probes) noexcept;

// Fewest bits per key (in steps of 1/4) whose best rate is at most
// `rate`; 0 when rate is not in (0, 1).
double filter_bits_per_key(double rate) noexcept;

// The block of `key` among `nblocks` (>= 1).
uint32_t filter_block_of(uint32_t key, uint32_t nblocks) noexcept;

// Sets, or tests, key's probe bits in its block (kFilterBlockBytes).
void filter_block_add(uint8_t *block, uint32_t probes, uint32_t key) noexcept;
bool filter_block_may_contain(const uint8_t *block, uint32_t probes, uint32_t key) noexcept;

// Key's probe bits as a word: a block b may hold the key when
// (filter_block_word(b) & mask) == mask.  A probe of a block row asks
// many slots' blocks for one key, so the bits are computed once.
uint64_t filter_probe_mask(uint32_t probes, uint32_t key) noexcept;
// A block's bits as a word (bit i = bit i % 8 of byte i / 8, as
// filter_block_add sets them, whatever the machine's byte order).
inline uint64_t filter_block_word(const uint8_t *block) noexcept
{
    uint64_t w = 0;
    for (uint32_t i = 0; i < kFilterBlockBytes; i++)
        w |= uint64_t{block[i]} << (8 * i);
    return w;
}

// Adds n keys (keys[i * key_stride]) to a filter whose block b is at
// base + b * block_stride: a slot of a filter group, whose blocks are a
// row apart.  The loop a build runs per row and column, with the remix
// done once per hash.
void filter_add_many(uint8_t *base, size_t block_stride, uint32_t nblocks, uint32_t probes,
                     const uint32_t *keys, uint32_t n, uint32_t key_stride) noexcept;

// The blocks of a filter of n_to blocks (n_to >= n_from) that the keys of
// block b of a filter of n_from blocks fall into: *first..*last, about
// n_to / n_from of them (a block's keys are a range of the remix's high
// 32 bits, and the multiply-shift keeps their order).  A filter widened by
// ORing each source block into those may contain every key the source
// may: with the same probes, a merged segment's filter is made from its
// sources' filters, without their keys.  A widened block holds what one
// source block held, or two where its range straddles theirs (up to twice
// the bits set, so a higher rate there; none at n_to = n_from or a
// multiple of it).
void filter_widened_blocks(uint32_t b, uint32_t n_from, uint32_t n_to, uint32_t *first,
                           uint32_t *last) noexcept;

// The blocks of a filter that must widen into a group of `first` blocks
// (the group's first segment's count) without a widened block drawing on
// two source blocks: `first` times a power of two (widened by a multiple,
// each source block lands whole in its target blocks, so the slot keeps
// its own rate), doubled while `own` (what its keys alone want) passes
// 1.5 times it, so a segment of a few more values than the first (a
// distinct count's noise) does not double the group's column.  At most
// max_blocks; `first` when first is 0 (no filter) or own is no more.
uint32_t filter_blocks_in_group(uint32_t first, uint32_t own, uint32_t max_blocks) noexcept;

// The blocks of a sealed segment's filter: `own` (what its keys want)
// rounded up to m * 2^j with m in 8..15 (up to 8 exactly), at most an
// eighth more, so that seals of like rows get the same count and VACUUM
// can gather their groups without widening a block (storage/README.md);
// `own` itself where that passes max_blocks.  Never fewer than `own`: the
// filter keeps its rate.
uint32_t filter_blocks_on_grid(uint32_t own, uint32_t max_blocks) noexcept;

// The blocks of a sealed or merged segment's filter in an index whose
// filters are of `family` blocks (a full segment's: filter_family_blocks):
// the fewest of family times a power of two (family / 2, / 4 ... while a
// whole number, or family * 2, * 4 ...) that hold `own`, so that any two
// such filters' counts divide one another and VACUUM can gather them into
// one group, each block of the smaller landing whole in blocks of the
// larger (filter_widened_blocks), which keeps its rate (storage/README.md,
// *Segment filters*).  Never fewer than `own`: up to twice it for a
// segment of few rows, family itself for a full one.  `own` itself where
// that passes max_blocks, or family is 0.
uint32_t filter_blocks_in_family(uint32_t own, uint32_t family, uint32_t max_blocks) noexcept;

// The family of an index's sealed and merged filters: the blocks a
// segment of `rows` distinct keys (a full one's most) wants at
// bits_per_key, on the grid (filter_blocks_on_grid), or max_blocks where
// that passes it; 0 without filters.
uint32_t filter_family_blocks(uint32_t rows, double bits_per_key, uint32_t max_blocks) noexcept;

// Whether a filter of `from` blocks widens into one of `to` blocks with
// each source block landing whole in its target blocks: to a multiple of
// from (filter_widened_blocks).
inline bool filter_widens_whole(uint32_t from, uint32_t to) noexcept
{
    return from > 0 && to >= from && to % from == 0;
}

// The whole filter: nblocks blocks back to back.
void filter_add(uint8_t *blocks, uint32_t nblocks, uint32_t probes, uint32_t key) noexcept;
bool filter_may_contain(const uint8_t *blocks, uint32_t nblocks, uint32_t probes,
                        uint32_t key) noexcept;

// Distinct values among n keys (keys[i * stride]), estimated by linear
// counting (Whang, Vander-Zanden & Taylor 1990) over kDistinctBits bits in
// `bitmap` (kDistinctWords words, zeroed here): within about 1 % up to a
// segment's rows, enough to size a filter.  Allocates nothing.
constexpr uint32_t kDistinctBits = 1u << 17;
constexpr uint32_t kDistinctWords = kDistinctBits / 64;
uint32_t distinct_estimate(const uint32_t *keys, uint32_t n, uint32_t stride,
                           uint64_t *bitmap) noexcept;

} // namespace bloomidx
