#include "advise.hpp"

#include <algorithm>
#include <cmath>

#include "page_layout.hpp"
#include "positions.hpp"
#include "segment_filter.hpp"
#include "signature.hpp"
#include "slices.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

// More bits per value never pay at per-row sizes (sizing.cpp's bound too).
constexpr int kMaxAdvisedBits = 64;

// At `length`, the fewest bits per column that meet every target, found
// by raising the bits of each column still above its target, one at a
// time, until none is (the rates are then in rates[]).  Raising a
// column's bits lowers its own rate but raises the others' (more bits
// set in every row), so the loop may go round several times; it gives up
// once a column would need more than kMaxAdvisedBits or more bits than
// the length, or its rate stops falling.
enum class Fit { Met, Missed, Interrupted };

Fit fewest_bits(const double *targets, int n, int length, uint16_t *bits, double *rates,
                Interrupted interrupted, void *arg) noexcept
{
    int cap = length < kMaxAdvisedBits ? length : kMaxAdvisedBits;
    for (int i = 0; i < n; i++)
        bits[i] = 1;
    for (int round = 0; round < n * kMaxAdvisedBits; round++) {
        if (interrupted && interrupted(arg))
            return Fit::Interrupted;
        bool all_met = true;
        for (int i = 0; i < n; i++) {
            rates[i] = false_positive_rate(length, bits, n, 1u << i);
            if (rates[i] > targets[i])
                all_met = false;
        }
        if (all_met)
            return Fit::Met;
        for (int i = 0; i < n; i++) {
            if (rates[i] <= targets[i])
                continue;
            if (bits[i] >= cap)
                return Fit::Missed;
            // Its rate now: the columns raised before it this round have
            // raised it since rates[i] was taken.
            double before = false_positive_rate(length, bits, n, 1u << i);
            bits[i]++;
            // Past the bits that minimise its rate, more only hurt.
            if (false_positive_rate(length, bits, n, 1u << i) >= before)
                return Fit::Missed;
        }
    }
    return Fit::Missed;
}

} // namespace

SizingResult advise_sizing(const double *targets, int n, double *rates, Interrupted interrupted,
                           void *arg) noexcept
{
    SizingResult res;
    if (n < 1 || n > kMaxColumns)
        return res;
    for (int i = 0; i < n; i++)
        if (!(targets[i] > 0 && targets[i] < 1))
            return res;

    uint16_t bits[kMaxColumns];
    const int top = kMaxSignatureBits / 16; // lengths in units of 16 bits
    // No column can do better than at the longest length with every other
    // column at one bit and its own at the cap (the rate falls with the
    // length and the others' bits, and up to far past the cap with its
    // own): a target below that is out of reach, said at once rather than
    // after trying every length.
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            bits[j] = 1;
        bits[i] = kMaxAdvisedBits;
        if (false_positive_rate(top * 16, bits, n, 1u << i) > targets[i]) {
            res.status = SizingStatus::Unreachable;
            res.length = top * 16;
            for (int j = 0; j < n; j++)
                res.bits[j] = bits[j];
            return res;
        }
    }
    // Longer signatures meet lower rates: the shortest multiple of 16 that
    // meets them all, found by doubling from short lengths (a long length
    // that fails costs most: every column raised to its cap), then
    // bisecting between the last that failed and the first that met.
    int lo = 1, hi = 0; // hi: the shortest length known to meet them (0: none yet)
    for (int step = 1; hi == 0 ? lo <= top : lo < hi; step *= 2) {
        int length = hi == 0 ? (step < top ? step : top) : lo + (hi - lo) / 2;
        Fit fit = fewest_bits(targets, n, length * 16, bits, rates, interrupted, arg);
        if (fit == Fit::Interrupted) {
            res.status = SizingStatus::Interrupted;
            return res;
        }
        if (fit == Fit::Met)
            hi = length;
        else
            lo = length + 1;
    }
    if (hi == 0) {
        res.status = SizingStatus::Unreachable;
        res.length = top * 16;
        for (int i = 0; i < n; i++)
            res.bits[i] = bits[i];
        return res;
    }
    (void) fewest_bits(targets, n, lo * 16, bits, rates, nullptr, nullptr);
    res.status = SizingStatus::Ok;
    res.length = lo * 16;
    res.worst_rate = 0;
    for (int i = 0; i < n; i++) {
        res.bits[i] = bits[i];
        if (rates[i] > res.worst_rate) {
            res.worst_rate = rates[i];
            res.worst_column = i;
        }
    }
    return res;
}

} // namespace bloomidx

