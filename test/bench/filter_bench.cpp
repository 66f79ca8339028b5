// Segment filter candidates (issue 12), on this machine: a cache-line-
// blocked Bloom filter (core/segment_filter.hpp) against a binary fuse
// filter with 8-bit fingerprints (Graf & Lemire, "Binary Fuse Filters",
// 2022; written here from the paper, for the comparison only).
//   make test/bench/filter_bench && test/bench/filter_bench
// For the distinct values of one column in one segment (6, 1,000 and
// 62,000 of them: a status column, a 10,000-value column, data set A's
// near-unique columns), prints each filter's bits per key, measured
// false-positive rate (10 M absent keys), cache lines a probe touches,
// and nanoseconds per probe (absent keys, one filter in cache, and
// 150 filters as a 10 M-row index's segments have, each asked once: what
// a query does) and per key to build.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/hash.hpp"
#include "core/segment_filter.hpp"

using namespace bloomidx;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

uint64_t mulhi(uint64_t a, uint64_t b)
{
    return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}

// Binary fuse filter, arity 3, 8-bit fingerprints.
struct Fuse8 {
    uint64_t seed = 0;
    uint32_t segment_length = 0, segment_mask = 0, segment_count_length = 0;
    std::vector<uint8_t> fp;

    void positions(uint64_t hash, uint32_t h[3]) const
    {
        uint64_t hi = mulhi(hash, segment_count_length);
        h[0] = static_cast<uint32_t>(hi);
        h[1] = h[0] + segment_length;
        h[2] = h[1] + segment_length;
        h[1] ^= static_cast<uint32_t>(hash >> 18) & segment_mask;
        h[2] ^= static_cast<uint32_t>(hash) & segment_mask;
    }
    static uint8_t fingerprint(uint64_t hash) { return static_cast<uint8_t>(hash ^ (hash >> 32)); }

    bool build(const std::vector<uint64_t> &keys)
    {
        const uint32_t size = static_cast<uint32_t>(keys.size());
        double l = std::log(static_cast<double>(std::max<uint32_t>(size, 2)));
        segment_length = size <= 1 ? 4 : 1u << static_cast<int>(std::floor(l / std::log(3.33) + 2.25));
        segment_length = std::min<uint32_t>(segment_length, 262144);
        segment_mask = segment_length - 1;
        double factor = size <= 1 ? 0 : std::max(1.125, 0.875 + 0.25 * std::log(1e6) / l);
        uint32_t capacity = static_cast<uint32_t>(std::round(size * factor));
        uint32_t count = (capacity + segment_length - 1) / segment_length;
        count = count <= 2 ? 1 : count - 2;
        uint32_t array_length = (count + 2) * segment_length;
        segment_count_length = count * segment_length;
        fp.assign(array_length, 0);
        std::vector<uint8_t> t2count(array_length);
        std::vector<uint64_t> t2hash(array_length), order(size);
        std::vector<uint8_t> which(size);
        std::vector<uint32_t> queue(array_length);
        for (int attempt = 0; attempt < 100; attempt++, seed++) {
            std::fill(t2count.begin(), t2count.end(), 0);
            std::fill(t2hash.begin(), t2hash.end(), 0);
            for (uint64_t k : keys) {
                uint64_t hash = mix64(k + seed);
                uint32_t h[3];
                positions(hash, h);
                for (uint8_t i = 0; i < 3; i++) {
                    t2count[h[i]] = static_cast<uint8_t>((t2count[h[i]] + 4) ^ i);
                    t2hash[h[i]] ^= hash;
                }
            }
            uint32_t qn = 0, stack = 0;
            for (uint32_t i = 0; i < array_length; i++)
                if ((t2count[i] >> 2) == 1)
                    queue[qn++] = i;
            while (qn > 0) {
                uint32_t i = queue[--qn];
                if ((t2count[i] >> 2) != 1)
                    continue;
                uint64_t hash = t2hash[i];
                uint8_t found = t2count[i] & 3;
                order[stack] = hash;
                which[stack++] = found;
                uint32_t h[3];
                positions(hash, h);
                for (uint8_t j = 0; j < 3; j++) {
                    if (j == found)
                        continue;
                    t2count[h[j]] = static_cast<uint8_t>((t2count[h[j]] - 4) ^ j);
                    t2hash[h[j]] ^= hash;
                    if ((t2count[h[j]] >> 2) == 1)
                        queue[qn++] = h[j];
                }
                t2count[i] = 0;
            }
            if (stack != size)
                continue;
            for (uint32_t s = size; s-- > 0;) {
                uint32_t h[3];
                positions(order[s], h);
                uint32_t f = which[s];
                fp[h[f]] = static_cast<uint8_t>(fingerprint(order[s]) ^ fp[h[(f + 1) % 3]] ^ fp[h[(f + 2) % 3]]);
            }
            return true;
        }
        return false;
    }
    bool contains(uint64_t k) const
    {
        uint64_t hash = mix64(k + seed);
        uint32_t h[3];
        positions(hash, h);
        return (fingerprint(hash) ^ fp[h[0]] ^ fp[h[1]] ^ fp[h[2]]) == 0;
    }
};

