// The model behind the choice of how segment filters scale (issue 28;
// src/storage/README.md, "Filters at scale"): for a table of S segments,
// the index pages a selective 2-column query reads in the filters and the
// directory, the filters' size, and the pages a seal writes, for today's
// layout and the alternatives.  Not a benchmark of code: arithmetic over
// the page format, and the blocked Bloom filter's rate (the formula of
// core/segment_filter.cpp, for any block size), checked by Monte Carlo.
//
//   make test/bench/filter_scaling && test/bench/filter_scaling
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr double kPayloadBits = 8160 * 8; // a page's bytes past header and special
constexpr double kSegmentRows = 65024;
constexpr double kDirectoryInline = 224;  // entries in the metapage
constexpr double kDirectoryPerPage = 300; // entries a directory page holds (about)

// A blocked Bloom filter's rate: block of B bits, b bits a key, k probes;
// a block holds j keys with Poisson(B / b) probability.
double blocked_rate(double B, double bits_per_key, int k)
{
    double lambda = B / bits_per_key, keep = std::log1p(-1.0 / B), rate = 0;
    double p = std::exp(-lambda);
    int last = static_cast<int>(lambda + 12 * std::sqrt(lambda) + 30);
    for (int j = 0; j <= last; j++) {
        rate += p * std::pow(-std::expm1(keep * k * j), k);
        p *= lambda / (j + 1);
    }
    return rate;
}

// Fewest bits a key (steps of 1/4) for `rate` with blocks of B bits.
double bits_for(double B, double rate, int *probes)
{
    for (double b = 1; b < 64; b += 0.25)
        for (int k = 1; k <= 16; k++)
            if (blocked_rate(B, b, k) <= rate) {
                *probes = k;
                return b;
            }
    return 64;
}

// The rate measured: n keys in a filter of blocks of B bits (64-bit
// words), probes from a multiplicative sequence as core/segment_filter.cpp
// draws them, then a million keys not in it.
double measured_rate(uint32_t B, double bits_per_key, int k, uint32_t n, uint64_t seed)
{
    uint32_t words = B / 64;
    uint64_t nblocks = static_cast<uint64_t>(std::ceil(n * bits_per_key / B));
    std::vector<uint64_t> f(nblocks * words, 0);
    std::mt19937_64 rng(seed);
    auto bits = [&](uint64_t h, auto &&each) {
        uint64_t block = ((h >> 32) * nblocks) >> 32;
        uint32_t a = static_cast<uint32_t>(h);
        int shift = 32 - static_cast<int>(std::log2(B));
        for (int i = 0; i < k; i++) {
            uint32_t bit = a >> shift;
            each(block * words + bit / 64, uint64_t{1} << (bit % 64));
            a *= 0x9E3779B9u;
        }
    };
    for (uint32_t i = 0; i < n; i++)
        bits(rng(), [&](uint64_t w, uint64_t m) { f[w] |= m; });
    uint32_t hits = 0, probes = 1000000;
    for (uint32_t i = 0; i < probes; i++) {
        bool all = true;
        bits(rng(), [&](uint64_t w, uint64_t m) { all = all && (f[w] & m); });
        hits += all;
    }
    return static_cast<double>(hits) / probes;
}

// Layout: filters of up to `slots` segments share a group; a key's block
// row for all of a group's slots is `slots * block_bytes`, rows_per_page of
// them a page.  Groups are tiered: new segments get groups of one, merged
// `fanout` at a time into groups up to `slots` (fanout 0: never merged).
struct Layout {
    const char *name;
    double block_bits;
    double slots;
    double fanout;
    bool lazy_directory; // the directory read for the segments that pass only
    int top_probes;      // > 0: full groups past top_probes become one top level
                         // of rows across segments (unblocked, that many probes)
};

