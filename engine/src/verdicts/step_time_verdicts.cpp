// The verdicts read from the step times alone (docs/VERDICTS.md): periodic stalls, noise,
// drift, and compute-bound when nothing else bounds the step. Noise and drift leave the
// stall steps out, so a checkpoint every N steps is named once, as a stall.

#include "verdicts/rules.h"

namespace lmprof::engine::verdict_rules {

namespace {

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return quantileSorted(v, 0.5);
}

// Wilson and Hilferty's approximation of the chi-square quantile with k degrees of freedom.
double chiSquareQuantile(double z, double k) {
    const double a = 2.0 / (9.0 * k);
    return k * std::pow(1.0 - a + z * std::sqrt(a), 3.0);
}
constexpr double kZ975 = 1.959963985;

// The period most stalls keep: for each period N (2 to a third of the steps, at most
// kMaxPeriod) the phase that holds the most stalls. It counts when that phase has at least
// three stalls, at least two thirds of its steps stall, and the steps off it stall at most a
// quarter as often; the most stalls wins, then the shorter period. A few slow steps off the
// period (a busy machine) do not hide it, and stalls everywhere (a busier one) are no period
// however a few of them happen to line up.
struct Period {
    int n = 0;
    int phase = 0;
    int hits = 0;
};
constexpr int kMaxPeriod = 1000;

Period periodOf(const std::vector<int>& stalls, int first, int last) {
    Period best;
    const int span = last - first + 1;
    std::vector<int> count;
    for (int n = 2; n <= std::min(span / 3, kMaxPeriod); ++n) {
        count.assign(static_cast<size_t>(n), 0);
        for (int i : stalls) {
            ++count[static_cast<size_t>(i % n)];
        }
        const auto top = std::max_element(count.begin(), count.end());
        const int phase = static_cast<int>(top - count.begin());
        // The steps of that phase within [first, last].
        const int offset = ((phase - first) % n + n) % n;
        const int expected = first + offset > last ? 0 : (last - first - offset) / n + 1;
        // In 64 bits: span² passes an int's range past 46,341 steps.
        const int64_t others = static_cast<int64_t>(stalls.size()) - *top;
        const bool apart =
            4 * others * expected <= int64_t{*top} * std::max<int64_t>(1, int64_t{span} - expected);
        if (*top >= 3 && 3 * *top >= 2 * expected && apart && *top > best.hits) {
            best = {n, phase, *top};
        }
    }
    return best;
}

void periodicStalls(const RunResult& run, const Steps& steps, const std::vector<double>& t,
                    const Stalls& stalls, std::vector<RunVerdict>& out) {
    const char* rule = "a step in every N is over 1.5x the median, and those stalls cost at "
                       "least 5% of the time (20%: critical)";
    if (steps.n() < kStalls.minSteps) {
        out.push_back(
            abstained(VerdictKind::PeriodicStalls, steps, kStalls, chart::kStepTimes, rule));
        return;
    }
    if (run.thinned) { // a sample of every N-th step aliases any period (docs/WATCH.md)
        RunVerdict v = base(VerdictKind::PeriodicStalls, steps, chart::kStepTimes);
        v.certainty = Certainty::Abstained;
        v.rule = rule;
        v.evidence = "the file keeps 1 step in " + std::to_string(run.thinned->every) +
                     " of the run's " + std::to_string(run.thinned->recordedSteps) +
                     ", and a period shows only among consecutive steps";
        v.advice = "watch at most 10000 steps to look for a period";
        out.push_back(std::move(v));
        return;
    }
    // Far more stalls than a period could hold are noise, which the noise rule names.
    if (stalls.indices.size() < 3 || stalls.indices.size() > static_cast<size_t>(steps.n()) / 2) {
        return;
    }
    const Period period = periodOf(stalls.indices, steps.first(), steps.last());
    if (period.n == 0) {
        return;
    }
    const double m = medianOf(t);
    std::vector<double> excess(t.size(), 0.0);
    std::vector<int> at;
    double stallMs = 0.0;
    for (size_t i = 0; i < t.size(); ++i) {
        const int index = steps.s[i]->index;
        if (stalls.isStall[i] && index % period.n == period.phase) {
            excess[i] = t[i] - m;
            stallMs += t[i];
            at.push_back(index);
        }
    }
    stallMs /= static_cast<double>(at.size());
    const Estimate e = ratioOf(excess, t);
    RunVerdict v = base(VerdictKind::PeriodicStalls, steps, chart::kStepTimes);
    if (!grade(v, e, kStalls)) {
        return;
    }
    const double per100 = e.value * std::accumulate(t.begin(), t.end(), 0.0) / t.size() * 100.0;
    std::string listed;
    for (size_t i = 0; i < at.size() && i < 4; ++i) {
        listed += (i ? ", " : "") + std::to_string(at[i]);
    }
    const std::string every = std::to_string(period.n);
    v.unit = "share";
    v.rule = rule;
    v.evidence = "1 step in " + every + " takes " + ms(stallMs) + " against a median " + ms(m) +
                 " (steps " + listed + (at.size() > 4 ? ", ..." : "") + "): " + ms(per100) +
                 " per 100 steps";
    v.advice = "something runs every " + every +
               " steps inside the loop: evaluation, a checkpoint or logging that synchronizes. "
               "Run it less often, asynchronously (a background thread for checkpoints), or "
               "outside the timed steps";
    (void)run;
    out.push_back(std::move(v));
}

void noisy(const RunResult& run, const Steps& steps, const std::vector<double>& calm,
           std::vector<RunVerdict>& out) {
    const char* rule = "the mean step time's 95% interval is wider than ±5% of it (±15%: "
                       "critical)";
    if (static_cast<int>(calm.size()) < kNoisy.minSteps) {
        out.push_back(
            abstained(VerdictKind::Noisy, steps, kNoisy, chart::kDistribution, rule, calm.size()));
        return;
    }
    const PhaseStats s = computeStats(calm);
    if (s.mean <= 0.0) {
        return;
    }
    const double n = s.n;
    const double t = tCritical(s.n - 1);
    const double rel = t / std::sqrt(n) / s.mean;
    const double k = n - 1.0;
    const Estimate e{s.std * rel, s.std * std::sqrt(k / chiSquareQuantile(kZ975, k)) * rel,
                     s.std * std::sqrt(k / chiSquareQuantile(-kZ975, k)) * rel};
    RunVerdict v = base(VerdictKind::Noisy, steps, chart::kDistribution);
    if (!grade(v, e, kNoisy)) {
        return;
    }
    const double settle = std::ceil(std::pow(kZ975 * s.cv / kSettledHalfWidth, 2.0));
    v.unit = "share";
    v.rule = rule;
    v.evidence = "the mean step " + ms(s.mean) + " ± " + ms(s.mean * e.value) + " over " +
                 std::to_string(s.n) + " steps (CV " + percent(s.cv) + "); about " +
                 formatFixed(settle, 0) + " steps would pin it to ±2%";
    v.advice = "measure more steps (" + formatFixed(settle, 0) +
               "), on a quieter machine: other processes, a shared GPU or a laptop's power "
               "management spread the step times";
    (void)run;
    out.push_back(std::move(v));
}

void drift(const RunResult& run, const Steps& steps, const std::vector<double>& x,
           const std::vector<double>& y, std::vector<RunVerdict>& out) {
    const char* rule = "the fitted step time changes by at least 10% across the measured steps "
                       "(25%: critical)";
    if (static_cast<int>(y.size()) < kDrift.minSteps) {
        out.push_back(
            abstained(VerdictKind::Drift, steps, kDrift, chart::kStepTimes, rule, y.size()));
        return;
    }
    const double level = std::accumulate(y.begin(), y.end(), 0.0) / y.size();
    const double span = x.back() - x.front();
    const Estimate slope = slopeOf(x, y);
    if (level <= 0.0 || span <= 0.0) {
        return;
    }
    // A fall is drift as much as a rise: grade the size, keep the sign in the value.
    const double sign = slope.value < 0.0 ? -1.0 : 1.0;
    const double a = sign * slope.low * span / level;
    const double b = sign * slope.high * span / level;
    RunVerdict v = base(VerdictKind::Drift, steps, chart::kStepTimes);
    if (!grade(v, Estimate{sign * slope.value * span / level, std::min(a, b), std::max(a, b)},
               kDrift)) {
        return;
    }
    v.value *= sign;
    const double lo = v.low * sign;
    const double hi = v.high * sign;
    v.low = std::min(lo, hi);
    v.high = std::max(lo, hi);
    const double mx = (x.front() + x.back()) / 2.0;
    v.unit = "share";
    v.rule = rule;
    v.evidence = "the fitted step time goes from " + ms(level + slope.value * (x.front() - mx)) +
                 " to " + ms(level + slope.value * (x.back() - mx)) + ", " + stepsText(steps);
    v.advice = "the steps are not steady yet: more warmup steps (now " +
               std::to_string(run.config.warmupSteps) +
               "), or a machine whose clocks and load hold still (thermal throttling, "
               "another job starting)";
    out.push_back(std::move(v));
}

bool boundsTheStep(const RunVerdict& v) {
    const bool timeKind = v.kind == VerdictKind::InputBound ||
                          v.kind == VerdictKind::OptimizerBound ||
                          v.kind == VerdictKind::HostBound || v.kind == VerdictKind::PeriodicStalls;
    return timeKind && v.certainty != Certainty::Abstained;
}

void computeBound(const RunResult& run, const Steps& steps, std::vector<RunVerdict>& out) {
    if (std::any_of(out.begin(), out.end(), boundsTheStep)) {
        return;
    }
    const Estimate e = shareOf(
        steps, [](const StepRecord& s) { return s.forwardMs + s.backwardMs + s.optimizerMs; });
    if (e.value < kComputeBoundShare) {
        return; // time outside the phases that no rule names
    }
    const Estimate fwd = shareOf(steps, [](const StepRecord& s) { return s.forwardMs; });
    const Estimate bwd = shareOf(steps, [](const StepRecord& s) { return s.backwardMs; });
    const Estimate opt = shareOf(steps, [](const StepRecord& s) { return s.optimizerMs; });
    RunVerdict v = base(VerdictKind::ComputeBound, steps,
                        run.moduleTimes ? chart::kModules : chart::kStepTimes);
    v.severity = Severity::Info;
    v.certainty = Certainty::Firm;
    v.value = e.value;
    v.low = e.low;
    v.high = e.high;
    v.threshold = kComputeBoundShare;
    v.unit = "share";
    v.rule = "forward, backward and the optimizer take at least 90% of the step, and no other "
             "kind bounds it";
    v.evidence = "forward " + percent(fwd.value) + ", backward " + percent(bwd.value) +
                 ", optimizer " + percent(opt.value) + " of the step, " + stepsText(steps);
    v.advice = "the model's own math bounds the step: a larger batch raises throughput only "
               "while the device has idle units; lower precision (bf16), a fused attention "
               "and torch.compile shorten the math itself";
    out.push_back(std::move(v));
}

} // namespace

