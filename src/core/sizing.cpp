#include "sizing.hpp"

#include <cmath>

#include "page_layout.hpp"
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

double false_positive_rate(const MetaPageData &meta, uint32_t query_columns) noexcept
{
    double rate = false_positive_rate(meta.signature_bits, meta.column_bits, meta.ncolumns,
                                      query_columns);
    return rate < 0 ? 1.0 : rate;
}

} // namespace bloomidx

namespace bloomidx {

namespace {

constexpr int kMaxChosenBits = 64; // more bits per value never pay at these sizes

struct Candidate {
    int length;
    uint16_t bits[kMaxColumns];
    double worst;
    int worst_column;
};

// The highest single-column rate over the columns in `bound` (bit i =
// column i); columns with the same bits share one rate, computed once.
void evaluate(const SizingRequest &req, uint32_t bound, Candidate &c) noexcept
{
    c.worst = 0;
    c.worst_column = 0;
    double rate_of_bits[kMaxChosenBits + 1];
    for (double &r : rate_of_bits)
        r = -1;
    for (int i = 0; i < req.ncolumns; i++) {
        if (!(bound & (1u << i)))
            continue;
        int b = c.bits[i];
        double rate;
        if (b <= kMaxChosenBits && rate_of_bits[b] >= 0)
            rate = rate_of_bits[b];
        else {
            rate = false_positive_rate(c.length, c.bits, req.ncolumns, 1u << i);
            if (b <= kMaxChosenBits)
                rate_of_bits[b] = rate;
        }
        if (rate > c.worst) {
            c.worst = rate;
            c.worst_column = i;
        }
    }
}

void set_free_bits(const SizingRequest &req, int b, Candidate &c) noexcept
{
    for (int i = 0; i < req.ncolumns; i++)
        c.bits[i] = req.bits[i] ? req.bits[i] : static_cast<uint16_t>(b);
}

int max_given_bits(const SizingRequest &req) noexcept
{
    int most = 1;
    for (int i = 0; i < req.ncolumns; i++)
        most = imax(most, req.bits[i]);
    return most;
}

// Length fixed: the free bits that minimise the worst rate.  The rate is
// unimodal in the bits, so the walk stops a few steps past the best.
Candidate best_bits_for_length(const SizingRequest &req, uint32_t bound, int length) noexcept
{
    Candidate best{};
    best.worst = 2;
    int since_best = 0;
    for (int b = 1; b <= imin(length, kMaxChosenBits) && since_best < 3; b++) {
        Candidate c{};
        c.length = length;
        set_free_bits(req, b, c);
        evaluate(req, bound, c);
        if (c.worst < best.worst) {
            best = c;
            since_best = 0;
        } else {
            since_best++;
        }
    }
    return best;
}

// Length fixed and long enough for the rate: the fewest free bits that
// meet it.  A query reads one slice per bit it tests, so of the bits that
// meet the rate the fewest are the cheapest to query (a sparser fill); the
// rate is then near the target rather than at its lowest for the length.
Candidate fewest_bits_for_length(const SizingRequest &req, uint32_t bound, int length) noexcept
{
    for (int b = 1; b <= imin(length, kMaxChosenBits); b++) {
        Candidate c{};
        c.length = length;
        set_free_bits(req, b, c);
        evaluate(req, bound, c);
        if (c.worst <= req.target_rate)
            return c;
    }
    return best_bits_for_length(req, bound, length); // unreachable: a shorter length met it
}

// Bits fixed: the shortest length (at least `from`) whose worst rate is
// at most target, or 0.  The rate falls as the length grows.
int shortest_length(const SizingRequest &req, uint32_t bound, const Candidate &shape,
                    int from) noexcept
{
    Candidate c = shape;
    c.length = kMaxSignatureBits;
    evaluate(req, bound, c);
    if (c.worst > req.target_rate)
        return 0;
    int lo = from, hi = kMaxSignatureBits; // answer in [lo, hi]
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        c.length = mid;
        evaluate(req, bound, c);
        if (c.worst <= req.target_rate)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int round_up_16(int length) noexcept
{
    return imin(kMaxSignatureBits, (length + 15) / 16 * 16);
}

SizingResult result_of(const Candidate &c, int ncolumns, SizingStatus status) noexcept
{
    SizingResult r;
    r.status = status;
    r.length = c.length;
    for (int i = 0; i < ncolumns; i++)
        r.bits[i] = c.bits[i];
    r.worst_rate = c.worst;
    r.worst_column = c.worst_column;
    return r;
}

} // namespace

namespace {

SizingResult choose(const SizingRequest &req) noexcept
{
    SizingResult bad;
    if (req.ncolumns < 1 || req.ncolumns > kMaxColumns || !(req.target_rate > 0) ||
        !(req.target_rate < 1) || req.length < 0 || req.length > kMaxSignatureBits)
        return bad;
    uint32_t all = 0, free_columns = 0;
    for (int i = 0; i < req.ncolumns; i++) {
        all |= 1u << i;
        if (req.bits[i] == 0)
            free_columns |= 1u << i;
        if (req.bits[i] > kMaxColumnBits || (req.length && req.bits[i] > req.length))
            return bad;
    }
    // A rate the user asked for binds every column; the default only the
    // columns whose bits are chosen here.
    uint32_t bound = req.rate_given ? all : free_columns;
    int target_bits = static_cast<int>(std::ceil(std::log2(1.0 / req.target_rate)));

    if (req.length && !free_columns) {
        Candidate c{};
        c.length = req.length;
        set_free_bits(req, 0, c);
        evaluate(req, all, c);
        bool missed = req.rate_given && c.worst > req.target_rate;
        return result_of(c, req.ncolumns, missed ? SizingStatus::Contradiction : SizingStatus::Ok);
    }
    if (req.length) {
        Candidate c = best_bits_for_length(req, bound, req.length);
        evaluate(req, all, c);
        bool missed = req.rate_given && c.worst > req.target_rate;
        return result_of(c, req.ncolumns, missed ? SizingStatus::LengthTooShort : SizingStatus::Ok);
    }
    if (!free_columns) {
        Candidate c{};
        set_free_bits(req, 0, c);
        int length;
        if (req.rate_given) {
            length = shortest_length(req, all, c, max_given_bits(req));
            if (length == 0) {
                c.length = kMaxSignatureBits;
                evaluate(req, all, c);
                return result_of(c, req.ncolumns, SizingStatus::Unreachable);
            }
        } else {
            // No rate to meet: half the bits set, the usual optimum.
            int total = 0;
            for (int i = 0; i < req.ncolumns; i++)
                total += req.bits[i];
            length = imax(max_given_bits(req), static_cast<int>(std::ceil(total / std::log(2.0))));
        }
        c.length = round_up_16(length);
        evaluate(req, all, c);
        return result_of(c, req.ncolumns, SizingStatus::Ok);
    }

    // Both open: for each number of bits near log2(1/rate), the shortest
    // length that meets the rate; keep the shortest of all, round it up to
    // a multiple of 16, and take the fewest bits that meet the rate there.
    int shortest = 0;
    for (int b = 1; b <= imin(target_bits + 4, kMaxChosenBits); b++) {
        Candidate shape{};
        set_free_bits(req, b, shape);
        int length = shortest_length(req, bound, shape, max_given_bits(req) > b ? max_given_bits(req) : b);
        if (length && (shortest == 0 || length < shortest))
            shortest = length;
    }
    if (shortest == 0) {
        Candidate c = best_bits_for_length(req, bound, kMaxSignatureBits);
        evaluate(req, all, c);
        return result_of(c, req.ncolumns,
                         req.rate_given ? SizingStatus::Unreachable : SizingStatus::Ok);
    }
    Candidate c = fewest_bits_for_length(req, bound, round_up_16(shortest));
    evaluate(req, all, c);
    return result_of(c, req.ncolumns, SizingStatus::Ok);
}

} // namespace

SizingResult choose_sizing(const SizingRequest &req) noexcept
{
    SizingResult res = choose(req);
    if (res.status == SizingStatus::Ok || res.status == SizingStatus::BadRequest)
        return res;

    // Which given option is in the way: leave each open in turn.  Only on
    // failure, so the extra work (a few milliseconds each) never slows a
    // build that succeeds.
    SizingRequest relaxed = req;
    if (req.length) {
        relaxed.length = 0;
        SizingResult longer = choose(relaxed);
        if (longer.status == SizingStatus::Ok && longer.length > req.length) {
            res.blame = SizingBlame::Length;
            return res;
        }
        relaxed.length = req.length;
    }
    for (int i = 0; i < req.ncolumns; i++) {
        if (!req.bits[i])
            continue;
        relaxed.bits[i] = 0;
        if (choose(relaxed).status == SizingStatus::Ok) {
            res.blame = SizingBlame::Column;
            res.blamed_column = i;
            return res;
        }
        relaxed.bits[i] = req.bits[i];
    }
    return res;
}

} // namespace bloomidx
