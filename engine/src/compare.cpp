// Matching runs of two result sets and judging their step-time difference.

#include "lmprof/engine/compare.h"

#include "enum_names.h"
#include "lmprof/engine/format.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <variant>

namespace lmprof::engine {

constexpr EnumNames<Verdict, 4> kVerdictNames{{
    {Verdict::Same, "within noise"},
    {Verdict::Faster, "faster"},
    {Verdict::Slower, "SLOWER"},
    {Verdict::Untestable, "too few steps"},
}};

std::string_view toString(Verdict v) {
    return nameIn(kVerdictNames, v);
}

int Comparison::regressions() const {
    int n = 0;
    for (const auto& m : matched) {
        n += m.verdict == Verdict::Slower;
    }
    return n;
}

std::string configKey(const RunConfig& c) {
    const auto& m = c.model;
    // The execution variants a run changes from their defaults (attention, tf32, ...).
    std::string variants;
    for (const ChoiceField& f : choiceFields()) {
        if (!f.isDefault(c)) {
            variants += " " + f.key + "=" + f.get(c);
        }
    }
    for (const ValueField& f : valueFields()) { // the plain fields that make a configuration
        if (f.inComparisonKey) {
            // A decimal in full, not as shown (text() keeps 6 significant digits).
            const bool decimal = std::holds_alternative<double RunConfig::*>(f.member);
            variants += " " + f.key + "=" + (decimal ? formatFixed(f.number(c), 9) : f.text(c));
        }
    }
    return std::to_string(m.dModel) + "/" + std::to_string(m.dFf) + "/" +
           std::to_string(m.numLayers) + "/" + std::to_string(m.numHeads) + "/" +
           std::to_string(m.vocabSize) + " T" + std::to_string(c.contextLength) + " B" +
           std::to_string(c.batchSize) + " " + std::string(toString(c.precision)) + " " +
           std::string(toString(c.mode)) +
           (c.ddp ? " ddp" + std::to_string(c.ddp->worldSize) + " " +
                        std::string(toString(c.ddp->backend)) + " " +
                        std::string(toString(c.ddp->strategy)) +
                        (c.ddp->strategy == DdpStrategy::Bucketed
                             ? " " + std::to_string(c.ddp->bucketMb)
                             : std::string())
                  : std::string()) +
           variants;
}

std::string numericsKey(const RunResult& run) {
    RunConfig c = run.config;
    c.precision = Precision::Fp32; // every precision alike
    c.threads = 0;                 // and every thread count: the same model on the same data
    const std::string device = run.resolvedDevice.empty() ? c.device : run.resolvedDevice;
    return configKey(c) + " rope " + std::to_string(c.model.ropeTheta) + " " +
           device.substr(0, device.find(':'));
}

std::optional<double> maxLossDifference(const RunResult& a, const RunResult& b) {
    std::map<int, double> lossA;
    for (const auto& s : a.steps) {
        if (s.loss) {
            lossA[s.index] = *s.loss;
        }
    }
    std::optional<double> worst;
    for (const auto& s : b.steps) {
        const auto it = lossA.find(s.index);
        if (!s.loss || it == lossA.end()) {
            continue;
        }
        const double d = std::fabs(*s.loss - it->second);
        if (!std::isfinite(d)) {
            return std::numeric_limits<double>::quiet_NaN();
        }
        worst = std::max(worst.value_or(0.0), d);
    }
    return worst;
}

Verdict verdictOf(const RatioInterval& r, size_t na, size_t nb) {
    if (na < 2 || nb < 2 || !std::isfinite(r.ratio) || r.ratio <= 0.0 || !std::isfinite(r.test.p)) {
        return Verdict::Untestable;
    }
    return r.test.p >= kSignificance ? Verdict::Same
           : r.ratio > 1.0           ? Verdict::Slower
                                     : Verdict::Faster;
}

std::string pairKey(const RunResult& run) {
    if (!run.source) {
        return configKey(run.config);
    }
    // A watched script's run: the same model class and size, precision and mode.
    return "watched " + run.source->modelClass + " N" + std::to_string(run.parameterCount) + " " +
           std::string(toString(run.config.precision)) + " " +
           std::string(toString(run.config.mode));
}

ComparedRun compareTwo(const RunResult& a, const RunResult& b) {
    ComparedRun cr{a, b, {}, {}, Verdict::Untestable};
    const auto ta = measuredStepTimes(a.steps);
    const auto tb = measuredStepTimes(b.steps);
    cr.stepRatio = meanRatio(ta, tb);
    // Two measured steps a side at least, and a ratio of two positive means; any other pair
    // (a run cancelled before measuring, say) is shown untested.
    if (ta.size() >= 2 && tb.size() >= 2 && std::isfinite(cr.stepRatio.ratio) &&
        cr.stepRatio.ratio > 0.0) {
        cr.welch = cr.stepRatio.test; // the interval's own test (stats.h)
    }
    cr.verdict = verdictOf(cr.stepRatio, ta.size(), tb.size());
    return cr;
}

std::vector<PhaseComparison> comparePhases(const RunResult& a, const RunResult& b) {
    std::vector<PhaseComparison> out;
    for (const auto& [name, field] : {std::pair{"forward", &StepRecord::forwardMs},
                                      std::pair{"backward", &StepRecord::backwardMs},
                                      std::pair{"optimizer", &StepRecord::optimizerMs},
                                      std::pair{"step", &StepRecord::totalMs}}) {
        const auto ta = measuredStepTimes(a.steps, field);
        const auto tb = measuredStepTimes(b.steps, field);
        PhaseComparison p{name, computeStats(ta).mean, computeStats(tb).mean, meanRatio(ta, tb),
                          Verdict::Untestable};
        p.verdict = verdictOf(p.ratio, ta.size(), tb.size());
        out.push_back(std::move(p));
    }
    return out;
}

Comparison compareRuns(std::span<const RunResult> a, std::span<const RunResult> b) {
    Comparison out;
    std::vector<bool> used(b.size(), false);
    for (const auto& ra : a) {
        if (ra.status != RunStatus::Ok) {
            out.onlyA.push_back(ra);
            continue;
        }
        bool found = false;
        for (size_t j = 0; j < b.size() && !found; ++j) {
            if (used[j] || b[j].status != RunStatus::Ok || pairKey(b[j]) != pairKey(ra)) {
                continue;
            }
            used[j] = true;
            found = true;
            out.matched.push_back(compareTwo(ra, b[j]));
        }
        if (!found) {
            out.onlyA.push_back(ra);
        }
    }
    for (size_t j = 0; j < b.size(); ++j) {
        if (!used[j]) {
            out.onlyB.push_back(b[j]);
        }
    }
    return out;
}

std::optional<RunConfig> referenceConfig(const RunResult& watched, int measureSteps,
                                         std::string& why) {
    if (!watched.source) {
        why = watched.id + " is the engine's own run, not a watched script's";
        return std::nullopt;
    }
    if (!watched.source->model) {
        why = watched.id + ": " +
              watched.source->modelNote.value_or("its model's dimensions are "
                                                 "not in the file");
        return std::nullopt;
    }
    const WatchedModel& m = *watched.source->model;
    RunConfig c;
    c.model = m.model;
    for (const std::string& name : presetNames()) { // a preset's name where the sizes are one's
        const auto preset = presetModel(name);
        if (preset && preset->dModel == c.model.dModel && preset->dFf == c.model.dFf &&
            preset->numLayers == c.model.numLayers && preset->numHeads == c.model.numHeads) {
            c.model.preset = name;
        }
    }
    c.contextLength = m.contextLength;
    c.batchSize = m.batchSize;
    c.precision = watched.config.precision;
    c.mode = Mode::Train;
    c.measureSteps = measureSteps;
    c.device = watched.config.device;
    if (const auto errors = validate(c); !errors.empty()) {
        why = watched.id + ": the engine cannot run its size: " + errors.front().message();
        return std::nullopt;
    }
    return c;
}

} // namespace lmprof::engine
