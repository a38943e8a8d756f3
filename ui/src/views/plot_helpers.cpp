// Helpers the plot views share: decimated lines and background bands.

#include "views.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui::plot {

void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch) {
    // Two points per pixel column keep every spike while bounding the vertex count.
    const size_t budget = static_cast<size_t>(std::max(200.0f, ImPlot::GetPlotSize().x * 2.0f));
    decimateMinMax(xs, ys, budget, scratch);
    ImPlot::PlotLine(label, scratch.x.data(), scratch.y.data(), static_cast<int>(scratch.x.size()));
}

void band(double x0, double x1, unsigned int color) {
    const ImPlotRect limits = ImPlot::GetPlotLimits();
    if (x1 < limits.X.Min || x0 > limits.X.Max) {
        return;
    }
    ImPlot::PushPlotClipRect();
    const ImVec2 a = ImPlot::PlotToPixels(x0, limits.Y.Max);
    const ImVec2 b = ImPlot::PlotToPixels(x1, limits.Y.Min);
    ImPlot::GetPlotDrawList()->AddRectFilled(a, b, color);
    ImPlot::PopPlotClipRect();
}

} // namespace lmprof::ui::plot
