// Many runs as one band in a step chart (band_plot.h).

#include "band_plot.h"

#include "lmprof/engine/stats.h"
#include "theme.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui::plot {

Range bandExtent(const RunsBand& band, const Range& xWindow) {
    Range y = extent(band.x, band.least, xWindow);
    y.add(extent(band.x, band.most, xWindow));
    return y;
}

void drawBand(const RunsBand& band, const ImVec4& color, Decimated& scratchLo,
              Decimated& scratchHi) {
    ImPlotSpec outer = colorSpec(color);
    outer.FillAlpha = 0.25f;
    shaded("least to most", band.x, band.least, band.most, scratchLo, scratchHi, outer);
    ImPlotSpec inner = colorSpec(color);
    inner.FillAlpha = 0.55f;
    shaded("10-90%", band.x, band.low, band.high, scratchLo, scratchHi, inner);
    // The median in the text's colour, so that it stands out of a band of the same hue.
    ImPlotSpec median = colorSpec(ImGui::GetStyleColorVec4(ImGuiCol_Text));
    median.LineWeight = 1.5f;
    const std::string label = "median of " + std::to_string(band.runs) + " runs";
    line(label.c_str(), band.x, band.median, scratchLo, median);
}

void bandTooltip(const std::vector<RunView*>& runs, StepValues values, const char* format) {
    const long step = hoveredStep();
    if (step < 0) {
        return;
    }
    const auto i = static_cast<size_t>(step);
    std::vector<std::pair<double, const RunView*>> at;
    for (const RunView* run : runs) {
        const std::vector<double>& v = run->series.*values;
        if (i < v.size() && std::isfinite(v[i])) {
            at.emplace_back(v[i], run);
        }
    }
    if (at.empty()) {
        return;
    }
    std::sort(at.begin(), at.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> sorted;
    for (const auto& [v, run] : at) {
        sorted.push_back(v);
    }
    const auto value = [format](double v) {
        char text[64];
        std::snprintf(text, sizeof(text), format, v);
        return std::string(text);
    };
    const auto q = [&](double p) { return engine::quantileSorted(sorted, p); };
    ImGui::BeginTooltip();
    ImGui::Text("step %ld, %zu runs", step, at.size());
    ImGui::Text("median %s, 10-90%% %s to %s", value(q(0.5)).c_str(), value(q(0.1)).c_str(),
                value(q(0.9)).c_str());
    for (const auto& [which, end] :
         {std::pair{"least", at.front()}, std::pair{"most", at.back()}}) {
        swatch(*end.second);
        ImGui::Text("%s %s: %s", which, end.second->name.c_str(), value(end.first).c_str());
    }
    ImGui::EndTooltip();
}

void bandNote(const RunsBand& band) {
    const std::string note = std::to_string(band.runs) + " runs drawn as one band: select " +
                             std::to_string(kBandRuns) + " or fewer to see each run";
    cornerNote(note.c_str());
}

} // namespace lmprof::ui::plot
