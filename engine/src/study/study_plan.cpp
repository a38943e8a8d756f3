// The cs336-systems study plan (study.h, docs/STUDY.md): the seeds' runs for the device at
// hand, left out where its memory cannot hold them, scaled down to the budget.

#include "enum_names.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/study.h"
#include "lmprof/engine/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <tuple>

namespace lmprof::engine {

namespace {

constexpr EnumNames<StudySection, 7> kSectionNames{{
    {StudySection::Sizes, "sizes"},
    {StudySection::Warmup, "warmup"},
    {StudySection::Precision, "precision"},
    {StudySection::Ops, "ops"},
    {StudySection::Memory, "memory"},
    {StudySection::DataParallel, "data-parallel"},
    {StudySection::Variants, "variants"},
}};

// The seeds' settings: batch 4, context 128, 5 warmup and 10 measured steps, warmup counts
// 0/1/2/5, contexts 128/256/512 for the memory of the largest model.
constexpr int64_t kBatch = 4;
constexpr int64_t kContext = 128;
constexpr int kWarmup = 5;
constexpr int kSteps = 10;
constexpr int kWarmupCounts[] = {0, 1, 2, 5};
constexpr int64_t kMemoryContexts[] = {128, 256, 512};
RunConfig base(const StudyRequest& r, const std::string& preset) {
    RunConfig c;
    c.model = *presetModel(preset);
    c.contextLength = kContext;
    c.batchSize = kBatch;
    c.warmupSteps = kWarmup;
    c.measureSteps = kSteps;
    c.device = r.device;
    c.threads = r.threads;
    return c;
}

std::string idOf(StudySection section, const RunConfig& c) {
    std::string id = std::string(toString(section)) + "-" + runLabel(c);
    if (section == StudySection::Warmup) {
        id += "-w" + std::to_string(c.warmupSteps);
    }
    return id;
}

} // namespace

std::string_view toString(StudySection s) {
    return nameIn(kSectionNames, s);
}

std::optional<StudySection> parseStudySection(std::string_view s) {
    return parseByName(s, kStudySections);
}

std::string_view sectionTitle(StudySection s) {
    switch (s) {
    case StudySection::Sizes:
        return "Forward and backward time by model size";
    case StudySection::Warmup:
        return "Warmup steps and the spread of the measured steps";
    case StudySection::Precision:
        return "bf16 mixed precision against fp32";
    case StudySection::Ops:
        return "Where the time goes: operators and kernels";
    case StudySection::Memory:
        return "Memory of the largest model by context length";
    case StudySection::DataParallel:
        return "Data-parallel training: the cost of communication";
    case StudySection::Variants:
        return "Execution variants: fused attention and CUDA graphs";
    }
    return "";
}

std::optional<double> parseStudyBudget(std::string_view text) {
    if (text.empty()) {
        return std::nullopt;
    }
    double scale = 1.0;
    std::string number(text);
    switch (text.back()) {
    case 's':
        number.pop_back();
        break;
    case 'm':
        scale = 60.0, number.pop_back();
        break;
    case 'h':
        scale = 3600.0, number.pop_back();
        break;
    default:
        break;
    }
    // Digits with at most one point: stod would also take " 5", "0x10" and "1e3".
    if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
        std::count(number.begin(), number.end(), '.') > 1) {
        return std::nullopt;
    }
    try {
        size_t used = 0;
        const double v = std::stod(number, &used);
        if (used != number.size() || !(v > 0.0) || v * scale > 7 * 24 * 3600.0) {
            return std::nullopt;
        }
        return v * scale;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::string formatStudyTime(double seconds) {
    char text[32];
    if (seconds < 90.0) {
        std::snprintf(text, sizeof(text), "%.0f s", seconds);
    } else {
        std::snprintf(text, sizeof(text), "%.1f min", seconds / 60.0);
    }
    return text;
}

StudyRequest studyRequestFor(const SessionInterface& engine, const std::string& device,
                             double budgetS, int threads) {
    StudyRequest r;
    r.device = device == "auto" ? (engine.isCuda("auto") ? "cuda:0" : "cpu") : device;
    r.cuda = engine.isCuda(r.device);
    for (const auto& d : engine.devices()) {
        r.gpus += engine.isCuda(d) && d != "auto" && d != "cuda" ? 1 : 0;
    }
    r.memoryBytes = engine.deviceMemoryBytes(r.device);
    r.budgetS = budgetS;
    r.threads = threads;
    return r;
}

StudyRate StudyRate::constant(double trainPerS) {
    return {0.0, trainPerS, trainPerS / 1.5};
}

StudyRate studyRateAt(const std::vector<StudyRate>& points, double stepFlops) {
    if (points.empty()) {
        return StudyRate::constant(1e9);
    }
    std::vector<StudyRate> sorted = points;
    std::sort(sorted.begin(), sorted.end(),
              [](const StudyRate& a, const StudyRate& b) { return a.stepFlops < b.stepFlops; });
    if (stepFlops <= sorted.front().stepFlops) {
        return sorted.front();
    }
    for (size_t i = 1; i < sorted.size(); ++i) {
        const StudyRate& a = sorted[i - 1];
        const StudyRate& b = sorted[i];
        if (stepFlops <= b.stepFlops) {
            if (!(a.stepFlops > 0.0) || !(b.stepFlops > a.stepFlops)) {
                return b;
            }
            // The straight line through the two points on log-log axes.
            const double t =
                std::log(stepFlops / a.stepFlops) / std::log(b.stepFlops / a.stepFlops);
            const auto between = [t](double ra, double rb) {
                return std::exp(std::log(ra) + t * (std::log(rb) - std::log(ra)));
            };
            return {stepFlops, between(a.trainPerS, b.trainPerS),
                    between(a.forwardPerS, b.forwardPerS)};
        }
    }
    return sorted.back();
}

namespace {

// The sizes the plan measures, smallest first: the seeds' five on a GPU; on a CPU the two its
// memory and time allow.
std::vector<std::string> planSizes(const StudyRequest& r) {
    return r.cuda ? std::vector<std::string>{"small", "medium", "large", "xl", "2.7B"}
                  : std::vector<std::string>{"tiny", "small"};
}

// A calibration run of `preset`: training steps, nothing sampled.
RunConfig calibrationOf(const StudyRequest& r, const std::string& preset, int measureSteps) {
    RunConfig c = base(r, preset);
    c.mode = Mode::Train;
    c.warmupSteps = 1;
    c.measureSteps = measureSteps;
    c.sampleHz = 0.0;
    c.telemetryHz = 0.0;
    return c;
}

double trainingStepFlops(RunConfig c) {
    c.mode = Mode::Train;
    return stepFlops(c);
}

// The memory model's peak may be off by a little; a run is planned only well inside memory.
constexpr double kMemoryHeadroom = 0.9;

bool fitsMemory(const StudyRequest& r, const RunConfig& c) {
    return r.memoryBytes <= 0 || static_cast<double>(predictPeak(c).total()) <=
                                     kMemoryHeadroom * static_cast<double>(r.memoryBytes);
}

} // namespace

std::optional<RunConfig> nextCalibrationRun(const StudyRequest& r) {
    const std::vector<std::string> sizes = planSizes(r);
    if (r.rates.empty()) {
        return calibrationOf(r, sizes.front(), 3);
    }
    // The second point: the plan's second size on a CPU, `large` on a GPU (between the
    // seeds' smallest and largest), where it is worth its time and the device holds it.
    const std::string& larger = r.cuda ? sizes[2] : sizes[1];
    const RunConfig second = calibrationOf(r, larger, 2);
    const StudyRate& first = r.rates.front();
    if (r.rates.size() != 1 || !(first.stepFlops > 0.0) ||
        !(trainingStepFlops(second) > first.stepFlops) || !fitsMemory(r, second) ||
        estimateRunSeconds(second, r.rates) > 0.1 * r.budgetS) {
        return std::nullopt;
    }
    return second;
}

std::optional<StudyRate> calibratedRate(const RunResult& run, std::string& why) {
    const RunSummary& s = run.summary;
    if (run.status != RunStatus::Ok || s.totalMs.n == 0 || !(s.totalMs.median > 0.0) ||
        s.forwardMs.n == 0 || !(s.forwardMs.median > 0.0)) {
        why = "the calibration run (" + runLabel(run.config) +
              ") failed: " + run.error.value_or("no steps");
        return std::nullopt;
    }
    return StudyRate{trainingStepFlops(run.config),
                     stepFlops(run.config) / (s.totalMs.median / 1000.0),
                     forwardFlops(run.config) / (s.forwardMs.median / 1000.0)};
}

double StudyPlan::estimateS() const {
    double total = lab ? labEstimateS : 0.0;
    for (const auto& r : runs) {
        total += r.estimateS;
    }
    return total;
}

double estimateRunSeconds(const RunConfig& c, const std::vector<StudyRate>& rates) {
    const StudyRate rate = studyRateAt(rates, trainingStepFlops(c));
    double seconds = runFlops(c) / (c.mode == Mode::Forward ? rate.forwardPerS : rate.trainPerS);
    if (c.opProfile) { // the profiler's cost
        seconds += 2.0 * c.opProfile->stepCount * stepFlops(c) / rate.trainPerS;
    }
    // Building the model and starting: about a second, plus initialising its parameters.
    seconds += 1.0 + static_cast<double>(parameterCount(c.model)) * 2e-8;
    if (c.ddp) {
        seconds = seconds * 1.3 + 2.0 * c.ddp->worldSize; // the ranks start, communicate
    }
    return seconds;
}

std::optional<StudySection> sectionOf(const RunResult& run) {
    const auto dash = run.id.find('-');
    for (StudySection s : kStudySections) {
        const std::string prefix = std::string(toString(s)) + "-";
        if (run.id.rfind(prefix, 0) == 0 && dash != std::string::npos) {
            return s;
        }
    }
    return std::nullopt;
}

StudyPlan planStudy(const StudyRequest& r) {
    StudyPlan plan;
    std::vector<std::string> sizes = planSizes(r);
    const std::string smallest = sizes.front();
    std::vector<int64_t> memoryContexts(std::begin(kMemoryContexts), std::end(kMemoryContexts));
    int steps = kSteps;
    bool variants = true;
    std::vector<DdpStrategy> strategies(kDdpStrategies.begin(), kDdpStrategies.end());
    const struct {
        std::vector<std::string> sizes;
        std::vector<int64_t> memoryContexts;
    } full{sizes, memoryContexts};

    const auto build = [&] {
        std::vector<StudyRun> runs;
        const auto add = [&](StudySection section, RunConfig c) {
            c.measureSteps = std::min(c.measureSteps, steps);
            runs.push_back({section, c, 0.0, idOf(section, c)});
        };
        for (const auto& size : sizes) {
            for (Mode mode : {Mode::Forward, Mode::ForwardBackward}) {
                RunConfig c = base(r, size);
                c.mode = mode;
                add(StudySection::Sizes, c);
            }
        }
        for (int warmup : kWarmupCounts) {
            RunConfig c = base(r, smallest);
            c.mode = Mode::ForwardBackward;
            c.warmupSteps = warmup;
            add(StudySection::Warmup, c);
        }
        for (const auto& size : sizes) {
            RunConfig c = base(r, size);
            c.mode = Mode::ForwardBackward;
            c.precision = Precision::Bf16;
            add(StudySection::Precision, c);
        }
        {
            RunConfig c = base(r, smallest);
            c.warmupSteps = 2;
            c.measureSteps = 3;
            c.opProfile = defaultOpProfileRequest(c.warmupSteps);
            add(StudySection::Ops, c);
        }
        for (int64_t ctx : memoryContexts) {
            for (Mode mode : {Mode::Forward, Mode::Train}) {
                RunConfig c = base(r, sizes.back()); // the largest size kept
                c.contextLength = ctx;
                c.mode = mode;
                c.warmupSteps = 1;
                c.measureSteps = 2;
                add(StudySection::Memory, c);
            }
        }
        for (DdpStrategy s : strategies) {
            RunConfig c = base(r, smallest);
            c.warmupSteps = 2;
            c.measureSteps = 5;
            DdpRequest ddp;
            ddp.backend = r.cuda ? DdpBackend::Nccl : DdpBackend::Gloo;
            ddp.worldSize = r.cuda ? std::max(1, std::min(r.gpus, 2)) : 2;
            ddp.strategy = s;
            c.ddp = ddp;
            add(StudySection::DataParallel, c);
        }
        if (variants) {
            for (AttentionKind a : {AttentionKind::Naive, AttentionKind::Sdpa}) {
                for (bool graphs :
                     r.cuda ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
                    RunConfig c = base(r, smallest);
                    c.precision = r.cuda ? Precision::Bf16 : Precision::Fp32;
                    c.attention = a;
                    c.cudaGraphs = graphs;
                    add(StudySection::Variants, c);
                }
            }
        }
        return runs;
    };

    // What the device cannot hold is left out, each named once with the model's estimate.
    const auto finish = [&] {
        plan.runs.clear();
        plan.leftOut.clear();
        for (StudyRun& run : build()) {
            if (!fitsMemory(r, run.config)) {
                plan.leftOut.push_back(run.id + ": the memory model predicts " +
                                       formatBytes(predictPeak(run.config).total()) + " of " +
                                       formatBytes(r.memoryBytes));
                continue;
            }
            run.estimateS = estimateRunSeconds(run.config, r.rates);
            plan.runs.push_back(std::move(run));
        }
        plan.labEstimateS = r.cuda ? 10.0 : 20.0;
    };
    finish();

    // Scaled down until it fits, in the order that keeps most of the study: the largest
    // sizes first (beyond two), fewer measured steps, fewer memory contexts, no variants,
    // one data-parallel strategy, the fewest steps; each cut said.
    char text[160];
    while (plan.estimateS() > r.budgetS) {
        if (sizes.size() > 2) {
            std::snprintf(text, sizeof(text), "sizes and precision: %s left out",
                          sizes.back().c_str());
            sizes.pop_back();
        } else if (steps > 5) {
            steps = 5;
            std::snprintf(text, sizeof(text), "every section: 5 measured steps instead of %d",
                          kSteps);
        } else if (memoryContexts.size() > 1) {
            std::snprintf(text, sizeof(text), "memory: context %lld left out",
                          static_cast<long long>(memoryContexts.back()));
            memoryContexts.pop_back();
        } else if (variants) {
            variants = false;
            std::snprintf(text, sizeof(text), "execution variants left out");
        } else if (strategies.size() > 1) {
            strategies = {DdpStrategy::Bucketed};
            std::snprintf(text, sizeof(text), "data-parallel: the bucketed strategy only");
        } else if (sizes.size() > 1) {
            std::snprintf(text, sizeof(text), "sizes and precision: %s left out",
                          sizes.back().c_str());
            sizes.pop_back();
        } else if (steps > 3) {
            steps = 3;
            std::snprintf(text, sizeof(text), "every section: 3 measured steps");
        } else {
            std::snprintf(text, sizeof(text),
                          "the smallest plan still takes about %.0f s, over the budget of %.0f s",
                          plan.estimateS(), r.budgetS);
            plan.cuts.emplace_back(text);
            break;
        }
        plan.cuts.emplace_back(text);
        finish();
    }
    if (plan.cuts.empty() || plan.estimateS() > r.budgetS) {
        return plan;
    }

    // The cuts above come in a fixed order, and a later one may free the time an earlier one
    // was made for: what fits again is put back; the cuts then say what is still out.
    struct Knobs {
        std::vector<std::string> sizes;
        std::vector<int64_t> memoryContexts;
        int steps;
        bool variants;
        std::vector<DdpStrategy> strategies;
    };
    const Knobs all{full.sizes, full.memoryContexts, kSteps, true,
                    std::vector<DdpStrategy>(kDdpStrategies.begin(), kDdpStrategies.end())};
    const auto use = [&](const Knobs& k) {
        sizes = k.sizes;
        memoryContexts = k.memoryContexts;
        steps = k.steps;
        variants = k.variants;
        strategies = k.strategies;
        finish();
    };
    // Every plan between the cut one and the whole (a few hundred, each built in
    // microseconds). Among those that fit, the one that keeps most in the cuts' order of
    // importance (the reverse of the order they are made in: two sizes, every strategy, the
    // variants, the memory contexts, 5 steps, more sizes), then more steps, then more time;
    // but first the plans that fill 70% of the budget, wherever one does.
    const auto importance = [&all](const Knobs& k, double seconds) {
        return std::make_tuple(
            std::min<size_t>(k.sizes.size(), 2), k.strategies.size() == all.strategies.size(),
            k.variants, k.memoryContexts.size(), k.steps >= 5, k.sizes.size(), k.steps, seconds);
    };
    Knobs now{sizes, memoryContexts, steps, variants, strategies};
    auto best =
        std::make_tuple(plan.estimateS() >= 0.7 * r.budgetS, importance(now, plan.estimateS()));
    const std::vector<std::vector<DdpStrategy>> strategyChoices{{DdpStrategy::Bucketed},
                                                                all.strategies};
    for (size_t nSizes = 1; nSizes <= all.sizes.size(); ++nSizes) {
        for (int nSteps = 3; nSteps <= kSteps; ++nSteps) {
            for (size_t nContexts = 1; nContexts <= all.memoryContexts.size(); ++nContexts) {
                for (bool withVariants : {false, true}) {
                    for (const auto& withStrategies : strategyChoices) {
                        const Knobs k{
                            {all.sizes.begin(), all.sizes.begin() + nSizes},
                            {all.memoryContexts.begin(), all.memoryContexts.begin() + nContexts},
                            nSteps,
                            withVariants,
                            withStrategies};
                        use(k);
                        const double seconds = plan.estimateS();
                        const auto score =
                            std::make_tuple(seconds >= 0.7 * r.budgetS, importance(k, seconds));
                        if (seconds <= r.budgetS && score > best) {
                            best = score;
                            now = k;
                        }
                    }
                }
            }
        }
    }
    use(now);
    plan.cuts.clear();
    for (size_t i = all.sizes.size(); i-- > now.sizes.size();) {
        plan.cuts.push_back("sizes and precision: " + all.sizes[i] + " left out");
    }
    if (now.steps < kSteps) {
        plan.cuts.push_back("every section: " + std::to_string(now.steps) +
                            " measured steps instead of " + std::to_string(kSteps));
    }
    for (size_t i = all.memoryContexts.size(); i-- > now.memoryContexts.size();) {
        plan.cuts.push_back("memory: context " + std::to_string(all.memoryContexts[i]) +
                            " left out");
    }
    if (!now.variants) {
        plan.cuts.emplace_back("execution variants left out");
    }
    if (now.strategies.size() < all.strategies.size()) {
        plan.cuts.emplace_back("data-parallel: the bucketed strategy only");
    }
    return plan;
}

} // namespace lmprof::engine
