// Many runs as one band in a step chart (band_plot.h).

#include "band_plot.h"

#include "lmprof/engine/stats.h"
#include "theme.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui::plot {

Range bandExtent(const GroupedBands& bands, const Range& xWindow) {
    Range y;
    for (const BandGroup& g : bands.groups) {
        y.add(extent(g.band.x, g.band.least, xWindow));
        y.add(extent(g.band.x, g.band.most, xWindow));
    }
    return y;
}

std::string groupLabel(const BandGroup& group) {
    return group.name + (group.runs > 1 ? " (" + std::to_string(group.runs) + " runs)" : "");
}

bool setupGroupLegend(const GroupedBands& bands) {
    std::vector<std::string> labels;
    for (const BandGroup& g : bands.groups) {
        labels.push_back(groupLabel(g));
    }
    return setupLegendOf(labels);
}

void drawBands(const GroupedBands& bands, Decimated& scratchLo, Decimated& scratchHi) {
    for (const BandGroup& g : bands.groups) {
        const ImVec4 color =
            g.merged ? ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled) : runColor(g.color);
        const std::string label = groupLabel(g);
        // One label for the three: one legend entry shows or hides the group.
        ImPlotSpec outer = colorSpec(color);
        outer.FillAlpha = 0.12f;
        shaded(label.c_str(), g.band.x, g.band.least, g.band.most, scratchLo, scratchHi, outer);
        ImPlotSpec inner = colorSpec(color);
        inner.FillAlpha = 0.35f;
        shaded(label.c_str(), g.band.x, g.band.low, g.band.high, scratchLo, scratchHi, inner);
        ImPlotSpec median = colorSpec(color);
        median.LineWeight = 2.0f;
        line(label.c_str(), g.band.x, g.band.median, scratchLo, median);
    }
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

void bandNote(const GroupedBands& bands) {
    std::string note = std::to_string(bands.runs) + " runs, " +
                       std::to_string(bands.configurations) +
                       " configurations: a band each (median, 10-90%, min-max)";
    if (!bands.groups.empty() && bands.groups.back().merged) {
        note += "; " + std::to_string(bands.groups.back().configurations) +
                " merged as \"other\" (over " + std::to_string(kBandGroups) + ")";
    }
    note += ". Select " + std::to_string(kBandRuns) + " or fewer to see each run.";
    cornerNote(note.c_str());
}

} // namespace lmprof::ui::plot
