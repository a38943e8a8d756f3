// Bucketed min/max decimation (see decimate.h).

#include "lmprof/ui/decimate.h"

#include <cmath>
#include <limits>

namespace lmprof::ui {

void decimateMinMax(std::span<const double> xs, std::span<const double> ys, size_t maxPoints,
                    Decimated& out) {
    out.x.clear();
    out.y.clear();
    const size_t n = ys.size();
    if (n <= maxPoints || maxPoints < 4) {
        out.x.assign(xs.begin(), xs.end());
        out.y.assign(ys.begin(), ys.end());
        return;
    }
    const size_t buckets = maxPoints / 2;
    out.x.reserve(buckets * 2);
    out.y.reserve(buckets * 2);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t lo = b * n / buckets;
        const size_t hi = (b + 1) * n / buckets;
        size_t iMin = lo, iMax = lo;
        bool any = false;
        for (size_t i = lo; i < hi; ++i) {
            if (std::isnan(ys[i])) {
                continue;
            }
            if (!any || ys[i] < ys[iMin]) {
                iMin = i;
            }
            if (!any || ys[i] > ys[iMax]) {
                iMax = i;
            }
            any = true;
        }
        if (!any) {
            out.x.push_back(xs[lo]);
            out.y.push_back(std::numeric_limits<double>::quiet_NaN());
            continue;
        }
        const size_t first = iMin < iMax ? iMin : iMax;
        const size_t second = iMin < iMax ? iMax : iMin;
        out.x.push_back(xs[first]);
        out.y.push_back(ys[first]);
        if (second != first) {
            out.x.push_back(xs[second]);
            out.y.push_back(ys[second]);
        }
    }
}

} // namespace lmprof::ui
