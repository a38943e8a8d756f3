// Private to the verdict rules (docs/VERDICTS.md): the thresholds, the measured steps a
// rule reads, the two interval estimates, and how an estimate is graded against a rule.
#pragma once

#include "lmprof/engine/charts.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/stats.h"
#include "lmprof/engine/verdicts.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine::verdict_rules {

// Each kind's thresholds (docs/VERDICTS.md argues them beside the other tools' figures)
// and the fewest measured steps it judges.
struct Rule {
    double warn = 0.0;
    double critical = 0.0;
    int minSteps = 0;
};
constexpr Rule kInput{0.10, 0.20, 5};
constexpr Rule kOptimizer{0.25, 0.40, 5};
constexpr Rule kHost{0.20, 0.50, 5};    // the GPU's idle share: busy below 80% (records.h)
constexpr Rule kStalls{0.05, 0.20, 30}; // the stalls' share of the time
constexpr Rule kNoisy{0.05, 0.15, 10};  // the mean's 95% half-width over the mean
constexpr Rule kDrift{0.10, 0.25, 30};  // change across the measured steps over the mean
constexpr Rule kCreep{0.01, 0.0, 20};   // growth per 100 steps over the mean peak, late half
constexpr Rule kPressure{0.90, 0.97, 1};
// Steps that compiled after the first: 2 leaves room for automatic dynamic shapes (the
// second shape compiles once more, as dynamic); 7 fill torch._dynamo's default cache of 8
// graphs, after which the function runs eager.
constexpr Rule kRecompiles{2.0, 7.0, 1};
constexpr Rule kStraggler{0.10, 0.25, 5}; // one rank's own time over the others', of the step
constexpr double kComputeBoundShare = 0.90;
constexpr double kInputFloorMs = 1.0;      // the least mean data wait input-bound names
constexpr double kSettledHalfWidth = 0.02; // the mean known to ±2% counts as settled
constexpr double kMiB = 1024.0 * 1024.0;

// The measured steps a verdict reads (index, total, and the phase fields), in index order.
struct Steps {
    std::vector<const StepRecord*> s;
    int first() const { return s.empty() ? 0 : s.front()->index; }
    int last() const { return s.empty() ? 0 : s.back()->index; }
    int n() const { return static_cast<int>(s.size()); }
};

// In index order whatever the order in the file (a reader takes steps in any order): the
// rules read them as a series (the later half, a slope, stalls), and a verdict's first step
// is never after its last, which a reader refuses.
inline Steps measuredOf(const RunResult& run) {
    Steps out;
    for (const auto& step : run.steps) {
        if (isMeasured(step) && step.totalMs > 0.0) {
            out.s.push_back(&step);
        }
    }
    const auto byIndex = [](const StepRecord* a, const StepRecord* b) {
        return a->index < b->index;
    };
    if (!std::is_sorted(out.s.begin(), out.s.end(), byIndex)) {
        std::stable_sort(out.s.begin(), out.s.end(), byIndex);
    }
    return out;
}

struct Estimate {
    double value = 0.0;
    double low = 0.0;
    double high = 0.0;
};

inline double tCritical(int df) {
    return df > 0 ? studentTQuantile(0.975, df) : 0.0;
}

// Σ part / Σ total, with the delta method's interval for a ratio of means:
// d_i = part_i − R·total_i, se(R) = sd(d) / (mean(total)·√n), df n − 1; clamped to [0, 1].
inline Estimate ratioOf(const std::vector<double>& part, const std::vector<double>& total) {
    const double num = std::accumulate(part.begin(), part.end(), 0.0);
    const double den = std::accumulate(total.begin(), total.end(), 0.0);
    Estimate e;
    if (den <= 0.0) {
        return e;
    }
    e.value = std::clamp(num / den, 0.0, 1.0);
    e.low = e.high = e.value;
    const int n = static_cast<int>(part.size());
    if (n >= 2) {
        double ss = 0.0;
        for (int i = 0; i < n; ++i) {
            const double d = part[i] - e.value * total[i];
            ss += d * d;
        }
        const double se = std::sqrt(ss / (n - 1)) / (den / n * std::sqrt(n));
        const double half = tCritical(n - 1) * se;
        e.low = std::clamp(e.value - half, 0.0, 1.0);
        e.high = std::clamp(e.value + half, 0.0, 1.0);
    }
    return e;
}