// Groups a key is asked in, for S segments of which `fresh` are sealed
// one by one after the build (the build's groups are full).
double groups(const Layout &l, double S, double fresh)
{
    double built = std::ceil((S - fresh) / l.slots);
    if (l.fanout == 0)
        return built + fresh;
    // Tiers of sizes 1, f, f^2, ... below `slots`: at most f - 1 groups each.
    double g = 0, size = 1, left = fresh;
    while (left > 0 && size < l.slots) {
        double here = std::fmod(std::floor(left / size), l.fanout);
        g += here;
        left -= here * size;
        size *= l.fanout;
    }
    return built + g + std::ceil(left / l.slots);
}

// Filter and directory pages of a 2-column miss: per group a header and
// one region page per key (a second key asked only where the first
// passed: counted), the metapage, and the directory.
double miss_pages(const Layout &l, double S, double fresh)
{
    double dir = l.lazy_directory ? 0 : std::ceil(std::fmax(0, S - kDirectoryInline) / kDirectoryPerPage);
    double g = groups(l, S, fresh);
    double full = std::ceil((S - fresh) / l.slots);
    if (l.top_probes > 0 && full > l.top_probes)
        // The full groups' keys are asked in the top level: a header and a
        // row a probe, whatever the segments (up to a page's 65,280 bits).
        return 1 + dir + (g - full) * 2 + 1 + 2.0 * l.top_probes;
    return 1 + dir + g * 2;
}

// Pages a seal writes for its segment's filters (6 columns of a near-unique
// key, b bits a key), plus the compactions' share: each tier's merge
// rewrites what it merges once.
double seal_pages(const Layout &l, double bits_per_key)
{
    double own = std::ceil(6 * kSegmentRows * bits_per_key / kPayloadBits) + 1;
    if (l.fanout == 0)
        return own;
    double tiers = std::ceil(std::log(l.slots) / std::log(l.fanout));
    return own * (1 + tiers);
}

} // namespace

int main()
{
    std::printf("Blocked Bloom filters at a segment's keys (65,024): bits a key for a rate,\n"
                "by block size (formula; measured rate at those bits in brackets)\n\n");
    std::printf("| block | 2 %% | 1 %% | 0.5 %% |\n|---:|---|---|---|\n");
    for (uint32_t B : {64u, 128u, 256u, 512u}) {
        std::printf("| %u bits |", B);
        for (double rate : {0.02, 0.01, 0.005}) {
            int k = 0;
            double b = bits_for(B, rate, &k);
            std::printf(" %.2f (k %d; %.2f %%) |", b, k,
                        100 * measured_rate(B, b, k, 65024, B * 7 + static_cast<uint64_t>(rate * 1e4)));
        }
        std::printf("\n");
    }

    const Layout layouts[] = {
        {"today: groups of 15, 64-byte blocks", 512, 15, 0, false, 0},
        {"groups of 127, 64-byte blocks, tiers of 8", 512, 127, 8, true, 0},
        {"groups of 510, 16-byte blocks, tiers of 8", 128, 510, 8, true, 0},
        {"groups of 1,020, 8-byte blocks, tiers of 8", 64, 1020, 8, true, 0},
        {"groups of 127 (64-byte blocks, tiers of 8) under a top level of rows", 512, 127, 8, true, 6},
    };
    const double segments[] = {31, 153, 489, 1953, 15000};
    std::printf("\nFilter and directory pages of a 2-column miss (metapage included), the\n"
                "build's segments in full groups and 7 segments sealed since\n\n| layout |");
    for (double S : segments)
        std::printf(" %.0f segments |", S);
    std::printf(" bits a key at 2 %% | pages a seal writes (6 columns, near-unique) |\n|---|");
    for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++)
        std::printf("---:|");
    std::printf("---:|---:|\n");
    for (const Layout &l : layouts) {
        int k;
        double b = bits_for(l.block_bits, 0.02, &k);
        std::printf("| %s |", l.name);
        for (double S : segments)
            std::printf(" %.0f |", miss_pages(l, S, 7));
        std::printf(" %.2f | %.0f |\n", b, seal_pages(l, b));
    }
    return 0;
}
