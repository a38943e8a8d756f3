// Descriptive statistics of step times and the run summary built from them.

#include "lmprof/engine/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace lmprof::engine {

double quantileSorted(std::span<const double> sorted, double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

namespace {
// The bin of times of 0 ms (and of anything not positive).
constexpr int64_t kZeroBin = std::numeric_limits<int64_t>::min();

int64_t binOf(double v) {
    return v > 0.0 ? static_cast<int64_t>(std::floor(std::log2(v) * PhaseTally::kBinsPerOctave))
                   : kZeroBin;
}
} // namespace

void PhaseTally::add(double v) {
    m_min = m_running.n() == 0 ? v : std::min(m_min, v);
    m_max = m_running.n() == 0 ? v : std::max(m_max, v);
    m_running.add(v);
    if (!m_bins.empty()) {
        ++m_bins[binOf(v)];
        return;
    }
    m_exact.push_back(v);
    if (m_exact.size() > kExactValues) {
        for (double e : m_exact) {
            ++m_bins[binOf(e)];
        }
        m_exact = {};
    }
}

double PhaseTally::at(double q) const {
    const auto rank = static_cast<int64_t>(std::floor(q * static_cast<double>(m_running.n() - 1)));
    int64_t seen = 0;
    for (const auto& [bin, count] : m_bins) {
        seen += count;
        if (seen > rank) {
            const double middle =
                bin == kZeroBin ? 0.0
                                : std::pow(2.0, (static_cast<double>(bin) + 0.5) / kBinsPerOctave);
            return std::clamp(middle, m_min, m_max);
        }
    }
    return m_max;
}

PhaseStats PhaseTally::stats() const {
    if (m_bins.empty()) {
        return computeStats(m_exact);
    }
    PhaseStats s;
    s.n = m_running.n();
    s.mean = m_running.mean();
    s.std = m_running.std();
    s.min = m_min;
    s.max = m_max;
    s.median = at(0.5);
    s.p95 = at(0.95);
    s.iqr = at(0.75) - at(0.25);
    s.cv = s.mean != 0.0 ? s.std / s.mean : 0.0;
    s.noisy = s.median > 0.0 && s.iqr / s.median > kNoisyIqrRatio;
    return s;
}

double RunningStats::std() const {
    return m_n > 1 ? std::sqrt(m_m2 / (m_n - 1)) : 0.0;
}

PhaseStats computeStats(std::span<const double> values) {
    PhaseStats s;
    s.n = static_cast<int>(values.size());
    if (values.empty()) {
        return s;
    }
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / s.n;
    if (s.n > 1) {
        double ss = 0.0;
        for (double v : sorted) {
            ss += (v - s.mean) * (v - s.mean);
        }
        s.std = std::sqrt(ss / (s.n - 1));
    }
    s.min = sorted.front();
    s.max = sorted.back();
    s.median = quantileSorted(sorted, 0.5);
    s.p95 = quantileSorted(sorted, 0.95);
    s.iqr = quantileSorted(sorted, 0.75) - quantileSorted(sorted, 0.25);
    s.cv = s.mean != 0.0 ? s.std / s.mean : 0.0;
    s.noisy = s.median > 0.0 && s.iqr / s.median > kNoisyIqrRatio;
    return s;
}

std::string noiseRule() {
    return "noisy when the interquartile range of the measured steps' times is above " +
           std::to_string(static_cast<int>(kNoisyIqrRatio * 100.0 + 0.5)) + "% of their median";
}

namespace {

// Continued fraction of the regularised incomplete beta function (modified Lentz method).
double betaContinuedFraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300;
    constexpr double kEps = 1e-15;
    double c = 1.0;
    double d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
    double h = d;
    for (int m = 1; m <= 300; ++m) {
        const double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        for (int pass = 0; pass < 2; ++pass) {
            d = 1.0 + num * d;
            d = 1.0 / (std::abs(d) < kTiny ? kTiny : d);
            c = 1.0 + num / c;
            c = std::abs(c) < kTiny ? kTiny : c;
            h *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        }
        if (std::abs(d * c - 1.0) < kEps) {
            break;
        }
    }
    return h;
}

// I_x(a, b), the regularised incomplete beta function.
double incompleteBeta(double a, double b, double x) {
    if (x <= 0.0) {
        return 0.0;
    }
    if (x >= 1.0) {
        return 1.0;
    }
    const double logFront =
        std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
    const double front = std::exp(logFront);
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry above.
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return front * betaContinuedFraction(a, b, x) / a;
    }
    return 1.0 - front * betaContinuedFraction(b, a, 1.0 - x) / b;
}

