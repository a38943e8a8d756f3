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

namespace {

// What a plan keeps of the whole study: the sizes (smallest first), the memory section's
// contexts, the measured steps of every run, the execution variants, the data-parallel
// strategies. The budget's cuts shrink these.
struct PlanKnobs {
    std::vector<std::string> sizes;
    std::vector<int64_t> memoryContexts;
    int steps = kSteps;
    bool variants = true;
    std::vector<DdpStrategy> strategies;
};

PlanKnobs wholeStudy(const StudyRequest& r) {
    return {planSizes(r),
            {std::begin(kMemoryContexts), std::end(kMemoryContexts)},
            kSteps,
            true,
            {kDdpStrategies.begin(), kDdpStrategies.end()}};
}

// Adds a run of `section`, its measured steps at most the plan's.
struct RunList {
    const PlanKnobs& k;
    std::vector<StudyRun> runs;
    void add(StudySection section, RunConfig c) {
        c.measureSteps = std::min(c.measureSteps, k.steps);
        runs.push_back({section, c, 0.0, idOf(section, c)});
    }
};

// The sizes, warmup, precision and ops sections.
void addTimingRuns(const StudyRequest& r, RunList& list) {
    const std::string& smallest = list.k.sizes.front();
    for (const auto& size : list.k.sizes) {
        for (Mode mode : {Mode::Forward, Mode::ForwardBackward}) {
            RunConfig c = base(r, size);
            c.mode = mode;
            list.add(StudySection::Sizes, c);
        }
    }
    for (int warmup : kWarmupCounts) {
        RunConfig c = base(r, smallest);
        c.mode = Mode::ForwardBackward;
        c.warmupSteps = warmup;
        list.add(StudySection::Warmup, c);
    }
    for (const auto& size : list.k.sizes) {
        RunConfig c = base(r, size);
        c.mode = Mode::ForwardBackward;
        c.precision = Precision::Bf16;
        list.add(StudySection::Precision, c);
    }
    RunConfig ops = base(r, smallest);
    ops.warmupSteps = 2;
    ops.measureSteps = 3;
    ops.opProfile = defaultOpProfileRequest(ops.warmupSteps);
    list.add(StudySection::Ops, ops);
}

// The memory, data-parallel and variants sections.
void addScaleRuns(const StudyRequest& r, RunList& list) {
    const std::string& smallest = list.k.sizes.front();
    for (int64_t ctx : list.k.memoryContexts) {
        for (Mode mode : {Mode::Forward, Mode::Train}) {
            RunConfig c = base(r, list.k.sizes.back()); // the largest size kept
            c.contextLength = ctx;
            c.mode = mode;
            c.warmupSteps = 1;
            c.measureSteps = 2;
            list.add(StudySection::Memory, c);
        }
    }
    for (DdpStrategy s : list.k.strategies) {
        RunConfig c = base(r, smallest);
        c.warmupSteps = 2;
        c.measureSteps = 5;
        DdpRequest ddp;
        ddp.backend = r.cuda ? DdpBackend::Nccl : DdpBackend::Gloo;
        ddp.worldSize = r.cuda ? std::max(1, std::min(r.gpus, 2)) : 2;
        ddp.strategy = s;
        c.ddp = ddp;
        list.add(StudySection::DataParallel, c);
    }
    if (!list.k.variants) {
        return;
    }
    for (AttentionKind a : {AttentionKind::Naive, AttentionKind::Sdpa}) {
        for (bool graphs : r.cuda ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
            RunConfig c = base(r, smallest);
            c.precision = r.cuda ? Precision::Bf16 : Precision::Fp32;
            c.attention = a;
            c.cudaGraphs = graphs;
            list.add(StudySection::Variants, c);
        }
    }
}

// The plan's runs for these knobs, each estimated; what the device cannot hold is left out,
// each named once with the model's estimate. The cuts are the caller's.
void fillPlan(const StudyRequest& r, const PlanKnobs& k, StudyPlan& plan) {
    RunList list{k, {}};
    addTimingRuns(r, list);
    addScaleRuns(r, list);
    plan.runs.clear();
    plan.leftOut.clear();
    for (StudyRun& run : list.runs) {
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
}

// The sentences a cut is said in, by cutOnce as it is made and by cutsOf for what a plan
// leaves out of the whole study.
std::string sizeCut(const std::string& size) {
    return "sizes and precision: " + size + " left out";
}
std::string stepsCut(int steps) {
    return "every section: " + std::to_string(steps) + " measured steps instead of " +
           std::to_string(kSteps);
}
std::string contextCut(int64_t context) {
    return "memory: context " + std::to_string(context) + " left out";
}
constexpr const char* kVariantsCut = "execution variants left out";
constexpr const char* kStrategiesCut = "data-parallel: the bucketed strategy only";

// The next cut, in the order that keeps most of the study: the largest sizes first (beyond
// two), fewer measured steps, fewer memory contexts, no variants, one data-parallel strategy,
// the fewest steps. Its sentence, or nullopt when nothing is left to cut.
std::optional<std::string> cutOnce(PlanKnobs& k) {
    const auto dropLargestSize = [&k] {
        const std::string cut = sizeCut(k.sizes.back());
        k.sizes.pop_back();
        return cut;
    };
    if (k.sizes.size() > 2) {
        return dropLargestSize();
    }
    if (k.steps > 5) {
        k.steps = 5;
        return stepsCut(5);
    }
    if (k.memoryContexts.size() > 1) {
        const std::string cut = contextCut(k.memoryContexts.back());
        k.memoryContexts.pop_back();
        return cut;
    }
    if (k.variants) {
        k.variants = false;
        return kVariantsCut;
    }
    if (k.strategies.size() > 1) {
        k.strategies = {DdpStrategy::Bucketed};
        return kStrategiesCut;
    }
    if (k.sizes.size() > 1) {
        return dropLargestSize();
    }
    if (k.steps > 3) {
        k.steps = 3;
        return "every section: 3 measured steps";
    }
    return std::nullopt;
}

// The cuts come in a fixed order, and a later one may free the time an earlier one was made
// for. Every plan between the cut one (`now`) and the whole is tried (a few hundred, each
// built in microseconds). Among those that fit, the one that keeps most in the cuts' order of
// importance (the reverse of the order they are made in: two sizes, every strategy, the
// variants, the memory contexts, 5 steps, more sizes), then more steps, then more time; but
// first the plans that fill 70% of the budget, wherever one does.
PlanKnobs putBack(const StudyRequest& r, const PlanKnobs& all, PlanKnobs now, double nowS) {
    const auto importance = [&all](const PlanKnobs& k, double seconds) {
        return std::make_tuple(
            std::min<size_t>(k.sizes.size(), 2), k.strategies.size() == all.strategies.size(),
            k.variants, k.memoryContexts.size(), k.steps >= 5, k.sizes.size(), k.steps, seconds);
    };
    auto best = std::make_tuple(nowS >= 0.7 * r.budgetS, importance(now, nowS));
    const std::vector<std::vector<DdpStrategy>> strategyChoices{{DdpStrategy::Bucketed},
                                                                all.strategies};
    StudyPlan plan;
    for (size_t nSizes = 1; nSizes <= all.sizes.size(); ++nSizes) {
        for (int nSteps = 3; nSteps <= kSteps; ++nSteps) {
            for (size_t nContexts = 1; nContexts <= all.memoryContexts.size(); ++nContexts) {
                for (bool withVariants : {false, true}) {
                    for (const auto& withStrategies : strategyChoices) {
                        const PlanKnobs k{
                            {all.sizes.begin(), all.sizes.begin() + nSizes},
                            {all.memoryContexts.begin(), all.memoryContexts.begin() + nContexts},
                            nSteps,
                            withVariants,
                            withStrategies};
                        fillPlan(r, k, plan);
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
    return now;
}

// What a plan with knobs `k` leaves out of the whole study, one sentence each.
std::vector<std::string> cutsOf(const PlanKnobs& all, const PlanKnobs& k) {
    std::vector<std::string> cuts;
    for (size_t i = all.sizes.size(); i-- > k.sizes.size();) {
        cuts.push_back(sizeCut(all.sizes[i]));
    }
    if (k.steps < kSteps) {
        cuts.push_back(stepsCut(k.steps));
    }
    for (size_t i = all.memoryContexts.size(); i-- > k.memoryContexts.size();) {
        cuts.push_back(contextCut(all.memoryContexts[i]));
    }
    if (!k.variants) {
        cuts.emplace_back(kVariantsCut);
    }
    if (k.strategies.size() < all.strategies.size()) {
        cuts.emplace_back(kStrategiesCut);
    }
    return cuts;
}

} // namespace

StudyPlan planStudy(const StudyRequest& r) {
    const PlanKnobs all = wholeStudy(r);
    PlanKnobs knobs = all;
    StudyPlan plan;
    fillPlan(r, knobs, plan);
    // Scaled down until it fits, each cut said.
    while (plan.estimateS() > r.budgetS) {
        if (auto cut = cutOnce(knobs)) {
            plan.cuts.push_back(std::move(*cut));
            fillPlan(r, knobs, plan);
            continue;
        }
        char text[160];
        std::snprintf(text, sizeof(text),
                      "the smallest plan still takes about %.0f s, over the budget of %.0f s",
                      plan.estimateS(), r.budgetS);
        plan.cuts.emplace_back(text);
        return plan;
    }
    if (plan.cuts.empty()) {
        return plan;
    }
    // What fits again is put back; the cuts then say what is still out.
    knobs = putBack(r, all, knobs, plan.estimateS());
    fillPlan(r, knobs, plan);
    plan.cuts = cutsOf(all, knobs);
    return plan;
}

} // namespace lmprof::engine
