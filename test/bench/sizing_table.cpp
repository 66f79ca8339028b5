// Prints, as a markdown table, what false_positive_rate sizing chooses
// (core/sizing.cpp) for some column counts and rates: the README's table.
#include <cstdio>

#include "core/page_layout.hpp"
#include "core/signature.hpp"
#include "core/sizing.hpp"

int main()
{
    const int columns[] = {1, 2, 4, 6, 8, 16};
    const double rates[] = {0.01, 0.001, 0.0003, 0.0001};
    std::printf("| columns | false_positive_rate | length | bits per column | bytes per row | "
                "predicted rate, 1 column |\n|---:|---:|---:|---:|---:|---:|\n");
    for (int ncols : columns) {
        for (double rate : rates) {
            bloomidx::SizingRequest req;
            req.ncolumns = ncols;
            req.target_rate = rate;
            req.rate_given = true;
            bloomidx::SizingResult res = bloomidx::choose_sizing(req);
            if (res.status != bloomidx::SizingStatus::Ok)
                return 1;
            std::printf("| %d | %g | %d | %d | %u | %.3g %% |\n", ncols, rate, res.length, res.bits[0],
                        bloomidx::signature_bytes(res.length) + bloomidx::kTidSize,
                        100 * res.worst_rate);
        }
    }
    return 0;
}