Stalls findStalls(const Steps& steps) {
    Stalls out;
    out.isStall.assign(steps.s.size(), false);
    if (steps.s.size() < 3) {
        return out;
    }
    std::vector<double> t;
    for (const auto* s : steps.s) {
        t.push_back(s->totalMs);
    }
    const double m = medianOf(t);
    std::vector<double> dev;
    for (double v : t) {
        dev.push_back(std::abs(v - m));
    }
    const double sigma = 1.4826 * medianOf(dev);
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] > 1.5 * m && t[i] > m + 5.0 * sigma) {
            out.isStall[i] = true;
            out.indices.push_back(steps.s[i]->index);
        }
    }
    return out;
}

Steps withoutStalls(const Steps& steps, const Stalls& stalls) {
    Steps calm;
    for (size_t i = 0; i < steps.s.size(); ++i) {
        if (!stalls.isStall[i]) {
            calm.s.push_back(steps.s[i]);
        }
    }
    return calm;
}

void judgeStepTimes(const RunResult& run, const Steps& steps, const Stalls& stalls,
                    const Steps& calm, std::vector<RunVerdict>& out) {
    std::vector<double> t;
    for (const auto* s : steps.s) {
        t.push_back(s->totalMs);
    }
    periodicStalls(run, steps, t, stalls, out);
    std::vector<double> x;
    std::vector<double> calmTimes;
    for (const auto* s : calm.s) {
        x.push_back(s->index);
        calmTimes.push_back(s->totalMs);
    }
    noisy(run, steps, calmTimes, out);
    drift(run, steps, x, calmTimes, out);
    computeBound(run, calm, out);
}

} // namespace lmprof::engine::verdict_rules
