// A/B comparison of two sets of runs: runs matched by configuration, the ratio of mean
// step time B/A with a 95% interval and the t-test behind it (stats.h, meanRatio), and a
// verdict that calls a difference only when it is beyond noise, i.e. when the interval
// lies wholly above or below 1.
#pragma once

#include "lmprof/engine/records.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lmprof::engine {

enum class Verdict { Same, Faster, Slower, Untestable };
std::string_view toString(Verdict v);

inline constexpr double kSignificance = 0.05;

struct ComparedRun {
    RunResult a;
    RunResult b;
    RatioInterval stepRatio; // mean total_ms of B / A over measured steps
    WelchTest welch;         // stepRatio.test: the verdict, p and interval agree
    Verdict verdict = Verdict::Untestable;
};

struct Comparison {
    std::vector<ComparedRun> matched;
    std::vector<RunResult> onlyA;
    std::vector<RunResult> onlyB;
    int regressions() const;
};

// The verdict on a ratio of na and nb measurements: untestable with fewer than two a side,
// a ratio that is not a positive number or no p; else within noise unless p < kSignificance,
// then faster or slower by the ratio. compareRuns and lmprof-cli ratio both say it.
Verdict verdictOf(const RatioInterval& r, size_t na, size_t nb);

// Same model dimensions, context, batch, precision, mode, data-parallel request, execution
// variants (those not at their default) and the plain fields marked inComparisonKey (seed,
// threads; config_fields.cpp). Device and steps may differ.
std::string configKey(const RunConfig& config);

// Runs that trained the same model on the same data whatever their precision: the
// configuration but its precision and step counts, with the seed and the kind of device
// (weights drawn on a CPU differ from those drawn on a GPU). Their loss curves overlay.
std::string numericsKey(const RunResult& run);
// The largest |loss a - loss b| over the step indices both recorded a loss for; nullopt
// when they share none, NaN when a shared loss is not finite (it overflowed).
std::optional<double> maxLossDifference(const RunResult& a, const RunResult& b);

// What compareRuns pairs runs by: configKey for the engine's runs; for a watched script's run
// (RunResult::source) its model class and parameter count, precision and mode, so that it
// pairs only with runs of the same script's model.
std::string pairKey(const RunResult& run);

// One pair, compared whatever their keys: the pairs compareRuns makes, and a pair the user
// names (compare A.json:ID B.json:ID, the window's pick), such as a watched run against the
// engine's reference run.
ComparedRun compareTwo(const RunResult& a, const RunResult& b);

// The engine's run at a watched run's size (docs/WATCH.md, "Against the reference"): its
// model's dimensions, context and batch, its precision, mode train, on its device, with
// the engine's warmup and `measureSteps`. nullopt, with `why`, for a run that has no
// dimensions (its source's note) or is not watched.
std::optional<RunConfig> referenceConfig(const RunResult& watched, int measureSteps,
                                         std::string& why);

// One pair phase by phase (forward, backward, optimizer, then the whole step): each phase's
// means over the measured steps, the ratio B/A with its interval and test, and the verdict.
// Your implementation against the reference engine, where the step's ratio alone would not
// say which phase differs.
struct PhaseComparison {
    std::string phase; // "forward", ..., "step"
    double aMs = 0.0, bMs = 0.0;
    RatioInterval ratio;
    Verdict verdict = Verdict::Untestable;
};
std::vector<PhaseComparison> comparePhases(const RunResult& a, const RunResult& b);

// Pairs each ok run of A with the first unused ok run of B with the same pairKey.
Comparison compareRuns(std::span<const RunResult> a, std::span<const RunResult> b);

// Its tables: writeComparison in report.h.

} // namespace lmprof::engine