struct Blocked {
    uint32_t nblocks = 0, probes = 0;
    std::vector<uint8_t> bits;
    void build(const std::vector<uint64_t> &keys, double bpk, uint32_t k)
    {
        nblocks = filter_blocks(keys.size(), bpk, 1u << 20);
        probes = k;
        bits.assign(size_t{nblocks} * kFilterBlockBytes, 0);
        for (uint64_t k : keys)
            filter_add(bits.data(), nblocks, probes, k);
    }
    bool contains(uint64_t k) const { return filter_may_contain(bits.data(), nblocks, probes, k); }
};

template <class F> void report(const char *name, const std::vector<F> &filters, size_t bytes,
                               size_t keys, double build_s, const char *lines)
{
    const F &f = filters[0];
    std::mt19937_64 rng(99);
    const int absent = 10000000;
    std::vector<uint64_t> probe_keys(absent);
    for (auto &k : probe_keys)
        k = rng() | 1; // members are even
    int hits = 0;
    auto t = std::chrono::steady_clock::now();
    for (uint64_t k : probe_keys)
        hits += f.contains(k);
    double one = seconds_since(t) / absent * 1e9;
    // 150 filters, each asked once per "query": what a scan does.
    const int queries = 20000;
    int hits150 = 0;
    t = std::chrono::steady_clock::now();
    for (int q = 0; q < queries; q++) {
        uint64_t k = probe_keys[q];
        for (const F &g : filters)
            hits150 += g.contains(k);
    }
    double many = seconds_since(t) / (double(queries) * filters.size()) * 1e9;
    std::printf("| %s | %zu | %.2f | %.4f %% | %s | %.1f | %.1f | %.1f |\n", name, keys,
                bytes * 8.0 / keys, 100.0 * (hits + hits150) / (absent + double(queries) * filters.size()),
                lines, one, many, build_s / keys * 1e9);
}

} // namespace

int main()
{
    std::printf("| filter | keys | bits/key | false positives | cache lines a probe | ns a probe, one filter | ns a probe, 150 filters | ns a key to build |\n");
    std::printf("|---|---:|---:|---:|---|---:|---:|---:|\n");
    for (uint32_t n : {6u, 1000u, 62000u}) {
        const int nfilters = 150;
        std::vector<std::vector<uint64_t>> keysets(nfilters);
        std::mt19937_64 rng(n);
        for (auto &ks : keysets) {
            ks.resize(n);
            for (auto &k : ks)
                k = rng() & ~uint64_t{1};
            std::sort(ks.begin(), ks.end());
            ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
        }
        std::vector<Fuse8> fuses(nfilters);
        auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < nfilters; i++)
            if (!fuses[i].build(keysets[i]))
                std::printf("fuse build failed\n");
        double fuse_s = seconds_since(t) / nfilters;
        report("binary fuse, 8-bit", fuses, fuses[0].fp.size(), keysets[0].size(), fuse_s, "3");
        for (double rate : {0.01, 0.004}) {
            double bpk = filter_bits_per_key(rate);
            uint32_t k = filter_probes(bpk);
            std::vector<Blocked> blocked(nfilters);
            t = std::chrono::steady_clock::now();
            for (int i = 0; i < nfilters; i++)
                blocked[i].build(keysets[i], bpk, k);
            double bl_s = seconds_since(t) / nfilters;
            char name[96];
            std::snprintf(name, sizeof name, "blocked Bloom, for %.1f %% (%.2f bits/key, %u probes; predicts %.3f %%)",
                          rate * 100, bpk, blocked[0].probes, 100 * filter_rate(bpk, blocked[0].probes));
            report(name, blocked, blocked[0].bits.size(), keysets[0].size(), bl_s, "1");
        }
    }
    return 0;
}
