// Prints the false-positive rate core/sizing.cpp predicts, for benchmarks
// that compare it with the measured one:
//   fpr_formula <length> <ncols> <bits per column, comma-separated> <query columns, comma-separated, 1-based>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/sizing.hpp"

int main(int argc, char **argv)
{
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s length ncols bits,bits,... col,col,...\n", argv[0]);
        return 2;
    }
    int m = std::atoi(argv[1]);
    int ncols = std::atoi(argv[2]);
    uint16_t bits[32] = {};
    int n = 0;
    for (char *tok = std::strtok(argv[3], ","); tok && n < 32; tok = std::strtok(nullptr, ","))
        bits[n++] = static_cast<uint16_t>(std::atoi(tok));
    for (int i = n; i < ncols && i < 32; i++)
        bits[i] = bits[n - 1]; // the last value repeats
    uint32_t mask = 0;
    for (char *tok = std::strtok(argv[4], ","); tok; tok = std::strtok(nullptr, ","))
        mask |= 1u << (std::atoi(tok) - 1);
    double p = bloomidx::false_positive_rate(m, bits, ncols, mask);
    if (p < 0) {
        std::fprintf(stderr, "arguments out of range\n");
        return 2;
    }
    std::printf("%.6g\n", p);
    return 0;
}
