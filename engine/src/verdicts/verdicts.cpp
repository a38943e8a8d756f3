// The verdict rules (docs/VERDICTS.md): each kind's statistic over the measured steps, its
// 95% interval, its thresholds, and the words a person reads.

#include "lmprof/engine/verdicts.h"

#include "verdicts/rules.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lmprof::engine {

namespace {

using namespace verdict_rules;

bool isCuda(const RunResult& run) {
    return run.resolvedDevice.rfind("cuda", 0) == 0 ||
           (run.source && run.source->device.rfind("cuda", 0) == 0);
}

void inputBound(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    const bool hasData = std::any_of(steps.s.begin(), steps.s.end(),
                                     [](const StepRecord* s) { return s->dataMs.has_value(); });
    if (!hasData) {
        return; // the engine's steps have no loader
    }
    const char* rule = "the loader's wait is at least 10% of the step (20%: critical) and at "
                       "least 1 ms";
    if (steps.n() < kInput.minSteps) {
        out.push_back(abstained(VerdictKind::InputBound, steps, kInput, chart::kStepTimes, rule));
        return;
    }
    double data = 0.0;
    double total = 0.0;
    for (const auto* s : steps.s) {
        data += s->dataMs.value_or(0.0);
        total += s->totalMs;
    }
    // Under a millisecond between steps is the loop's own Python (making a batch of random
    // ids, logging), not a loader that more workers would speed up.
    if (data / steps.n() < kInputFloorMs) {
        return;
    }
    RunVerdict v = base(VerdictKind::InputBound, steps, chart::kStepTimes);
    const Estimate e = shareOf(steps, [](const StepRecord& s) { return s.dataMs.value_or(0.0); });
    if (!grade(v, e, kInput)) {
        return;
    }
    v.unit = "share";
    v.rule = rule;
    v.evidence = "data wait " + ms(data / steps.n()) + " of a " + ms(total / steps.n()) +
                 " step, " + stepsText(steps);
    v.advice = "the step waits for its batch: raise the DataLoader's num_workers, set "
               "pin_memory=True and persistent_workers=True, or prepare the data ahead "
               "(pre-tokenized shards, prefetch_factor)";
    (void)run;
    out.push_back(std::move(v));
}

void optimizerBound(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    if (run.config.mode != Mode::Train) {
        return;
    }
    const char* rule = "the optimizer's step is at least 25% of the step (40%: critical)";
    if (steps.n() < kOptimizer.minSteps) {
        out.push_back(
            abstained(VerdictKind::OptimizerBound, steps, kOptimizer, chart::kStepTimes, rule));
        return;
    }
    RunVerdict v = base(VerdictKind::OptimizerBound, steps, chart::kStepTimes);
    if (!grade(v, shareOf(steps, [](const StepRecord& s) { return s.optimizerMs; }), kOptimizer)) {
        return;
    }
    const std::string name =
        run.source && run.source->optimizer ? *run.source->optimizer : std::string("AdamW");
    v.unit = "share";
    v.rule = rule;
    v.evidence = "optimizer " + percent(v.value) + " of the step (" +
                 ms(v.value * run.summary.totalMs.mean) + " a step), " + stepsText(steps);
    v.advice = isCuda(run)
                   ? name + " updates each parameter with its own kernels: construct it with "
                            "fused=True (or foreach=True), and let parameter groups share settings"
                   : name + " updates each parameter in its own loop: construct it with "
                            "foreach=True, and fewer, larger parameter tensors help";
    out.push_back(std::move(v));
}

void hostBound(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    const bool hasKernels = std::any_of(steps.s.begin(), steps.s.end(), [](const StepRecord* s) {
        return s->kernelMs.has_value();
    });
    if (!isCuda(run) || !hasKernels) {
        return;
    }
    const char* rule = "the GPU is idle at least 20% of the step (50%: critical)";
    if (steps.n() < kHost.minSteps) {
        out.push_back(abstained(VerdictKind::HostBound, steps, kHost, chart::kTelemetry, rule));
        return;
    }
    RunVerdict v = base(VerdictKind::HostBound, steps, chart::kTelemetry);
    const Estimate e = shareOf(steps, [](const StepRecord& s) {
        return std::max(0.0, s.totalMs - std::min(s.totalMs, s.kernelMs.value_or(0.0)));
    });
    if (!grade(v, e, kHost)) {
        return;
    }
    v.unit = "share";
    v.rule = rule;
    v.evidence = "kernels run " + percent(1.0 - v.value) + " of the step, the GPU waits " +
                 ms(v.value * run.summary.totalMs.mean) + " a step, " + stepsText(steps);
    v.advice = "the host cannot launch kernels fast enough: a larger batch per step, CUDA "
               "graphs (torch.compile mode=\"reduce-overhead\", or the engine's cuda_graphs), "
               "and no .item() or print of a tensor inside the step";
    out.push_back(std::move(v));
}

double mean(const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

int64_t capacityOf(const RunResult& run) {
    int64_t total = 0;
    for (const auto& m : run.memoryTimeline) {
        total = std::max(total, m.deviceTotal);
    }
    return total;
}

void memoryCreep(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    std::vector<double> x;
    std::vector<double> y;
    for (const auto* s : steps.s) {
        if (s->peakAllocatedBytes > 0) {
            x.push_back(s->index);
            y.push_back(static_cast<double>(s->peakAllocatedBytes));
        }
    }
    if (x.empty()) {
        return;
    }
    const char* rule = "the per-step peak of the later half of the steps grows by at least 1% "
                       "(and 1 MiB) per 100 steps, by the median of its pairwise slopes";
    if (steps.n() < kCreep.minSteps) {
        out.push_back(abstained(VerdictKind::MemoryCreep, steps, kCreep, chart::kMemory, rule));
        return;
    }
    // A leak grows to the end; an allocator settling in (a process's resident set, caches
    // filling) grows early and stops. So only the later half is judged.
    const auto half = static_cast<std::ptrdiff_t>(x.size() / 2);
    x.erase(x.begin(), x.begin() + half);
    y.erase(y.begin(), y.begin() + half);
    const double level = mean(y);
    const Estimate slope = medianSlopeOf(x, y);
    // Per 100 steps, over the mean peak: the rule's scale; at least 1 MiB besides.
    const double floor = std::max(kCreep.warn, kMiB / std::max(level, 1.0));
    const Estimate rel{slope.value * 100.0 / level, slope.low * 100.0 / level,
                       slope.high * 100.0 / level};
    RunVerdict v = base(VerdictKind::MemoryCreep, steps, chart::kMemory);
    if (!grade(v, rel, Rule{floor, 0.0, kCreep.minSteps})) {
        return;
    }
    v.value = slope.value * 100.0;
    v.low = slope.low * 100.0;
    v.high = slope.high * 100.0;
    v.threshold = floor * level;
    v.unit = "bytes/100 steps";
    v.rule = rule;
    const double mx = (x.front() + x.back()) / 2.0;
    const double fittedEnd = level + slope.value * (x.back() - mx);
    v.evidence = "the fitted peak goes from " +
                 formatBytes(bytesAt(level + slope.value * (x.front() - mx))) + " to " +
                 formatBytes(bytesAt(fittedEnd)) + ", steps " +
                 std::to_string(static_cast<int64_t>(x.front())) + "-" +
                 std::to_string(static_cast<int64_t>(x.back()));
    v.firstStep = static_cast<int>(x.front());
    if (const int64_t capacity = capacityOf(run); capacity > 0 && slope.value > 0.0) {
        // Past the device already, or so slow that it never gets there in a run: said so,
        // and never cast out of an integer's range.
        const double stepsLeft =
            std::clamp((static_cast<double>(capacity) - fittedEnd) / slope.value, 0.0, 1e12);
        v.evidence +=
            "; at this rate it reaches the device's " + formatBytes(capacity) +
            (stepsLeft >= 1e12
                 ? " beyond step 10^12"
                 : " near step " + std::to_string(steps.last() + static_cast<int64_t>(stepsLeft)));
        if (v.certainty == Certainty::Firm && stepsLeft < 10000.0) {
            v.severity = Severity::Critical;
        }
    }
    v.advice = "something keeps memory from one step to the next: usually a tensor kept with "
               "its graph (losses.append(loss) instead of loss.item() or loss.detach()), a "
               "growing cache, or hooks that store activations";
    out.push_back(std::move(v));
}

void memoryPressure(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    const int64_t capacity = capacityOf(run);
    if (capacity <= 0 || steps.n() == 0) {
        return;
    }
    int64_t peak = 0;
    for (const auto* s : steps.s) {
        peak = std::max(peak, std::max(s->peakReservedBytes, s->peakAllocatedBytes));
    }
    const double share = static_cast<double>(peak) / static_cast<double>(capacity);
    RunVerdict v = base(VerdictKind::MemoryPressure, steps, chart::kMemoryBreakdown);
    // A maximum of what was measured, not an estimate: its interval is the point.
    if (!grade(v, Estimate{share, share, share}, kPressure)) {
        return;
    }
    v.unit = "share";
    v.rule = "the allocator's peak reaches 90% of the device (97%: critical)";
    v.evidence =
        "peak " + formatBytes(peak) + " of " + formatBytes(capacity) + ", " + stepsText(steps);
    v.advice = "a larger batch or a longer context will not fit: activation checkpointing, "
               "bf16 autocast, a fused attention (SDPA), or gradient accumulation over smaller "
               "micro-batches";
    out.push_back(std::move(v));
}

// The first step that compiled made the graphs; each later one compiled again. Counted from
// the compiled steps themselves: a watched script's warmup grows by its compiled steps, so
// the warmup cannot tell a compile from a recompile.
void recompiles(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    if (!run.source || !run.source->torchCompile) {
        return;
    }
    int compiled = 0;
    int first = 0;
    for (const auto& s : run.steps) {
        if (s.compiled) {
            first = compiled == 1 ? s.index : first; // the first recompile
            ++compiled;
        }
    }
    const int late = std::max(0, compiled - 1);
    RunVerdict v = base(VerdictKind::Recompiles, steps, chart::kStepTimes);
    const double count = late;
    if (!grade(v, Estimate{count, count, count}, kRecompiles)) {
        return;
    }
    v.unit = "steps";
    v.rule = "torch.compile compiles again after its first compile, at least twice (7 times: "
             "with the first, the 8 graphs of torch._dynamo's cache, after which the function "
             "runs eager)";
    v.evidence = std::to_string(late) +
                 " steps compiled again after the first compile, the "
                 "first of them at step " +
                 std::to_string(first);
    v.firstStep = first;
    v.advice = "something the compiled function guards on changes between steps (a shape, a "
               "Python number, a dtype): pad inputs to fixed shapes, pass dynamic=True, or "
               "run with TORCH_LOGS=recompiles to see which guard fails";
    out.push_back(std::move(v));
}

} // namespace

std::vector<RunVerdict> judgeRun(const RunResult& run) {
    using namespace verdict_rules;
    std::vector<RunVerdict> out;
    if (run.status != RunStatus::Ok && run.status != RunStatus::Cancelled) {
        return out;
    }
    const Steps steps = measuredOf(run);
    if (steps.n() == 0) {
        return out;
    }
    const Stalls stalls = findStalls(steps);
    const Steps calm = withoutStalls(steps, stalls);
    inputBound(run, calm, out);
    optimizerBound(run, calm, out);
    hostBound(run, calm, out);
    memoryCreep(run, steps, out);
    memoryPressure(run, steps, out);
    recompiles(run, steps, out);
    ddpStraggler(run, out);
    judgeStepTimes(run, steps, stalls, calm, out);
    std::stable_sort(out.begin(), out.end(), [](const RunVerdict& a, const RunVerdict& b) {
        const auto rank = [](const RunVerdict& v) {
            return v.certainty == Certainty::Abstained ? 3 : 2 - static_cast<int>(v.severity);
        };
        return rank(a) < rank(b);
    });
    return out;
}

std::string verdictValueText(const RunVerdict& v, double value) {
    if (v.unit == "share") {
        return verdict_rules::percent(value);
    }
    if (v.unit == "bytes/100 steps") {
        return (value < 0 ? "-" : "") + formatBytes(verdict_rules::bytesAt(std::abs(value)));
    }
    if (v.unit == "ms/100 steps") {
        return verdict_rules::ms(value);
    }
    return formatFixed(value, value == std::floor(value) ? 0 : 1);
}

std::string verdictLine(const RunVerdict& v) {
    std::string line = std::string(toString(v.severity)) + " " + std::string(toString(v.kind));
    if (v.certainty == Certainty::Abstained) {
        return line + ": abstains, " + v.evidence;
    }
    if (v.certainty == Certainty::Likely) {
        line += " (likely)";
    }
    line += ": " + verdictValueText(v, v.value);
    if (v.low != v.high) {
        line += " [" + verdictValueText(v, v.low) + ", " + verdictValueText(v, v.high) + "]";
    }
    if (!v.unit.empty() && v.unit != "share" && v.unit.find("100 steps") != std::string::npos) {
        line += " per 100 steps";
    }
    return line + "; " + v.evidence;
}

std::string verdictsText(const std::vector<RunVerdict>& verdicts) {
    std::string all;
    for (const auto& v : verdicts) {
        all += (all.empty() ? "" : "; ") + std::string(toString(v.severity)) + " " +
               std::string(toString(v.kind)) + " " + std::string(toString(v.certainty));
        if (v.certainty != Certainty::Abstained) {
            all += " " + formatFixed(v.value, 4) + " [" + formatFixed(v.low, 4) + ", " +
                   formatFixed(v.high, 4) + "]";
        }
    }
    return all;
}

} // namespace lmprof::engine
