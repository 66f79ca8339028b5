#include "sizing.hpp"

#include <cmath>

#include "signature.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

constexpr int kMaxM = kMaxSignatureBits;

// Past this many terms the DP is too slow for planning; the rate is then
// far below anything measurable, and the bit-independent bound is used.
constexpr double kMaxDpTerms = 4e6;

struct LogFactorials {
    double v[kMaxM + 1];
    explicit LogFactorials(int m) noexcept
    {
        for (int i = 0; i <= m; i++)
            v[i] = std::lgamma(static_cast<double>(i) + 1.0);
    }
    double choose(int n, int k) const noexcept { return v[n] - v[k] - v[n - k]; }
};

// P(X = x) for X ~ Hypergeometric(population m, marked `marked`, draws n):
// how many of n distinct positions fall among `marked` given positions.
inline double hypergeometric(const LogFactorials &lf, int m, int marked, int n, int x) noexcept
{
    return std::exp(lf.choose(marked, x) + lf.choose(m - marked, n - x) - lf.choose(m, n));
}

inline int imax(int a, int b) { return a > b ? a : b; }
inline int imin(int a, int b) { return a < b ? a : b; }

} // namespace

double false_positive_rate(int m, const uint16_t *bits, int ncols, uint32_t query_columns) noexcept
{
    if (m < 1 || m > kMaxM || ncols < 1 || ncols > kMaxColumns)
        return -1.0;
    if (ncols < kMaxColumns && (query_columns >> ncols) != 0)
        return -1.0; // a column the index does not have
    int query_bits = 0;
    bool any = false;
    for (int i = 0; i < ncols; i++) {
        if (bits[i] < 1 || bits[i] > m)
            return -1.0;
        if (query_columns & (1u << i)) {
            query_bits += bits[i];
            any = true;
        }
    }
    if (!any)
        return 1.0;

    int smax = imin(m, query_bits);
    double terms = 0;
    for (int i = 0; i < ncols; i++)
        terms += static_cast<double>(smax + 1) * (bits[i] + 1) * 2;
    if (terms > kMaxDpTerms) {
        // Each bit is set with probability d, as if independently; S is
        // taken at its largest size.  Only extreme settings (bits adding
        // up to about m) come here, where the rate is tiny anyway.
        double empty = 1.0;
        for (int i = 0; i < ncols; i++)
            empty *= 1.0 - static_cast<double>(bits[i]) / m;
        return std::pow(1.0 - empty, smax);
    }

    LogFactorials lf(m);
    double dist[kMaxM + 1];
    double next[kMaxM + 1];

    // Distribution of |S|: add the query columns' sets one by one.
    for (int s = 0; s <= smax; s++)
        dist[s] = 0.0;
    dist[0] = 1.0;
    int reach = 0;
    for (int j = 0; j < ncols; j++) {
        if (!(query_columns & (1u << j)))
            continue;
        int b = bits[j];
        int new_reach = imin(smax, reach + b);
        for (int s = 0; s <= new_reach; s++)
            next[s] = 0.0;
        for (int s = 0; s <= reach; s++) {
            if (dist[s] == 0.0)
                continue;
            // x of the b positions are new (outside the s already in S).
            for (int x = imax(0, b - s); x <= imin(b, m - s); x++)
                next[s + x] += dist[s] * hypergeometric(lf, m, m - s, b, x);
        }
        reach = new_reach;
        for (int s = 0; s <= reach; s++)
            dist[s] = next[s];
    }

    // Now dist[u] = P(u bits of S are not covered yet); add the row's
    // columns one by one, each covering x of the u.
    for (int i = 0; i < ncols; i++) {
        int b = bits[i];
        for (int u = 0; u <= reach; u++)
            next[u] = 0.0;
        for (int u = 0; u <= reach; u++) {
            if (dist[u] == 0.0)
                continue;
            for (int x = imax(0, b - (m - u)); x <= imin(u, b); x++)
                next[u - x] += dist[u] * hypergeometric(lf, m, u, b, x);
        }
        for (int u = 0; u <= reach; u++)
            dist[u] = next[u];
    }
    return dist[0];
}

} // namespace bloomidx
