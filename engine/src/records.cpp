// Names of run statuses as they appear in JSON and reports.

#include "lmprof/engine/records.h"

#include "enum_names.h"
#include "lmprof/engine/format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace lmprof::engine {

constexpr EnumNames<RunStatus, 5> kRunStatusNames{{
    {RunStatus::Ok, "ok"},
    {RunStatus::Oom, "oom"},
    {RunStatus::Error, "error"},
    {RunStatus::Cancelled, "cancelled"},
    {RunStatus::Skipped, "skipped"},
}};

std::string_view toString(RunStatus s) {
    return nameIn(kRunStatusNames, s);
}

std::optional<RunStatus> parseRunStatus(std::string_view s) {
    return parseByName(s, kRunStatuses);
}

std::vector<std::string> throttleReasonNames(uint64_t bits, bool includeBenign) {
    // Bit values of NVML's nvmlClocksEventReason* constants.
    struct Reason {
        uint64_t bit;
        const char* name;
        bool benign;
    };
    static constexpr Reason kReasons[] = {
        {0x1, "gpu idle", true},
        {0x2, "application clocks setting", true},
        {0x4, "sw power cap", false},
        {0x8, "hw slowdown", false},
        {0x10, "sync boost", false},
        {0x20, "sw thermal slowdown", false},
        {0x40, "hw thermal slowdown", false},
        {0x80, "hw power brake slowdown", false},
        {0x100, "display clock setting", true},
    };
    std::vector<std::string> names;
    uint64_t known = 0;
    for (const auto& r : kReasons) {
        known |= r.bit;
        if ((bits & r.bit) && (includeBenign || !r.benign)) {
            names.emplace_back(r.name);
        }
    }
    if (const uint64_t unknown = bits & ~known) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(unknown));
        names.emplace_back(buf);
    }
    return names;
}

RunResult unstartedRun(std::string id, const RunConfig& config, RunStatus status, std::string why) {
    RunResult r;
    r.id = std::move(id);
    r.config = config;
    r.parameterCount = parameterCount(config.model);
    r.status = status;
    r.error = std::move(why);
    return r;
}

std::string statusText(const RunResult& run) {
    std::string text(toString(run.status));
    if (run.failedPhase) {
        text += " (" + std::string(toString(*run.failedPhase)) + ")";
    }
    return text;
}

bool isMeasured(const StepRecord& step) {
    return !step.warmup && !step.memorySnapshot && !step.opProfiled;
}

void measuredStepTimes(const std::vector<StepRecord>& steps, std::vector<double>& out,
                       double StepRecord::*field) {
    out.clear();
    for (const auto& s : steps) {
        if (isMeasured(s)) {
            out.push_back(s.*field);
        }
    }
}

std::vector<double> measuredStepTimes(const std::vector<StepRecord>& steps,
                                      double StepRecord::*field) {
    std::vector<double> out;
    measuredStepTimes(steps, out, field);
    return out;
}

double tokensPerSecond(const RunConfig& config, double stepMs) {
    const double tokens = static_cast<double>(config.batchSize * config.contextLength);
    return stepMs > 0.0 ? tokens / (stepMs / 1000.0) : 0.0;
}

int64_t tokensPerStep(const RunResult& run) {
    if (run.source) {
        return run.source->tokensPerStep.value_or(0);
    }
    return run.config.batchSize * run.config.contextLength;
}

EvaluationTotals evaluationTotals(const RunResult& run) {
    EvaluationTotals totals;
    double stepsMs = 0.0;
    auto add = [&](const std::optional<Evaluation>& e) {
        if (e) {
            ++totals.passes;
            totals.forwards += e->forwards;
            totals.ms += e->ms;
        }
    };
    for (const StepRecord& s : run.steps) {
        add(s.evaluation);
        stepsMs += s.totalMs - s.dataMs.value_or(0.0);
    }
    add(run.finalEvaluation);
    const double whole = stepsMs + totals.ms;
    totals.share = whole > 0.0 ? totals.ms / whole : 0.0;
    return totals;
}

std::string evaluationLine(const RunResult& run) {
    const EvaluationTotals t = evaluationTotals(run);
    if (t.passes == 0) {
        return "";
    }
    return std::string(run.thinned ? "in the kept steps, " : "") + std::to_string(t.passes) +
           (t.passes == 1 ? " evaluation pass (" : " evaluation passes (") +
           std::to_string(t.forwards) + (t.forwards == 1 ? " forward): " : " forwards): ") +
           formatFixed(t.ms, 1) + " ms, " + formatFixed(100.0 * t.share, 0) +
           "% of the steps' and passes' time; not in any step's data phase";
}

std::string thinnedLine(const RunResult& run) {
    if (!run.thinned) {
        return "";
    }
    return std::to_string(run.steps.size()) + " of " + std::to_string(run.thinned->recordedSteps) +
           " steps kept (the warmup, any profiled step, and 1 in " +
           std::to_string(run.thinned->every) + " of the others); the summary covers all of them";
}

double tokensPerSecond(const RunResult& run, double stepMs) {
    return stepMs > 0.0 ? static_cast<double>(tokensPerStep(run)) / (stepMs / 1000.0) : 0.0;
}

std::string runFileLabel(const RunResult& run) {
    if (!run.source) {
        return runLabel(run.config);
    }
    std::string label = run.id + "-watched";
    for (char& c : label) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
            c = '-';
        }
    }
    return label;
}

std::string runModelLabel(const RunResult& run) {
    if (run.source) {
        return (run.source->modelClass.empty() ? std::string("model") : run.source->modelClass) +
               " (watched)";
    }
    return modelLabel(run.config.model);
}

