// Drawing many runs as one band (runs_band.h) in a step chart: the band's series, the
// tooltip of the step under the mouse, and the note that says what is drawn.
#pragma once

#include "plot_helpers.h"
#include "runs_band.h"

namespace lmprof::ui::plot {

// Whether a chart draws `runs` as a band rather than a line each.
inline bool drawsBand(const std::vector<RunView*>& runs) {
    return runs.size() > kBandRuns;
}
// The band's extent over xWindow, for the y axis.
Range bandExtent(const RunsBand& band, const Range& xWindow);
// Least to most (faint) and the 10th to 90th percentile in `color`, the median line in the
// text's colour;
// legend entries "least to most", "10-90%" and "median of N runs".
void drawBand(const RunsBand& band, const ImVec4& color, Decimated& scratchLo,
              Decimated& scratchHi);
// The step under the mouse: the band's figures there and the runs with the least and the
// most, each value written by `format` (a printf format of one double: "%.2f ms").
void bandTooltip(const std::vector<RunView*>& runs, StepValues values, const char* format);
// In the corner: how many runs the band summarises and how to see each run.
void bandNote(const RunsBand& band);

} // namespace lmprof::ui::plot