// The share of the step that `part` of each measured step is (ratioOf).
template <typename Part>
Estimate shareOf(const Steps& steps, Part part) {
    std::vector<double> parts;
    std::vector<double> totals;
    parts.reserve(steps.s.size());
    totals.reserve(steps.s.size());
    for (const auto* s : steps.s) {
        parts.push_back(part(*s));
        totals.push_back(s->totalMs);
    }
    return ratioOf(parts, totals);
}

// The least-squares slope of y over x, with its t interval (df n − 2), widened for
// correlated neighbours.
inline Estimate slopeOf(const std::vector<double>& x, const std::vector<double>& y) {
    const size_t n = x.size();
    Estimate e;
    if (n < 3) {
        return e;
    }
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxx = 0.0;
    double sxy = 0.0;
    for (size_t i = 0; i < n; ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 0.0) {
        return e;
    }
    e.value = sxy / sxx;
    double rss = 0.0;
    double lag = 0.0; // Σ r_i·r_(i-1): neighbouring steps' residuals move together
    double previous = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double r = y[i] - my - e.value * (x[i] - mx);
        rss += r * r;
        lag += i > 0 ? r * previous : 0.0;
        previous = r;
    }
    // Step times are not independent (a busy neighbour, clocks): with the residuals' lag-1
    // autocorrelation ρ > 0 the variance grows by (1 + ρ)/(1 − ρ), as for an AR(1) series.
    const double rho = rss > 0.0 ? std::clamp(lag / rss, 0.0, 0.9) : 0.0;
    const double half = tCritical(static_cast<int>(n) - 2) *
                        std::sqrt(rss / (n - 2) / sxx * (1.0 + rho) / (1.0 - rho));
    e.low = e.value - half;
    e.high = e.value + half;
    return e;
}

// Theil and Sen's slope of y over x: the median of the slopes between every two points, with
// Sen's rank interval (Kendall's S has variance n(n−1)(2n+5)/18 with no trend). A few jumps
// and dips, as a process's resident set makes when the allocator trims or maps, move it
// little where they tilt a least-squares line. Past 256 points it reads the medians of as
// many consecutive groups, so its cost stays bounded and its interval only widens.
inline Estimate medianSlopeOf(std::vector<double> x, std::vector<double> y) {
    constexpr size_t kMaxPoints = 256;
    if (x.size() > kMaxPoints) {
        const size_t group = (x.size() + kMaxPoints - 1) / kMaxPoints;
        size_t kept = 0;
        for (size_t at = 0; at < x.size(); at += group, ++kept) {
            const size_t end = std::min(x.size(), at + group);
            const auto mid = static_cast<std::ptrdiff_t>((end - at) / 2);
            std::nth_element(y.begin() + at, y.begin() + at + mid, y.begin() + end);
            x[kept] = x[at + mid]; // x rises with the index: its median is its middle
            y[kept] = y[at + mid];
        }
        x.resize(kept);
        y.resize(kept);
    }
    const size_t n = x.size();
    std::vector<double> slopes;
    slopes.reserve(n * (n - 1) / 2);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i + 1; j < n; ++j) {
            if (x[j] != x[i]) {
                slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
            }
        }
    }
    Estimate e;
    if (n < 3 || slopes.size() < 3) {
        return e;
    }
    std::sort(slopes.begin(), slopes.end());
    e.value = quantileSorted(slopes, 0.5);
    const double count = static_cast<double>(slopes.size());
    const double c = 1.959963985 * std::sqrt(n * (n - 1.0) * (2.0 * n + 5.0) / 18.0);
    const auto rank = [&](double r) {
        return slopes[static_cast<size_t>(std::clamp(r, 0.0, count - 1.0))];
    };
    // 0-based, as scipy's theilslopes takes them: the lower end rank (N − C)/2 counted from
    // 1, the upper (N + C)/2 + 1.
    e.low = rank(std::round((count - c) / 2.0) - 1.0);
    e.high = rank(std::round((count + c) / 2.0));
    return e;
}

