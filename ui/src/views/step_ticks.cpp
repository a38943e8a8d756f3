// The step axis's ticks (plot_helpers.h, stepTickValues): whole steps, 1, 2 or 5 × 10^k apart.

#include "plot_helpers.h"

#include <algorithm>
#include <cmath>

namespace lmprof::ui::plot {

std::vector<double> stepTickValues(const Range& r, float width) {
    if (r.empty()) {
        return {};
    }
    const double pixels = std::max(80.0f, width > 0.0f ? width : 400.0f);
    const double wanted = std::max(1.0, (r.hi - r.lo) / (pixels / 80.0));
    double spacing = 1.0;
    for (double decade = 1.0; spacing < wanted; decade *= 10.0) {
        for (double m : {1.0, 2.0, 5.0}) {
            spacing = m * decade;
            if (spacing >= wanted) {
                break;
            }
        }
    }
    // At least two where the range holds two (steps 0 to 4 in a narrow plot got a lone "0"):
    // the next smaller spacing of the series until two fit.
    const double first = std::max(0.0, r.lo);
    const auto fitting = [&](double s) {
        return std::floor(r.hi / s + 1e-9) - std::ceil(first / s - 1e-9) + 1.0;
    };
    while (spacing > 1.0 && fitting(spacing) < 2.0) {
        const double decade = std::pow(10.0, std::floor(std::log10(spacing) + 1e-9));
        spacing = spacing > 4.0 * decade   ? 2.0 * decade
                  : spacing > 1.5 * decade ? decade
                                           : 0.5 * decade;
    }
    std::vector<double> ticks;
    // "+ 0.0": a first tick of -0.0 (the ceiling of a hair under 0) would read "-0".
    for (double t = std::ceil(first / spacing - 1e-9) * spacing + 0.0; t <= r.hi + 1e-9;
         t += spacing) {
        ticks.push_back(t);
    }
    return ticks;
}

} // namespace lmprof::ui::plot
