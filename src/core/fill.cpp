#include "fill.hpp"

#include <cmath>

#include "signature.hpp"
#include "slices.hpp"

#include "core_guard.hpp"

namespace bloomidx {

uint32_t signature_fill(const uint8_t *sig, uint32_t m) noexcept
{
    uint32_t set = 0;
    uint32_t whole = m / 8;
    for (uint32_t b = 0; b < whole; b++)
        set += static_cast<uint32_t>(__builtin_popcount(sig[b]));
    if (m % 8 != 0)
        set += static_cast<uint32_t>(__builtin_popcount(sig[whole] & ((1u << (m % 8)) - 1)));
    return set;
}

void add_slice_counts(const uint64_t *words, const uint64_t *live, uint32_t nrows,
                      uint16_t *counts) noexcept
{
    if (nrows > kSegmentRows)
        nrows = kSegmentRows;
    const uint32_t nwords = (nrows + 63) / 64;
    for (uint32_t w = 0; w < nwords; w++) {
        uint64_t bits = words[w] & live[w];
        if (w == nwords - 1 && nrows % 64 != 0)
            bits &= (uint64_t{1} << (nrows % 64)) - 1;
        uint16_t *row = counts + w * 64;
        while (bits != 0) {
            row[__builtin_ctzll(bits)]++;
            bits &= bits - 1;
        }
    }
}

void add_counts_to_histogram(const uint16_t *counts, const uint64_t *live, uint32_t nrows,
                             uint32_t m, uint64_t *histogram) noexcept
{
    if (nrows > kSegmentRows)
        nrows = kSegmentRows;
    for (uint32_t r = 0; r < nrows; r++)
        if ((live[r / 64] >> (r % 64)) & 1)
            histogram[counts[r] < m ? counts[r] : m]++;
}

uint64_t histogram_rows(const uint64_t *histogram, uint32_t m) noexcept
{
    uint64_t rows = 0;
    for (uint32_t k = 0; k <= m; k++)
        rows += histogram[k];
    return rows;
}

double histogram_fill(const uint64_t *histogram, uint32_t m) noexcept
{
    uint64_t rows = histogram_rows(histogram, m);
    if (rows == 0 || m == 0)
        return -1.0;
    double bits = 0;
    for (uint32_t k = 1; k <= m; k++)
        bits += static_cast<double>(k) * static_cast<double>(histogram[k]);
    return bits / (static_cast<double>(rows) * m);
}

double histogram_rate(const uint64_t *histogram, uint32_t m, uint32_t b) noexcept
{
    uint64_t rows = histogram_rows(histogram, m);
    if (rows == 0 || b < 1 || b > m)
        return -1.0;
    // C(k, b) / C(m, b) = k! (m - b)! / ((k - b)! m!), in logarithms: the
    // binomials themselves overflow a double long before m = 4096.
    const double log_all = std::lgamma(m + 1.0) - std::lgamma(m - b + 1.0);
    double sum = 0;
    for (uint32_t k = b; k <= m; k++)
        if (histogram[k] != 0)
            sum += static_cast<double>(histogram[k]) *
                   std::exp(std::lgamma(k + 1.0) - std::lgamma(k - b + 1.0) - log_all);
    return sum / static_cast<double>(rows);
}

double expected_fill(uint32_t m, const uint16_t *bits, int ncols) noexcept
{
    if (m < 1 || m > static_cast<uint32_t>(kMaxSignatureBits) || ncols < 1 || ncols > kMaxColumns)
        return -1.0;
    double clear = 1.0;
    for (int i = 0; i < ncols; i++) {
        if (bits[i] < 1 || bits[i] > m)
            return -1.0;
        clear *= 1.0 - static_cast<double>(bits[i]) / m;
    }
    return 1.0 - clear;
}

} // namespace bloomidx