std::map<std::string, ScalarSummary> summarizeScalars(const std::vector<StepRecord>& steps) {
    std::map<std::string, std::vector<double>, std::less<>> measured;
    std::map<std::string, ScalarSummary> out;
    for (const auto& s : steps) {
        forEachScalar(s, [&](std::string_view name, double value) {
            const std::string key(name);
            out[key].last = value;
            auto& values = measured[key];
            if (isMeasured(s) && std::isfinite(value)) {
                values.push_back(value);
            }
        });
    }
    for (auto& [name, summary] : out) {
        const auto& values = measured[name];
        if (!values.empty()) {
            summary.measured = computeStats(values);
        }
    }
    return out;
}

RunSummary summarize(const RunConfig& config, const std::vector<StepRecord>& steps,
                     std::optional<double> devicePeakFlops) {
    RunSummary summary;
    summary.scalars = summarizeScalars(steps);
    // Peaks come from the steps after warmup (a snapshot step's device memory is not
    // perturbed), or from the warmup steps of a run cancelled or failed before any other
    // step finished.
    const bool anyAfterWarmup =
        std::any_of(steps.begin(), steps.end(), [](const StepRecord& s) { return !s.warmup; });
    for (const auto& s : steps) {
        if (s.warmup == anyAfterWarmup) {
            continue;
        }
        summary.peakBytes.forward = std::max(summary.peakBytes.forward, s.phasePeakBytes.forward);
        summary.peakBytes.backward =
            std::max(summary.peakBytes.backward, s.phasePeakBytes.backward);
        summary.peakBytes.optimizer =
            std::max(summary.peakBytes.optimizer, s.phasePeakBytes.optimizer);
    }
    summary.forwardMs = computeStats(measuredStepTimes(steps, &StepRecord::forwardMs));
    summary.backwardMs = computeStats(measuredStepTimes(steps, &StepRecord::backwardMs));
    summary.optimizerMs = computeStats(measuredStepTimes(steps, &StepRecord::optimizerMs));
    summary.totalMs = computeStats(measuredStepTimes(steps));
    // A watched run's data and rest phases, when its steps have them.
    const auto optionalPhase = [&](std::optional<double> StepRecord::*field) {
        std::vector<double> times;
        bool any = false;
        for (const auto& s : steps) {
            if (isMeasured(s)) {
                any = any || (s.*field).has_value();
                times.push_back((s.*field).value_or(0.0));
            }
        }
        return any ? std::optional(computeStats(times)) : std::nullopt;
    };
    summary.dataMs = optionalPhase(&StepRecord::dataMs);
    summary.restMs = optionalPhase(&StepRecord::restMs);
    // The busy share of the steps the summary's times come from, where they have kernel time.
    double kernelMs = 0.0, stepMs = 0.0;
    for (const auto& s : steps) {
        if (s.kernelMs && !s.warmup && !s.memorySnapshot && !s.opProfiled) {
            kernelMs += *s.kernelMs;
            stepMs += s.totalMs;
        }
    }
    if (stepMs > 0.0) {
        summary.gpuBusy = std::clamp(kernelMs / stepMs, 0.0, 1.0);
    }
    const double meanS = summary.totalMs.mean / 1000.0;
    if (meanS > 0.0) {
        summary.tokensPerS = tokensPerSecond(config, summary.totalMs.mean);
        const double flopsPerS = stepFlops(config) / meanS;
        summary.tflops = flopsPerS / 1e12;
        if (devicePeakFlops && *devicePeakFlops > 0.0) {
            summary.mfu = flopsPerS / *devicePeakFlops;
        }
    }
    return summary;
}

void takeStepFigures(RunSummary& summary, const RunConfig& config,
                     const std::vector<StepRecord>& steps) {
    const RunSummary fromSteps = summarize(config, steps, std::nullopt);
    summary.forwardMs = fromSteps.forwardMs;
    summary.backwardMs = fromSteps.backwardMs;
    summary.optimizerMs = fromSteps.optimizerMs;
    summary.totalMs = fromSteps.totalMs;
    summary.dataMs = fromSteps.dataMs;
    summary.restMs = fromSteps.restMs;
    summary.peakBytes = fromSteps.peakBytes;
    summary.scalars = fromSteps.scalars;
}

void summarizeOnRead(RunResult& run) {
    if (!run.source || run.thinned) {
        run.summary.scalars = summarizeScalars(run.steps); // derived, never written
        return;
    }
    takeStepFigures(run.summary, run.config, run.steps); // the scalars with the rest
    run.summary.tokensPerS = tokensPerSecond(run, run.summary.totalMs.mean);
}

std::optional<double> busyShare(const RunSummary& s) {
    return s.gpuBusy ? s.gpuBusy : s.gpuBusyNvml;
}

std::optional<bool> hostBound(const RunSummary& s) {
    const auto busy = busyShare(s);
    return busy ? std::optional(*busy < kHostBoundBelow) : std::nullopt;
}

std::optional<double> nvmlBusyShare(const RunResult& run) {
    double sum = 0.0;
    int n = 0;
    for (const auto& t : run.telemetry) {
        if (!t.gpuUtilPercent) {
            continue;
        }
        // Within a measured step that counts (the sample's time is when it was read).
        const bool inside = std::any_of(run.steps.begin(), run.steps.end(), [&](const auto& s) {
            return !s.warmup && !s.memorySnapshot && !s.opProfiled &&
                   t.tMs >= s.endMs - s.totalMs && t.tMs <= s.endMs;
        });
        if (inside) {
            sum += *t.gpuUtilPercent / 100.0;
            ++n;
        }
    }
    return n > 0 ? std::optional(std::clamp(sum / n, 0.0, 1.0)) : std::nullopt;
}

} // namespace lmprof::engine