// A byte count from a fitted or scaled value, held where an int64_t can take it.
inline int64_t bytesAt(double v) {
    return static_cast<int64_t>(std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 9e18));
}

inline std::string percent(double share) {
    return formatFixed(share * 100.0, 1) + "%";
}
inline std::string ms(double v) {
    return formatFixed(v, 1) + " ms";
}
inline std::string stepsText(const Steps& steps) {
    return "steps " + std::to_string(steps.first()) + "-" + std::to_string(steps.last());
}

inline RunVerdict base(VerdictKind kind, const Steps& steps, ChartId chart) {
    RunVerdict v;
    v.kind = kind;
    v.chart = chart.name;
    v.firstStep = steps.first();
    v.lastStep = steps.last();
    return v;
}

// `calm`: the steps it reads are the measured steps besides the stalls (noise, drift), of
// which there are that many.
inline RunVerdict abstained(VerdictKind kind, const Steps& steps, const Rule& rule, ChartId chart,
                            std::string rule_text, std::optional<size_t> calm = std::nullopt) {
    RunVerdict v = base(kind, steps, chart);
    v.certainty = Certainty::Abstained;
    v.rule = std::move(rule_text);
    v.evidence = "needs " + std::to_string(rule.minSteps) + " measured steps" +
                 (calm ? " besides the stalls" : "") + "; has " +
                 std::to_string(calm ? *calm : static_cast<size_t>(steps.n()));
    v.advice = "measure at least " + std::to_string(rule.minSteps) + " steps";
    return v;
}

// Severity and certainty from where the interval lies against the rule: firm when its low
// end is past the threshold, likely (info) when only the estimate is, else nothing to say.
// Returns false when the estimate is below the warning threshold.
inline bool grade(RunVerdict& v, const Estimate& e, const Rule& rule) {
    v.value = e.value;
    v.low = e.low;
    v.high = e.high;
    v.threshold = rule.warn;
    if (e.low >= rule.warn) {
        v.certainty = Certainty::Firm;
        v.severity =
            rule.critical > 0.0 && e.low >= rule.critical ? Severity::Critical : Severity::Warn;
        return true;
    }
    if (e.value >= rule.warn) {
        v.certainty = Certainty::Likely;
        v.severity = Severity::Info;
        return true;
    }
    return false;
}

// The stalls among the measured steps (step_time_verdicts.cpp): a step more than 1.5 times
// the median and more than five robust standard deviations (1.4826 MAD) above it.
struct Stalls {
    std::vector<bool> isStall; // by position in the measured steps
    std::vector<int> indices;  // their step indices
};
Stalls findStalls(const Steps& steps);
// The measured steps but the stalls: what the share kinds read, so that a checkpoint every
// N steps is named once, as a stall, whichever phase it lands in.
Steps withoutStalls(const Steps& steps, const Stalls& stalls);

// A straggler among an engine run's data-parallel ranks (straggler.cpp, RunResult::ddp).
void ddpStraggler(const RunResult& run, std::vector<RunVerdict>& out);

// The step-time kinds (step_time_verdicts.cpp): periodic stalls, noise, drift, and
// compute-bound (on the calm steps) when no time kind said anything.
void judgeStepTimes(const RunResult& run, const Steps& steps, const Stalls& stalls,
                    const Steps& calm, std::vector<RunVerdict>& out);

} // namespace lmprof::engine::verdict_rules
