// Descriptive statistics of a phase's step times (docs/MEASUREMENT.md): the one module that
// computes them, so the CLI, the JSON and the GUI always agree.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace lmprof::engine {

struct PhaseStats {
    int n = 0;
    double mean = 0.0;
    double std = 0.0; // sample standard deviation (n - 1); 0 when n < 2
    double median = 0.0;
    double min = 0.0;
    double max = 0.0;
    double p95 = 0.0;   // linear interpolation between order statistics
    double cv = 0.0;    // std / mean; 0 when the mean is 0
    double iqr = 0.0;   // q75 - q25, same interpolation
    bool noisy = false; // iqr / median above kNoisyIqrRatio
};

inline constexpr double kNoisyIqrRatio = 0.10;
// The noise rule in words, said wherever a noise mark is shown (tables, tooltips, the
// study report): "noisy when the interquartile range of the measured steps' times is above 10%
// of their median". The CV beside it measures the spread, slow outliers included; the rule
// is the IQR's, so that one slow step does not mark a run noisy.
std::string noiseRule();

// Quantile q in [0, 1] of already sorted values, interpolating linearly between the
// closest ranks (the "linear" method of NumPy). Requires a non-empty input.
double quantileSorted(std::span<const double> sorted, double q);

PhaseStats computeStats(std::span<const double> values);

// The mean and sample standard deviation of values seen one at a time (Welford's update),
// equal to computeStats' mean and std over the same values: a live chart's running band.
class RunningStats {
public:
    void add(double v) {
        ++m_n;
        const double delta = v - m_mean;
        m_mean += delta / m_n;
        m_m2 += delta * (v - m_mean);
    }
    int n() const { return m_n; }
    double mean() const { return m_mean; }
    double std() const; // 0 when n < 2

private:
    int m_n = 0;
    double m_mean = 0.0;
    double m_m2 = 0.0;
};

// A phase's statistics over any number of values in bounded memory (docs/WATCH.md, "Long
// runs"; the Python watcher's _Times): computeStats' own figures while at most kExactValues
// were added. Past that the count, mean, std, min and max stay exact, and the quantiles come
// from log-spaced bins 2^(1/kBinsPerOctave) wide, each given as its geometric middle (within
// 0.14% of the order statistic it holds).
class PhaseTally {
public:
    static constexpr size_t kExactValues = 10'000;
    static constexpr int kBinsPerOctave = 256;

    void add(double v);
    PhaseStats stats() const;
    bool binned() const { return !m_bins.empty(); }

private:
    double at(double q) const;

    RunningStats m_running;
    double m_min = 0.0;
    double m_max = 0.0;
    std::vector<double> m_exact;
    std::map<int64_t, int64_t> m_bins; // bin (floor(log2(v) * kBinsPerOctave)) -> count
};

// Student's t distribution: CDF at t with df degrees of freedom (df > 0, may be fractional),
// and its inverse for p in (0, 1).
double studentTCdf(double t, double df);
double studentTQuantile(double p, double df);

// Welch's unequal-variance t-test of mean(b) - mean(a): t, Welch–Satterthwaite degrees of
// freedom and the two-sided p-value. Needs at least two values on each side; with zero
// variance on both sides p is 0 if the means differ and 1 if they do not.
struct WelchTest {
    double t = 0.0;
    double df = 0.0;
    double p = 1.0;
};
WelchTest welchTest(std::span<const double> a, std::span<const double> b);

// mean(b) / mean(a), its 95% interval and the test of "the ratio is 1", all from one
// statistic: t = ln(ratio) / s, s² = se_a²/mean_a² + se_b²/mean_b² (the delta method on the
// log of the ratio), with Welch–Satterthwaite degrees of freedom for those two terms. The
// interval is ratio · exp(±t_0.975 · s): always positive, and it excludes 1 exactly when
// p < 0.05, so a verdict taken from p never contradicts the interval shown beside it.
// Needs two values a side and positive means; otherwise low = high = ratio and p = 1.
struct RatioInterval {
    double ratio = 0.0;
    double low = 0.0;
    double high = 0.0;
    WelchTest test; // t of ln(ratio), its degrees of freedom, two-sided p
};
RatioInterval meanRatio(std::span<const double> a, std::span<const double> b);

} // namespace lmprof::engine
