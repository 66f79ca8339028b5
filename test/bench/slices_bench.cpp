// Measures what a query costs on one full segment (65,024 rows), bit
// slices against today's row-wise signatures, for the fills and bit
// counts the segments issue weighs (six columns, one-column rate near
// 0.001): fill 1/2 (b = 10, m = 96) and fill 1/4 (b = 5, m = 104).
//   make test/bench/slices_bench && test/bench/slices_bench
// Prints, per layout and query (1 or 2 equality columns, a miss), the
// time per segment, the bytes of slices the query touched, and the
// candidates (false positives, as the keys match no row).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/in_list.hpp"
#include "core/positions.hpp"
#include "core/signature.hpp"
#include "core/slices.hpp"

using namespace bloomidx;

namespace {

struct Layout {
    const char *name;
    uint32_t m;
    uint32_t b;
};

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

int main()
{
    const Layout layouts[] = {{"fill 1/2: m=96, b=10", 96, 10}, {"fill 1/4: m=104, b=5", 104, 5}};
    const uint32_t rows = kSegmentRows;
    const int ncols = 6, reps = 200;
    std::mt19937_64 rng(42);

    std::printf("| layout | query | slices: us/segment | row-wise: us/segment | slice bytes touched | candidates |\n");
    std::printf("|---|---|---:|---:|---:|---:|\n");
    for (const Layout &lay : layouts) {
        const int nbytes = signature_bytes(static_cast<int>(lay.m));
        std::vector<uint8_t> sigs(static_cast<size_t>(rows) * static_cast<size_t>(nbytes), 0);
        for (uint32_t r = 0; r < rows; r++)
            for (int c = 0; c < ncols; c++)
                add_value(&sigs[static_cast<size_t>(r) * static_cast<size_t>(nbytes)], lay.m, lay.b, rng());
        std::vector<std::vector<uint64_t>> slices(lay.m, std::vector<uint64_t>(kSliceWords, 0));
        std::vector<uint64_t *> out_ptrs;
        std::vector<const uint64_t *> ptrs;
        for (auto &s : slices) {
            out_ptrs.push_back(s.data());
            ptrs.push_back(s.data());
        }
        transpose_signatures(sigs.data(), static_cast<size_t>(nbytes), rows,
                             static_cast<uint32_t>(nbytes), lay.m, out_ptrs.data());
        std::vector<uint64_t> live(kSliceWords, ~uint64_t{0}), out(kSliceWords);
        std::vector<uint16_t> matches(rows);

        for (int qcols = 1; qcols <= 2; qcols++) {
            // A miss: values no row holds (fresh hashes).
            std::vector<uint8_t> query(static_cast<size_t>(nbytes), 0);
            for (int c = 0; c < qcols; c++)
                add_value(query.data(), lay.m, lay.b, rng());
            std::vector<const uint64_t *> qs;
            for (uint32_t j = 0; j < lay.m; j++)
                if (signature_test_bit(query.data(), j))
                    qs.push_back(ptrs[j]);
            SliceAnd base{qs.data(), static_cast<uint32_t>(qs.size())};

            uint32_t cand = 0;
            auto t = std::chrono::steady_clock::now();
            for (int i = 0; i < reps; i++)
                cand = match_slices(base, nullptr, 0, live.data(), rows, out.data());
            double slice_us = seconds_since(t) / reps * 1e6;

            // Bytes touched: a line of slice k is read when the AND of the
            // slices before it is non-zero there.
            size_t touched = 0;
            for (uint32_t l = 0; l < kSliceLines; l++) {
                uint64_t acc[kSliceLineWords];
                for (uint32_t w = 0; w < kSliceLineWords; w++)
                    acc[w] = ~uint64_t{0};
                for (const uint64_t *s : qs) {
                    touched += 64;
                    uint64_t any = 0;
                    for (uint32_t w = 0; w < kSliceLineWords; w++)
                        any |= (acc[w] &= s[l * kSliceLineWords + w]);
                    if (any == 0)
                        break;
                }
            }

            SignatureMask mask;
            mask.build(query.data(), nbytes);
            QueryMatcher matcher(mask, nullptr, 0);
            int rowwise = 0;
            t = std::chrono::steady_clock::now();
            for (int i = 0; i < reps; i++) {
                rowwise = 0;
                // As a scan does: page by page (509 entries a page at 80 bits).
                for (uint32_t first = 0; first < rows; first += 500) {
                    int n = static_cast<int>(rows - first < 500 ? rows - first : 500);
                    rowwise += matcher.match_array(&sigs[static_cast<size_t>(first) * static_cast<size_t>(nbytes)],
                                                   n, matches.data());
                }
            }
            double row_us = seconds_since(t) / reps * 1e6;
            if (static_cast<uint32_t>(rowwise) != cand)
                std::fprintf(stderr, "MISMATCH: %d row-wise, %u sliced\n", rowwise, cand);
            std::printf("| %s | %d column%s, miss | %.1f | %.1f | %zu of %zu | %u |\n", lay.name, qcols,
                        qcols > 1 ? "s" : "", slice_us, row_us, touched,
                        qs.size() * static_cast<size_t>(kSliceWords) * 8, cand);
        }
    }
    return 0;
}
