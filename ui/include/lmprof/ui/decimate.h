// Min/max decimation for drawing long series: at most `maxPoints` points, keeping each
// bucket's smallest and largest value in x order, so spikes (a slow step) stay visible
// however many steps a run has.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace lmprof::ui {

struct Decimated {
    std::vector<double> x;
    std::vector<double> y;
};

// xs ascending, same length as ys. With ys.size() <= maxPoints the data is copied as is.
// NaN values are kept as gaps (a bucket of NaNs yields one NaN point).
void decimateMinMax(std::span<const double> xs, std::span<const double> ys, size_t maxPoints,
                    Decimated& out);

} // namespace lmprof::ui
