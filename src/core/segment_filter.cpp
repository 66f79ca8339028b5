// Segment filters: word-blocked Bloom filters (segment_filter.hpp).
#include "segment_filter.hpp"

#include <cmath>
#include <cstring>

#include "hash.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

constexpr uint32_t kProbeStep = 0x9E3779B9u; // 2^32 / golden ratio, odd
constexpr uint32_t kProbeDraws = 64;         // draws for `probes` different bits at most

// The probe bits of a key whose remix (mix64, hash.hpp) is r: `probes`
// different bits of the block, drawn as the top 6 bits of a
// multiplicative sequence over the remix's low 32 bits until that many
// differ.  Drawn with repeats, 5 probes of 64 bits set 4 or fewer for 15
// % of keys, and the rate of 2 % measured 2.08 % (a committer review of
// format 18); different bits make filter_rate's formula exact.  A
// sequence that cannot give them (a low half of zero) stops after
// kProbeDraws draws with fewer: a key added and asked with the same
// bits, a rate a little worse, never a false negative.
inline uint64_t probe_mask_remixed(uint32_t probes, uint64_t r) noexcept
{
    uint32_t a = static_cast<uint32_t>(r);
    uint64_t mask = 0;
    uint32_t have = 0;
    for (uint32_t draw = 0; have < probes && draw < kProbeDraws; draw++) {
        const uint64_t bit = uint64_t{1} << (a >> (32 - kFilterBlockBitsLog2));
        have += (mask & bit) == 0 ? 1 : 0;
        mask |= bit;
        a *= kProbeStep;
    }
    return mask;
}

// Sets the probe bits of a key whose remix is r (bit i of the word is bit
// i % 8 of byte i / 8, as filter_block_word reads it).
inline void add_remixed(uint8_t *block, uint32_t probes, uint64_t r) noexcept
{
    const uint64_t mask = probe_mask_remixed(probes, r);
    for (uint32_t i = 0; i < kFilterBlockBytes; i++)
        block[i] = static_cast<uint8_t>(block[i] | (mask >> (8 * i)));
}

inline uint32_t block_of_remixed(uint64_t r, uint32_t nblocks) noexcept
{
    return static_cast<uint32_t>(((r >> 32) * nblocks) >> 32);
}


} // namespace

uint32_t filter_blocks(uint64_t keys, double bits_per_key, uint32_t max_blocks) noexcept
{
    if (max_blocks == 0)
        return 0;
    double want = std::ceil(static_cast<double>(keys) * bits_per_key / kFilterBlockBits);
    if (!(want >= 1))
        return 1;
    if (want >= max_blocks)
        return max_blocks;
    return static_cast<uint32_t>(want);
}

double filter_rate(double bits_per_key, uint32_t probes) noexcept
{
    if (!(bits_per_key > 0) || probes == 0 || probes > kFilterMaxProbes)
        return 1;
    if (probes > kFilterBlockBits)
        return 1;
    // A block holds j values with Poisson(lambda) probability, each of
    // which sets `probes` different bits of the 64, a set drawn uniformly;
    // another value's bits are all set with (inclusion-exclusion over the
    // i of them left unset)
    //   sum_i (-1)^i C(probes, i) u_i^j,  u_i = C(64 - i, probes) / C(64, probes),
    // u_i the chance that one value leaves i given bits unset.
    const double lambda = kFilterBlockBits / bits_per_key;
    const int last = static_cast<int>(lambda + 12 * std::sqrt(lambda) + 30);
    double unset[kFilterMaxProbes + 1], choose[kFilterMaxProbes + 1];
    unset[0] = 1;
    choose[0] = 1;
    for (uint32_t i = 1; i <= probes; i++) {
        // C(64 - i, k) / C(64 - i + 1, k) = (64 - i + 1 - k) / (64 - i + 1)
        const double n = kFilterBlockBits - i + 1;
        unset[i] = unset[i - 1] * (n - probes) / n;
        choose[i] = choose[i - 1] * (probes - i + 1) / i;
    }
    // u_i^j kept from j to j + 1 (a pow each took 8 ms a sizing search,
    // which the first scan or insert of a backend pays).
    double power[kFilterMaxProbes + 1];
    for (uint32_t i = 0; i <= probes; i++)
        power[i] = 1;
    double rate = 0, p = std::exp(-lambda); // P(j = 0)
    for (int j = 0; j <= last; j++) {
        double all_set = 0;
        for (uint32_t i = 0; i <= probes; i++) {
            all_set += ((i & 1) ? -1.0 : 1.0) * choose[i] * power[i];
            power[i] *= unset[i];
        }
        rate += p * (all_set > 0 ? all_set : 0);
        p *= lambda / (j + 1);
    }
    return rate;
}

uint32_t filter_probes(double bits_per_key) noexcept
{
    uint32_t best = 1;
    double best_rate = filter_rate(bits_per_key, 1);
    for (uint32_t k = 2; k <= kFilterMaxProbes; k++) {
        double r = filter_rate(bits_per_key, k);
        if (r < best_rate) {
            best_rate = r;
            best = k;
        }
    }
    return best;
}

