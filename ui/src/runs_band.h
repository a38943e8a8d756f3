// Many runs as one: past kBandRuns selected runs, the step charts (step times, throughput)
// draw, for each step, the median of the runs and the spread around it (10th to 90th
// percentile, and least to most) instead of one line per run, which at dozens of runs is a
// tangle no one can read and costs the software renderer a frame of hundreds of ms
// (bench/README.md, "Large result sets"). No ImGui here: tests/ui/ui_logic_test.cpp.
#pragma once

#include "lmprof/ui/run_store.h"

#include <string>
#include <utility>
#include <vector>

namespace lmprof::ui {

// More selected runs than this are drawn as a band.
inline constexpr size_t kBandRuns = 12;

// One value per step across runs: of the runs that reached step i with a finite value.
struct RunsBand {
    std::vector<double> x;                 // step number
    std::vector<double> median, low, high; // low and high: the 10th and 90th percentiles
    std::vector<double> least, most;
    size_t runs = 0; // how many runs it summarises
};

// Which per-step series of a run a band is of (StepSeries::total, ::tokensPerS, ...).
using StepValues = std::vector<double> StepSeries::*;

// The band of `values` over `runs`' steps; percentiles interpolate between order
// statistics, as the engine's statistics do.
RunsBand bandAcross(const std::vector<const RunView*>& runs, StepValues values);

// bandAcross for the charts, computed again only when the runs or their step counts change
// (a finished run's band is made once, not every frame).
class RunsBandCache {
public:
    const RunsBand& of(const std::vector<RunView*>& runs, StepValues values);

private:
    std::vector<std::pair<std::string, size_t>> m_key; // each run's id and step count
    StepValues m_values = nullptr;
    RunsBand m_band;
};

} // namespace lmprof::ui
