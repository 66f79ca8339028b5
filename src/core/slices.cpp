#include "slices.hpp"

#include <cstring>

#include "core_guard.hpp"

namespace bloomidx {

namespace {

#if defined(__GNUC__) || defined(__clang__)
#define BLOOMIDX_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BLOOMIDX_ALWAYS_INLINE inline
#endif

// The bits set in a slice line's words.  Debian builds for the x86-64
// baseline, which lacks the popcnt instruction, so __builtin_popcountll
// is libgcc's table lookup: counting a scan's candidates took 15 % of a
// warm 2-column hit (5,000 hits on 10 M rows of data set A: 55 against 47
// microseconds each).  Where the CPU has popcnt (nearly every x86-64 since
// 2008), checked once at run time as PostgreSQL's pg_popcount64 does, the
// same loop counts, inlined into a function built for it.
BLOOMIDX_ALWAYS_INLINE uint32_t count_line_portable(const uint64_t *line) noexcept
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < kSliceLineWords; w++)
        n += static_cast<uint32_t>(__builtin_popcountll(line[w]));
    return n;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same loop, inlined where the popcnt instruction may be used.
__attribute__((target("popcnt"))) uint32_t count_line_popcnt(const uint64_t *line) noexcept
{
    return count_line_portable(line);
}

bool cpu_has_popcnt() noexcept
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}

const bool kCpuHasPopcnt = cpu_has_popcnt();

inline uint32_t count_line(const uint64_t *line) noexcept
{
    return kCpuHasPopcnt ? count_line_popcnt(line) : count_line_portable(line);
}
#else
inline uint32_t count_line(const uint64_t *line) noexcept
{
    return count_line_portable(line);
}
#endif

// Transposes a 64 x 64 bit matrix in place: bit j of a[r] trades places
// with bit r of a[j] (Hacker's Delight, 7-3: swaps of ever smaller blocks).
inline void transpose64(uint64_t a[64]) noexcept
{
    uint64_t m = 0x00000000FFFFFFFFull;
    for (uint32_t j = 32; j != 0; j >>= 1, m ^= m << j)
        for (uint32_t k = 0; k < 64; k = ((k | j) + 1) & ~j) {
            const uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
            a[k] ^= t << j;
            a[k | j] ^= t;
        }
}

