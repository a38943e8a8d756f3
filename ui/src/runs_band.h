// Many runs as bands: past kBandRuns selected runs, the step charts (step times, throughput)
// draw, for each configuration, the median of its runs at each step and the spread around it
// (10th to 90th percentile, and least to most) instead of one line per run, which at dozens of runs
// is a tangle no one can read and costs the software renderer a frame of hundreds of ms
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

// Runs of one configuration are one band, and runs that differ stay apart: a group per
// configuration (engine::pairKey and the warmup), each in its own colour, up to
// kBandGroups. Past that the largest kBandGroups - 1 stay, and the rest are merged into one
// group the chart names ("other"), drawn grey.
inline constexpr size_t kBandGroups = 8;

struct BandGroup {
    std::string name; // what tells it from the other groups ("ctx 16 · bf16 · w1")
    size_t runs = 0;  // how many runs it holds
    size_t configurations = 1;
    bool merged = false; // the configurations past kBandGroups
    int color = 0;       // an index for ui::runColor (a merged group is drawn grey)
    RunsBand band;
};

struct GroupedBands {
    std::vector<BandGroup> groups; // in the order their first run is selected; merged last
    size_t runs = 0;
    size_t configurations = 0; // before merging
};

// The runs' groups and each one's band of `values`.
GroupedBands groupedBands(const std::vector<const RunView*>& runs, StepValues values);

// groupedBands for the charts, computed again only when the runs or their step counts
// change (a finished run's band is made once, not every frame).
class RunsBandCache {
public:
    const GroupedBands& of(const std::vector<RunView*>& runs, StepValues values);

private:
    std::vector<std::pair<std::string, size_t>> m_key; // each run's id and step count
    StepValues m_values = nullptr;
    GroupedBands m_bands;
};

} // namespace lmprof::ui
