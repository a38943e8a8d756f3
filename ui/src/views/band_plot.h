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
// The bands' extent over xWindow, for the y axis.
Range bandExtent(const GroupedBands& bands, const Range& xWindow);
// Each group's band: least to most faint and the 10th to 90th percentile in its colour (grey
// for the merged group), its median a line; one legend entry per group, its name and count
// (groupLabel).
void drawBands(const GroupedBands& bands, Decimated& scratchLo, Decimated& scratchHi);
std::string groupLabel(const BandGroup& group);
// The legend's entries for the groups (setupLegend's, by their labels).
bool setupGroupLegend(const GroupedBands& bands);
// The step under the mouse: the band's figures there and the runs with the least and the
// most, each value written by `format` (a printf format of one double: "%.2f ms").
void bandTooltip(const std::vector<RunView*>& runs, StepValues values, const char* format);
// In the corner: how many runs and configurations the bands summarise, what was merged and
// why, and how to see each run.
void bandNote(const GroupedBands& bands);

} // namespace lmprof::ui::plot