// Up to 8 bytes at p as a little-endian word (bit j = signature bit j).
inline uint64_t load_bits(const uint8_t *p, uint32_t n) noexcept
{
    uint64_t w = 0;
    if (n >= 8)
        std::memcpy(&w, p, 8);
    else
        std::memcpy(&w, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

} // namespace

void transpose_signatures(const uint8_t *signatures, size_t stride, uint32_t nrows,
                          uint32_t sig_bytes, uint32_t nslices, uint64_t *const *slices) noexcept
{
    if (nrows > kSegmentRows)
        nrows = kSegmentRows;
    const uint32_t nbytes = (nslices + 7) / 8 < sig_bytes ? (nslices + 7) / 8 : sig_bytes;
    // 64 rows by 64 slices at a time: one word of each of the 64 slices.
    uint64_t a[64];
    for (uint32_t first = 0; first < nslices; first += 64) {
        const uint32_t byte = first / 8;
        if (byte >= nbytes)
            break;
        const uint32_t take = nbytes - byte < 8 ? nbytes - byte : 8;
        const uint32_t width = nslices - first < 64 ? nslices - first : 64;
        for (uint32_t base = 0; base < nrows; base += 64) {
            const uint32_t n = nrows - base < 64 ? nrows - base : 64;
            for (uint32_t r = 0; r < n; r++)
                a[r] = load_bits(signatures + static_cast<size_t>(base + r) * stride + byte, take);
            for (uint32_t r = n; r < 64; r++)
                a[r] = 0;
            transpose64(a);
            for (uint32_t j = 0; j < width; j++)
                slices[first + j][base / 64] |= a[j];
        }
    }
}

namespace {

// line &= the AND of a's slices over line `l`; false once the line is zero
// (then the rest of a's slices are not read).
inline bool and_line(uint64_t *line, const SliceAnd &a, uint32_t l) noexcept
{
    const size_t first = static_cast<size_t>(l) * kSliceLineWords;
    for (uint32_t s = 0; s < a.count; s++) {
        const uint64_t *src = a.slices[s] + first;
        uint64_t any = 0;
        for (uint32_t w = 0; w < kSliceLineWords; w++) {
            line[w] &= src[w];
            any |= line[w];
        }
        if (any == 0)
            return false;
    }
    return true;
}

} // namespace

uint32_t match_slices(const SliceAnd &base, const SliceOr *lists, uint32_t nlists,
                      const uint64_t *live, uint32_t nrows, uint64_t *out) noexcept
{
    if (nrows > kSegmentRows)
        nrows = kSegmentRows;
    const uint32_t lines = slice_lines(nrows);
    uint32_t candidates = 0;

    std::memset(out, 0, kSliceWords * sizeof(uint64_t));
    for (uint32_t l = 0; l < lines; l++) {
        uint64_t line[kSliceLineWords];
        std::memcpy(line, live + static_cast<size_t>(l) * kSliceLineWords, sizeof line);
        bool alive = and_line(line, base, l);
        for (uint32_t i = 0; alive && i < nlists; i++) {
            uint64_t any_element[kSliceLineWords] = {};
            for (uint32_t e = 0; e < lists[i].count; e++) {
                uint64_t element[kSliceLineWords];
                std::memcpy(element, line, sizeof element);
                if (and_line(element, lists[i].elements[e], l))
                    for (uint32_t w = 0; w < kSliceLineWords; w++)
                        any_element[w] |= element[w];
            }
            uint64_t any = 0;
            for (uint32_t w = 0; w < kSliceLineWords; w++) {
                line[w] = any_element[w];
                any |= line[w];
            }
            alive = any != 0;
        }
        if (!alive)
            continue;
        // Rows past nrows are never candidates, whatever the page holds.
        if ((l + 1) * kSliceLineRows > nrows)
            for (uint32_t w = 0; w < kSliceLineWords; w++) {
                uint32_t row0 = l * kSliceLineRows + w * 64;
                if (row0 >= nrows)
                    line[w] = 0;
                else if (nrows - row0 < 64)
                    line[w] &= (uint64_t{1} << (nrows - row0)) - 1;
            }
        candidates += count_line(line);
        std::memcpy(out + static_cast<size_t>(l) * kSliceLineWords, line, sizeof line);
    }
    return candidates;
}

namespace {

// Calls row(r) for each row r set in both words and mask, over the lines
// that hold rows [0, nrows) (a packed slice ends there); false, calling
// nothing more, at a masked row at or past nrows: a damaged slice.
template <typename RowFn>
bool for_each_masked_row(const uint64_t *words, const uint64_t *mask, uint32_t nrows, RowFn row) noexcept
{
    const uint32_t nwords = slice_lines(nrows < kSegmentRows ? nrows : kSegmentRows) * kSliceLineWords;
    for (uint32_t w = 0; w < nwords; w++) {
        uint64_t bits = words[w] & mask[w];
        while (bits != 0) {
            const uint32_t r = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
            if (r >= nrows)
                return false;
            row(r);
        }
    }
    return true;
}

} // namespace

bool untranspose_slice(const uint64_t *words, const uint64_t *live, uint32_t nrows,
                       uint32_t slice, const uint32_t *slot, uint8_t *signatures,
                       uint32_t sig_bytes) noexcept
{
    const uint8_t bit = static_cast<uint8_t>(1u << (slice % 8));
    return for_each_masked_row(words, live, nrows, [&](uint32_t r) {
        signatures[static_cast<size_t>(slot[r]) * sig_bytes + slice / 8] |= bit;
    });
}

bool count_slice_bits(const uint64_t *words, const uint64_t *mask, uint32_t nrows,
                      uint16_t *counts) noexcept
{
    return for_each_masked_row(words, mask, nrows, [&](uint32_t r) { counts[r]++; });
}

uint32_t candidate_rows(const uint64_t *words, uint32_t *rows) noexcept
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < kSliceWords; w++) {
        uint64_t bits = words[w];
        while (bits != 0) {
            rows[n++] = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
            bits &= bits - 1;
        }
    }
    return n;
}

} // namespace bloomidx
