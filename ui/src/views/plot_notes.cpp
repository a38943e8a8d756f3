// Text over a plot's area (plot_helpers.h): the hint of an empty plot and why it is empty,
// a note in its corner, the note of a timeline that shows one run of several, and the
// sample under the mouse.

#include "lmprof/engine/format.h"
#include "plot_helpers.h"
#include "theme.h"

#include <imgui.h>
#include <implot.h>
#include <implot_internal.h>

namespace lmprof::ui::plot {

namespace {
constexpr size_t kMaxHintBytes = 300; // of a run's error in an empty plot: a few lines
}

void hint(const char* text) {
    const ImVec2 pos = ImPlot::GetPlotPos();
    const ImVec2 size = ImPlot::GetPlotSize();
    const float wrap = std::max(size.x - 20.0f, 50.0f);
    const ImVec2 textSize = ImGui::CalcTextSize(text, nullptr, false, wrap);
    const ImVec2 at(pos.x + (size.x - textSize.x) / 2.0f, pos.y + (size.y - textSize.y) / 2.0f);
    ImPlot::PushPlotClipRect();
    ImPlot::GetPlotDrawList()->AddText(nullptr, 0.0f, at, ImGui::GetColorU32(ImGuiCol_TextDisabled),
                                       text, nullptr, wrap);
    ImPlot::PopPlotClipRect();
}

void emptyHint(const std::vector<RunView*>& runs, const char* what) {
    if (runs.empty()) {
        hint("No run selected.\nPress Run in Configure, or click a run in the Runs table "
             "(Ctrl+click to overlay several).");
        return;
    }
    const RunView& run = *runs.front();
    std::string text;
    if (!run.finished) {
        std::string one = what; // "steps" -> "step"
        if (!one.empty() && one.back() == 's') {
            one.pop_back();
        }
        text = "waiting for the first " + one + "...";
    } else {
        text = "no " + std::string(what) + ": " + engine::statusText(run.result) +
               (run.result.error ? " - " + engine::clipText(*run.result.error, kMaxHintBytes)
                                 : std::string());
    }
    hint(text.c_str());
}

void cornerNote(const char* text) {
    // Several notes of one plot in one frame stack downwards; each wraps at the plot's width.
    static const void* plot = nullptr;
    static int frame = -1;
    static float below = 0.0f;
    if (plot != ImPlot::GetCurrentPlot() || frame != ImGui::GetFrameCount()) {
        plot = ImPlot::GetCurrentPlot();
        frame = ImGui::GetFrameCount();
        below = 0.0f;
    }
    const ImVec2 pos = ImPlot::GetPlotPos();
    const ImVec2 pad = ImGui::GetStyle().FramePadding;
    const float wrap = std::max(40.0f, ImPlot::GetPlotSize().x - 2.0f * pad.x);
    ImPlot::PushPlotClipRect();
    ImPlot::GetPlotDrawList()->AddText(
        ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(pos.x + pad.x, pos.y + pad.y + below),
        ImGui::GetColorU32(ImGuiCol_TextDisabled), text, nullptr, wrap);
    ImPlot::PopPlotClipRect();
    below += ImGui::CalcTextSize(text, nullptr, false, wrap).y;
}

std::vector<RunView*> timelineRuns(const std::vector<RunView*>& selected) {
    return {selected.begin(), selected.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(selected.size(), kTimelineRuns))};
}

void timelineNote(const std::vector<RunView*>& selected) {
    if (selected.size() > kTimelineRuns) {
        const std::string note = "the first " + std::to_string(kTimelineRuns) + " of " +
                                 std::to_string(selected.size()) +
                                 " runs (right-click: select only these; or choose in Runs)";
        cornerNote(note.c_str());
    }
}

long hoveredIndex(const std::vector<double>& xs) {
    if (xs.empty() || !ImPlot::IsPlotHovered()) {
        return -1;
    }
    const double x = ImPlot::GetPlotMousePos().x;
    const auto it = std::lower_bound(xs.begin(), xs.end(), x);
    if (it == xs.end()) {
        return static_cast<long>(xs.size()) - 1;
    }
    if (it != xs.begin() && x - *(it - 1) < *it - x) {
        return static_cast<long>(it - xs.begin()) - 1;
    }
    return static_cast<long>(it - xs.begin());
}

void verdictMark(const ViewContext& ctx, const std::vector<RunView*>& runs, bool timeAxis) {
    const VerdictMark* m = ctx.verdictMark;
    if (!m) {
        return;
    }
    const auto it = std::find_if(runs.begin(), runs.end(),
                                 [m](const RunView* r) { return r->result.id == m->runId; });
    if (it == runs.end()) {
        return;
    }
    double x0 = m->firstStep - 0.5;
    double x1 = m->lastStep + 0.5;
    if (timeAxis) {
        const std::vector<double>& index = (*it)->series.index;
        const std::vector<double>& ends = (*it)->stepEndS;
        const auto first = std::lower_bound(index.begin(), index.end(), m->firstStep);
        const auto last = std::upper_bound(index.begin(), index.end(), m->lastStep);
        if (first == index.end() || last == index.begin() || ends.size() != index.size()) {
            return;
        }
        const auto p0 = static_cast<size_t>(first - index.begin());
        const auto p1 = static_cast<size_t>(last - index.begin()) - 1;
        // A step spans from the end of the one before; the first, its own length back.
        const std::vector<double>& total = (*it)->series.total;
        x0 = p0 > 0 ? ends[p0 - 1]
                    : ends[p0] - (p0 < total.size() ? std::max(0.0, total[p0]) / 1000.0 : 0.0);
        x1 = ends[p1];
    }
    const ImVec4 color = m->severity == engine::Severity::Critical ? palette().error
                         : m->severity == engine::Severity::Warn   ? palette().warning
                                                                   : palette().live;
    band(x0, x1, ImGui::GetColorU32(withAlpha(color, 0.16f)));
}

} // namespace lmprof::ui::plot
