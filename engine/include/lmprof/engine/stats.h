// Descriptive statistics of a phase's step times (SPEC §2): the one module that computes
// them, so the CLI, the JSON and the GUI always agree.
#pragma once

#include <span>
#include <vector>

namespace lmprof::engine {

struct PhaseStats {
    int n = 0;
    double mean = 0.0;
    double std = 0.0; // sample standard deviation (n - 1); 0 when n < 2
    double median = 0.0;
    double min = 0.0;
    double max = 0.0;
    double p95 = 0.0;   // linear interpolation between order statistics
    double cv = 0.0;    // std / mean; 0 when the mean is 0
    double iqr = 0.0;   // q75 - q25, same interpolation
    bool noisy = false; // iqr / median above kNoisyIqrRatio
};

inline constexpr double kNoisyIqrRatio = 0.10;

// Quantile q in [0, 1] of already sorted values, interpolating linearly between the
// closest ranks (the "linear" method of NumPy). Requires a non-empty input.
double quantileSorted(std::span<const double> sorted, double q);

PhaseStats computeStats(std::span<const double> values);

} // namespace lmprof::engine