namespace bloomidx {

namespace {

// xorshift64*, seeded the same every call: the sampled rates repeat.
struct Sampler {
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint64_t next() noexcept
    {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 2685821657736338717ULL;
    }
    double unit() noexcept { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

inline bool bit_set(const uint8_t *sig, int p) noexcept { return (sig[p >> 3] >> (p & 7)) & 1; }

// P(b given positions of m all fall among k set bits) = C(k, b) / C(m, b).
double covered(int k, int m, int b) noexcept
{
    double p = 1;
    for (int x = 0; x < b; x++) {
        if (k - x <= 0)
            return 0;
        p *= static_cast<double>(k - x) / (m - x);
    }
    return p;
}

// The fraction of the column's rows holding value `a` (listed) or any
// listed value, from freqs normalised with rest to 1.
double column_total(const ColumnValues &c) noexcept
{
    double total = c.rest > 0 ? c.rest : 0;
    for (int u = 0; u < c.nlisted; u++)
        total += c.freqs[u];
    return total > 0 ? total : 1;
}

// Column i's listed value a: the chance that a row not holding it covers
// its bits, by inclusion-exclusion over subsets T of its b bits:
// sum over T of (-1)^|T| * prod over columns of P(the column's bits miss T).
// A column's listed values enter through which of a's bits they hold (a
// mask), summed over masks contained in T's complement (a subset-sum
// transform); its other values through C(m - |T|, b_j) / C(m, b_j).
// Returns -1 where no row can miss a (it is the column's only value).
double listed_value_rate(int m, const uint16_t *bits, int ncols, const ColumnValues *cols, int i,
                         int a) noexcept
{
    const int b = bits[i];
    const uint32_t full = (1u << b) - 1;
    uint8_t sig[kMaxSignatureBytes];
    uint16_t pos[kMaxExactBits];
    // 64 kB at kMaxExactBits = 12, within the 512 kB PostgreSQL keeps
    // below max_stack_depth for frames that do not check it.
    static_assert((2 * sizeof(double) << kMaxExactBits) <= 64 * 1024, "subset tables on the stack");
    double prod[1u << kMaxExactBits];
    double sums[1u << kMaxExactBits];

    for (int p = 0; p < (m + 7) / 8; p++)
        sig[p] = 0;
    add_value(sig, m, b, cols[i].hashes[a]);
    int n = 0;
    for (int p = 0; p < m && n < b; p++)
        if (bit_set(sig, p))
            pos[n++] = static_cast<uint16_t>(p);
    for (uint32_t t = 0; t <= full; t++)
        prod[t] = 1;

    for (int j = 0; j < ncols; j++) {
        const ColumnValues &c = cols[j];
        double total = column_total(c);
        double rest = (c.rest > 0 ? c.rest : 0) / total;
        double norm = 1;
        if (j == i) {
            norm = 1 - c.freqs[a] / total; // rows not holding a
            if (norm <= 1e-12)
                return -1;
        }
        for (uint32_t t = 0; t <= full; t++)
            sums[t] = 0;
        for (int u = 0; u < c.nlisted; u++) {
            if (j == i && u == a)
                continue;
            for (int p = 0; p < (m + 7) / 8; p++)
                sig[p] = 0;
            add_value(sig, m, bits[j], c.hashes[u]);
            uint32_t mask = 0;
            for (int k = 0; k < b; k++)
                if (bit_set(sig, pos[k]))
                    mask |= 1u << k;
            sums[mask] += c.freqs[u] / total / norm;
        }
        // sums[X] = the listed values' share whose bits among a's are within X.
        for (int k = 0; k < b; k++)
            for (uint32_t x = 0; x <= full; x++)
                if (x & (1u << k))
                    sums[x] += sums[x ^ (1u << k)];
        for (uint32_t t = 0; t <= full; t++) {
            int size = __builtin_popcount(t);
            prod[t] *= sums[full & ~t] + rest / norm * covered(m - size, m, bits[j]);
        }
    }
    double rate = 0;
    for (uint32_t t = 0; t <= full; t++)
        rate += (__builtin_popcount(t) & 1) ? -prod[t] : prod[t];
    return rate < 0 ? 0 : (rate > 1 ? 1 : rate);
}

} // namespace

namespace {

bool arguments_ok(int m, const uint16_t *bits, int ncols, const ColumnValues *cols) noexcept
{
    if (m < 1 || m > kMaxSignatureBits || ncols < 1 || ncols > kMaxColumns)
        return false;
    for (int j = 0; j < ncols; j++)
        if (bits[j] < 1 || bits[j] > m || cols[j].nlisted < 0)
            return false;
    return true;
}

} // namespace

bool sample_row_fill(int m, const uint16_t *bits, int ncols, const ColumnValues *cols,
                     uint32_t *hist) noexcept
{
    if (!arguments_ok(m, bits, ncols, cols))
        return false;
    uint8_t sig[kMaxSignatureBytes];
    double totals[kMaxColumns];
    for (int j = 0; j < ncols; j++)
        totals[j] = column_total(cols[j]);
    for (int k = 0; k <= m; k++)
        hist[k] = 0;
    Sampler rng;
    for (int r = 0; r < kSampledRows; r++) {
        for (int p = 0; p < (m + 7) / 8; p++)
            sig[p] = 0;
        for (int j = 0; j < ncols; j++) {
            const ColumnValues &c = cols[j];
            double x = rng.unit() * totals[j];
            uint64_t hash = 0;
            bool listed = false;
            for (int u = 0; u < c.nlisted && !listed; u++) {
                x -= c.freqs[u];
                if (x < 0) {
                    hash = c.hashes[u];
                    listed = true;
                }
            }
            add_value(sig, m, bits[j], listed ? hash : rng.next());
        }
        int k = 0;
        for (int p = 0; p < (m + 7) / 8; p++)
            k += __builtin_popcount(sig[p]);
        hist[k]++;
    }
    return true;
}

double expected_column_rate(int m, const uint16_t *bits, int ncols, const ColumnValues *cols,
                            int column, const uint32_t *hist, Interrupted interrupted,
                            void *arg) noexcept
{
    if (!arguments_ok(m, bits, ncols, cols) || column < 0 || column >= ncols)
        return -1;

    // A value the statistics do not list: its bits are as random as the
    // model's, the rows are not; the rate follows from how many bits a row
    // has set.
    const int b = bits[column];
    double unlisted_rate = 0;
    for (int k = b; k <= m; k++)
        unlisted_rate += hist[k] * covered(k, m, b);
    unlisted_rate /= kSampledRows;

    const ColumnValues &c = cols[column];
    double sum = 0, weight = 0;
    for (int a = 0; a < c.nlisted; a++) {
        if (interrupted && interrupted(arg))
            return kRateInterrupted;
        double rate = b <= kMaxExactBits ? listed_value_rate(m, bits, ncols, cols, column, a)
                                         : unlisted_rate;
        if (rate < 0)
            continue;
        sum += rate;
        weight += 1;
    }
    double unlisted = c.distinct - c.nlisted;
    if (unlisted > 0) {
        sum += unlisted * unlisted_rate;
        weight += unlisted;
    }
    return weight > 0 ? sum / weight : 0;
}

double predicted_index_pages(double rows, int length, int ncolumns, const double *distinct,
                             double filter_bits_per_key, double tid_bytes) noexcept
{
    if (!(rows > 0) || length < 1 || length > kMaxSignatureBits || ncolumns < 1 ||
        ncolumns > kMaxColumns)
        return 1; // the metapage
    // No index holds more rows than its directory has segments for.
    const double most = static_cast<double>(kMaxSegments) * kSegmentRows;
    if (rows > most)
        rows = most;
    // As a serial build lays them out: full segments, then the last rows
    // a segment of their own or pending pages (tail_segment_rows).
    const RowPageGeometry pending = row_page_geometry(
        static_cast<uint32_t>(signature_bytes(length)),
        filter_bits_per_key > 0 ? static_cast<uint32_t>(ncolumns) : 0);
    double full = std::floor(rows / kSegmentRows);
    double tail = rows - full * kSegmentRows;
    double pending_pages = 0;
    if (tail > 0 && tail < static_cast<double>(tail_segment_rows(
                               static_cast<uint32_t>(length), static_cast<uint32_t>(full),
                               pending.capacity, kSegmentRows, true)))
        pending_pages = std::ceil(tail / pending.capacity);
    double pages = 1 + pending_pages;
    double segments = full;
    for (int part = 0; part < 2; part++) {
        double seg_rows = part == 0 ? kSegmentRows : tail;
        double count = part == 0 ? full : (pending_pages == 0 && tail > 0 ? 1 : 0);
        if (count == 0)
            continue;
        if (part == 1)
            segments += 1;
        // Header, slice pages (packed), live bits, compressed TIDs.
        const uint32_t nrows = static_cast<uint32_t>(seg_rows);
        double per_segment =
            1 + slice_page_count(static_cast<uint32_t>(length), packed_slices_per_page(nrows)) + 1 +
            std::ceil(seg_rows * tid_bytes / kBlockSize);
        if (filter_bits_per_key > 0) {
            double filter_bytes = 0;
            for (int i = 0; i < ncolumns; i++) {
                // Distinct values a segment holds if the table's rows
                // fall at random, each value in rows / d of them: a value
                // misses the segment's seg_rows with (1 - seg_rows / rows)
                // to that power (every value of a unique column is in one
                // segment; of a one-segment table, all of them).
                double d = distinct[i] >= 1 ? std::min(distinct[i], rows) : 1; // NaN: 1
                double in_segment =
                    d <= 1 || seg_rows >= rows
                        ? d
                        : d * -std::expm1(rows / d * std::log1p(-seg_rows / rows));
                double blocks = filter_blocks(static_cast<uint64_t>(std::ceil(in_segment)),
                                              filter_bits_per_key, kMaxFilterBlocks);
                filter_bytes += blocks * kFilterBlockBytes;
            }
            per_segment += filter_bytes / kBlockSize;
        }
        pages += count * per_segment;
    }
    // A build puts up to kGroupSlots segments' filters in a group, which
    // has a header page of its own; past 224 segments, directory pages.
    if (filter_bits_per_key > 0)
        pages += std::ceil(segments / kGroupSlots);
    pages += directory_pages(static_cast<uint32_t>(segments));
    return std::ceil(pages);
}

} // namespace bloomidx