double meanOf(std::span<const double> v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double varianceOf(std::span<const double> v, double mean) {
    double ss = 0.0;
    for (double x : v) {
        ss += (x - mean) * (x - mean);
    }
    return ss / static_cast<double>(v.size() - 1);
}

} // namespace

double studentTCdf(double t, double df) {
    // P(T <= t) = 1 - I_{df/(df+t²)}(df/2, 1/2) / 2 for t >= 0, symmetric for t < 0.
    const double tail = 0.5 * incompleteBeta(df / 2.0, 0.5, df / (df + t * t));
    return t >= 0.0 ? 1.0 - tail : tail;
}

double studentTQuantile(double p, double df) {
    // Bisection on the monotone CDF: 200 halvings of [-1e6, 1e6] are far below 1e-12.
    double lo = -1e6;
    double hi = 1e6;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (studentTCdf(mid, df) < p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

WelchTest welchTest(std::span<const double> a, std::span<const double> b) {
    WelchTest w;
    if (a.size() < 2 || b.size() < 2) {
        return w;
    }
    const double ma = meanOf(a);
    const double mb = meanOf(b);
    const double va = varianceOf(a, ma) / static_cast<double>(a.size());
    const double vb = varianceOf(b, mb) / static_cast<double>(b.size());
    if (va + vb == 0.0) {
        w.p = ma == mb ? 1.0 : 0.0;
        return w;
    }
    w.t = (mb - ma) / std::sqrt(va + vb);
    w.df =
        (va + vb) * (va + vb) /
        (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
    w.p = 2.0 * (1.0 - studentTCdf(std::abs(w.t), w.df));
    return w;
}

RatioInterval meanRatio(std::span<const double> a, std::span<const double> b) {
    RatioInterval r;
    if (a.empty() || b.empty()) {
        return r;
    }
    const double ma = meanOf(a);
    const double mb = meanOf(b);
    r.ratio = ma != 0.0 ? mb / ma : 0.0;
    r.low = r.high = r.ratio;
    if (a.size() < 2 || b.size() < 2 || ma <= 0.0 || mb <= 0.0) {
        return r; // untestable: p stays 1
    }
    // Relative squared standard errors of the two means: their sum is the variance of
    // ln(mean_b / mean_a) by the delta method.
    const double ra = varianceOf(a, ma) / static_cast<double>(a.size()) / (ma * ma);
    const double rb = varianceOf(b, mb) / static_cast<double>(b.size()) / (mb * mb);
    const double logRatio = std::log(r.ratio);
    if (ra + rb == 0.0) {
        r.test.p = logRatio == 0.0 ? 1.0 : 0.0;
        return r;
    }
    const double s = std::sqrt(ra + rb);
    r.test.t = logRatio / s;
    r.test.df =
        (ra + rb) * (ra + rb) /
        (ra * ra / static_cast<double>(a.size() - 1) + rb * rb / static_cast<double>(b.size() - 1));
    r.test.p = 2.0 * (1.0 - studentTCdf(std::abs(r.test.t), r.test.df));
    const double half = studentTQuantile(0.975, r.test.df) * s;
    r.low = r.ratio * std::exp(-half);
    r.high = r.ratio * std::exp(half);
    return r;
}

} // namespace lmprof::engine