double filter_bits_per_key(double rate) noexcept
{
    if (!(rate > 0 && rate < 1))
        return 0;
    // The grid 1, 1.25 ... 64 (step i is 1 + i / 4, exact in binary).  The
    // best rate falls as the bits grow (each probe count's does: fewer
    // values a block), so the first step that reaches `rate` is found by
    // bisection: 9 steps' rates, where walking the grid took up to 253
    // (0.4 ms for the default rate, paid by each backend's first plan and
    // first INSERT; test/unit/segment_filter_test.cpp compares the two).
    auto reaches = [rate](int step) {
        const double bpk = 1 + step * 0.25;
        return filter_rate(bpk, filter_probes(bpk)) <= rate;
    };
    constexpr int kLastStep = 252; // 64 bits
    if (!reaches(kLastStep))
        return 64;
    int lo = 0, hi = kLastStep; // the answer is in [lo, hi]
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (reaches(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return 1 + lo * 0.25;
}

void filter_widened_blocks(uint32_t b, uint32_t n_from, uint32_t n_to, uint32_t *first,
                           uint32_t *last) noexcept
{
    // Block b of n holds the keys whose x (the remix's high 32 bits) has
    // floor(x * n / 2^32) = b: x from ceil(b 2^32 / n) to ceil((b + 1) 2^32 / n) - 1.
    const uint64_t lo = ((uint64_t{b} << 32) + n_from - 1) / n_from;
    const uint64_t hi = (((uint64_t{b} + 1) << 32) + n_from - 1) / n_from - 1;
    *first = static_cast<uint32_t>((lo * n_to) >> 32);
    *last = static_cast<uint32_t>((hi * n_to) >> 32);
}

uint32_t filter_blocks_in_group(uint32_t first, uint32_t own, uint32_t max_blocks) noexcept
{
    uint64_t blocks = first;
    while (blocks > 0 && blocks * 3 < uint64_t{own} * 2 && blocks * 2 <= max_blocks)
        blocks *= 2;
    return static_cast<uint32_t>(blocks);
}

uint32_t filter_blocks_on_grid(uint32_t own, uint32_t max_blocks) noexcept
{
    if (own <= 8)
        return own;
    uint32_t shift = 0;
    while ((own >> shift) >= 16)
        shift++;
    uint64_t m = (uint64_t{own} + (uint64_t{1} << shift) - 1) >> shift; // 8..16
    const uint64_t blocks = m << shift;
    return blocks <= max_blocks ? static_cast<uint32_t>(blocks) : own;
}

uint32_t filter_blocks_in_family(uint32_t own, uint32_t family, uint32_t max_blocks) noexcept
{
    if (family == 0 || own == 0 || family > max_blocks)
        return own;
    uint32_t blocks = family;
    while (blocks % 2 == 0 && blocks / 2 >= own)
        blocks /= 2;
    while (blocks < own && uint64_t{blocks} * 2 <= max_blocks)
        blocks *= 2;
    return blocks >= own ? blocks : own;
}

uint32_t filter_family_blocks(uint32_t rows, double bits_per_key, uint32_t max_blocks) noexcept
{
    if (bits_per_key <= 0 || rows == 0)
        return 0;
    // Where the grid's count passes the most blocks, the most (32,512 =
    // 127 * 2^8 in the format), never the need itself, whose odd part may be
    // large: every filter of the family would then take that many blocks.
    const uint32_t grid = filter_blocks_on_grid(filter_blocks(rows, bits_per_key, max_blocks),
                                                UINT32_MAX);
    return grid <= max_blocks ? grid : max_blocks;
}

uint32_t filter_block_of(uint32_t key, uint32_t nblocks) noexcept
{
    return block_of_remixed(mix64(key), nblocks);
}


void filter_block_add(uint8_t *block, uint32_t probes, uint32_t key) noexcept
{
    add_remixed(block, probes, mix64(key));
}

void filter_add_many(uint8_t *base, size_t block_stride, uint32_t nblocks, uint32_t probes,
                     const uint32_t *keys, uint32_t n, uint32_t key_stride) noexcept
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = mix64(keys[size_t{i} * key_stride]);
        add_remixed(base + block_of_remixed(r, nblocks) * block_stride, probes, r);
    }
}

uint64_t filter_probe_mask(uint32_t probes, uint32_t key) noexcept
{
    return probe_mask_remixed(probes, mix64(key));
}

bool filter_block_may_contain(const uint8_t *block, uint32_t probes, uint32_t key) noexcept
{
    // Every probe at once, without a branch: an absent value fails at a
    // random probe, and a mispredicted exit cost more than the probes left.
    const uint64_t mask = filter_probe_mask(probes, key);
    return (filter_block_word(block) & mask) == mask;
}

void filter_add(uint8_t *blocks, uint32_t nblocks, uint32_t probes, uint32_t key) noexcept
{
    filter_block_add(blocks + uint64_t{filter_block_of(key, nblocks)} * kFilterBlockBytes, probes,
                     key);
}

bool filter_may_contain(const uint8_t *blocks, uint32_t nblocks, uint32_t probes,
                        uint32_t key) noexcept
{
    return filter_block_may_contain(
        blocks + uint64_t{filter_block_of(key, nblocks)} * kFilterBlockBytes, probes, key);
}

uint32_t distinct_estimate(const uint32_t *keys, uint32_t n, uint32_t stride,
                           uint64_t *bitmap) noexcept
{
    static_assert(kDistinctBits == 1u << 17, "the top 17 bits of a remix pick the bit");
    std::memset(bitmap, 0, kDistinctWords * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t bit = static_cast<uint32_t>(mix64(keys[size_t{i} * stride]) >> 47); // 17 bits
        bitmap[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
    uint32_t set = 0;
    for (uint32_t w = 0; w < kDistinctWords; w++)
        set += static_cast<uint32_t>(__builtin_popcountll(bitmap[w]));
    if (set == 0)
        return 0;
    if (set >= kDistinctBits) // saturated: at least this many
        return n;
    double estimate = -double(kDistinctBits) * std::log1p(-double(set) / kDistinctBits);
    uint32_t d = static_cast<uint32_t>(estimate + 0.5);
    return d < 1 ? 1 : (d > n ? n : d);
}

} // namespace bloomidx
