// Descriptive statistics of step times and the run summary built from them.

#include "lmprof/engine/stats.h"

#include "lmprof/engine/records.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lmprof::engine {

double quantileSorted(std::span<const double> sorted, double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

PhaseStats computeStats(std::span<const double> values) {
    PhaseStats s;
    s.n = static_cast<int>(values.size());
    if (values.empty()) {
        return s;
    }
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / s.n;
    if (s.n > 1) {
        double ss = 0.0;
        for (double v : sorted) {
            ss += (v - s.mean) * (v - s.mean);
        }
        s.std = std::sqrt(ss / (s.n - 1));
    }
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = quantileSorted(sorted, 0.5);
    s.p95 = quantileSorted(sorted, 0.95);
    s.iqr = quantileSorted(sorted, 0.75) - quantileSorted(sorted, 0.25);
    s.cv = s.mean != 0.0 ? s.std / s.mean : 0.0;
    s.noisy = s.median > 0.0 && s.iqr / s.median > kNoisyIqrRatio;
    return s;
}

RunSummary summarize(const RunConfig& config, const std::vector<StepRecord>& steps,
                     std::optional<double> devicePeakFlops) {
    std::vector<double> fwd, bwd, opt, total;
    RunSummary summary;
    // Peaks come from the measured steps, or from the warmup steps of a run cancelled or
    // failed before any measured step finished.
    const bool anyMeasured =
        std::any_of(steps.begin(), steps.end(), [](const StepRecord& s) { return !s.warmup; });
    for (const auto& s : steps) {
        if (s.warmup == anyMeasured) {
            continue;
        }
        summary.peakBytes.forward = std::max(summary.peakBytes.forward, s.phasePeakBytes.forward);
        summary.peakBytes.backward =
            std::max(summary.peakBytes.backward, s.phasePeakBytes.backward);
        summary.peakBytes.optimizer =
            std::max(summary.peakBytes.optimizer, s.phasePeakBytes.optimizer);
    }
    for (const auto& s : steps) {
        if (s.warmup) {
            continue;
        }
        fwd.push_back(s.forwardMs);
        bwd.push_back(s.backwardMs);
        opt.push_back(s.optimizerMs);
        total.push_back(s.totalMs);
    }
    summary.forwardMs = computeStats(fwd);
    summary.backwardMs = computeStats(bwd);
    summary.optimizerMs = computeStats(opt);
    summary.totalMs = computeStats(total);
    const double meanS = summary.totalMs.mean / 1000.0;
    if (meanS > 0.0) {
        const double tokens = static_cast<double>(config.batchSize * config.contextLength);
        summary.tokensPerS = tokens / meanS;
        const double flopsPerS = stepFlops(config) / meanS;
        summary.tflops = flopsPerS / 1e12;
        if (devicePeakFlops && *devicePeakFlops > 0.0) {
            summary.mfu = flopsPerS / *devicePeakFlops;
        }
    }
    return summary;
}

} // namespace lmprof::engine
