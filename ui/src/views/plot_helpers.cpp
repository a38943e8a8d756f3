// Helpers the plot views share: decimated lines, background bands, and the end of a plot
// with a "Save PNG" item in its right-click menu.

#include "views.h"

#include <imgui.h>
#include <implot.h>
#include <implot_internal.h>

namespace lmprof::ui::plot {

void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch) {
    // Two points per pixel column keep every spike while bounding the vertex count.
    const size_t budget = static_cast<size_t>(std::max(200.0f, ImPlot::GetPlotSize().x * 2.0f));
    decimateMinMax(xs, ys, budget, scratch);
    ImPlot::PlotLine(label, scratch.x.data(), scratch.y.data(), static_cast<int>(scratch.x.size()));
}

void shaded(const char* label, const std::vector<double>& xs, const std::vector<double>& lo,
            const std::vector<double>& hi, float fillAlpha, Decimated& scratchLo,
            Decimated& scratchHi) {
    const size_t budget = static_cast<size_t>(std::max(200.0f, ImPlot::GetPlotSize().x * 2.0f));
    const size_t stride = xs.size() > budget ? (xs.size() + budget - 1) / budget : 1;
    scratchLo.x.clear();
    scratchLo.y.clear();
    scratchHi.y.clear();
    for (size_t i = 0; i < xs.size(); i += stride) {
        scratchLo.x.push_back(xs[i]);
        scratchLo.y.push_back(lo[i]);
        scratchHi.y.push_back(hi[i]);
    }
    ImPlotSpec spec;
    spec.FillAlpha = fillAlpha;
    ImPlot::PlotShaded(label, scratchLo.x.data(), scratchLo.y.data(), scratchHi.y.data(),
                       static_cast<int>(scratchLo.x.size()), spec);
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

void endPlot(ViewContext& ctx, const char* fileStem) {
    const ImPlotPlot* current = ImPlot::GetCurrentPlot();
    const ImGuiID id = current->ID;
    const ImRect rect = current->FrameRect;
    ImPlot::EndPlot();
    // The plot's rectangle as a PNG request (the other fields keep their defaults).
    const auto request = [&] {
        PngRequest r;
        r.x = rect.Min.x;
        r.y = rect.Min.y;
        r.width = rect.GetWidth();
        r.height = rect.GetHeight();
        r.fileStem = fileStem;
        return r;
    };
    if (ctx.plotRects) {
        (*ctx.plotRects)[fileStem] = request();
    }
    if (!ctx.pngRequests) {
        return;
    }
    // ImPlot's own context menu is the popup "##PlotContext" under the plot's ID; opening
    // the same popup again appends an item at its end.
    ImGui::PushOverrideID(id);
    if (ImGui::BeginPopup("##PlotContext")) {
        ImGui::Separator();
        if (ImGui::MenuItem("Save PNG")) {
            ctx.pngRequests->push_back(request());
        }
        ImGui::EndPopup();
    }
    ImGui::PopID();
}

} // namespace lmprof::ui::plot
