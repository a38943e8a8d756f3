// Text of a plot (plot_helpers.h): the hint of an empty plot and why it is empty, notes
// above its data (kept from frame to frame, plot by plot), the note of a timeline that shows
// one run of several, and the sample under the mouse.

#include "lmprof/engine/format.h"
#include "plot_helpers.h"
#include "theme.h"

#include <algorithm>
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

namespace {

// Text wrapped to `width` with line breaks, as ImGui would wrap it.
std::string wrapped(const std::string& text, float width) {
    std::string out;
    const char* at = text.c_str();
    const char* end = at + text.size();
    while (at < end) {
        const char* cut = ImGui::GetFont()->CalcWordWrapPosition(ImGui::GetFontSize(), at, end,
                                                                 std::max(width, 40.0f));
        cut = cut == at ? at + 1 : cut; // a word wider than the line still moves on
        out.append(at, cut);
        while (cut < end && (*cut == ' ' || *cut == '\n')) {
            ++cut;
        }
        if (cut < end) {
            out += '\n';
        }
        at = cut;
    }
    return out;
}

} // namespace

bool beginPlot(const char* titleId, const ImVec2& size, ImPlotFlags flags) {
    if (!ImPlot::BeginPlot(titleId, size, flags)) {
        return false;
    }
    ImPlotPlot* plot = ImPlot::GetCurrentPlot();
    const ChartState& chart = ChartBook::current().chartBeingDrawn();
    if (chart.shownNotes.empty()) {
        return true;
    }
    // The notes as the title's lines: ImPlot keeps room for a title above the axes, centred
    // over the data area (last frame's: a legend outside takes the rest). Past the lines it
    // has room for, the last line says how many more a hover shows.
    const float width = plot->PlotRect.GetWidth() > 0.0f
                            ? plot->PlotRect.GetWidth()
                            : plot->FrameRect.GetWidth() - 2.0f * ImPlot::GetStyle().PlotPadding.x;
    const char* own = plot->HasTitle() ? plot->GetTitle() : "";
    std::string title(own, ImGui::FindRenderedTextEnd(own));
    std::vector<std::string> lines;
    for (const std::string& note : chart.shownNotes) {
        const std::string text = wrapped(note, width);
        for (size_t at = 0; at <= text.size();) {
            const size_t cut = std::min(text.find('\n', at), text.size());
            lines.push_back(text.substr(at, cut - at));
            at = cut + 1;
        }
    }
    // Lines that leave the plot its readable height (ImPlot's floor, axis labels in, which
    // window_layout.cpp holds plots to), and at most a third of the frame.
    const float line = ImGui::GetTextLineHeight();
    const float frame = plot->FrameRect.GetHeight();
    const float room = std::min(frame / 3.0f, frame - ImPlot::GetStyle().PlotMinSize.y) / line;
    const auto budget = static_cast<size_t>(std::max(1.0f, room - (title.empty() ? 0.0f : 1.0f)));
    if (lines.size() > budget) {
        const size_t more = lines.size() - (budget - 1);
        lines.resize(budget - 1);
        // The longest wording that fits the data's width (a narrow pane clips it otherwise).
        const std::string n = "+" + std::to_string(more);
        for (const std::string& say : {n + " more lines of notes: hover here",
                                       n + " more lines: hover here", n + " more: hover", n}) {
            if (ImGui::CalcTextSize(say.c_str()).x <= width || say == n) {
                lines.push_back(say);
                break;
            }
        }
    }
    for (const std::string& line : lines) {
        title += (title.empty() ? "" : "\n") + line;
    }
    title += "##notes"; // "##" ends what is drawn, and keeps a note's own "##" text out
    plot->SetTitle(title.c_str());
    return true;
}

void notesTooltip() {
    const ImPlotPlot* plot = ImPlot::GetCurrentPlot();
    const ChartState& chart = ChartBook::current().chartBeingDrawn();
    const ImVec2 top = plot->FrameRect.Min;
    const ImVec2 bottom(plot->FrameRect.Max.x, plot->PlotRect.Min.y);
    if (chart.shownNotes.empty() || !ImGui::IsWindowHovered() ||
        !ImGui::IsMouseHoveringRect(top, bottom)) {
        return;
    }
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    for (const std::string& note : chart.shownNotes) {
        ImGui::BulletText("%s", note.c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

bool notesOverData() {
    return ChartBook::current().chartBeingDrawn().notesBelow > 0.0f;
}

void cornerNote(const char* text) {
    ChartState& chart = ChartBook::current().chartBeingDrawn();
    chart.pendingNotes.emplace_back(text);
    if (std::find(chart.shownNotes.begin(), chart.shownNotes.end(), chart.pendingNotes.back()) !=
        chart.shownNotes.end()) {
        return; // above the data already
    }
    // New this frame: in the corner once, over the data, until the plot is laid out for it.
    const ImVec2 pos = ImPlot::GetPlotPos();
    const ImVec2 pad = ImGui::GetStyle().FramePadding;
    const float wrap = std::max(40.0f, ImPlot::GetPlotSize().x - 2.0f * pad.x);
    ImPlot::PushPlotClipRect();
    ImPlot::GetPlotDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                                       ImVec2(pos.x + pad.x, pos.y + pad.y + chart.notesBelow),
                                       ImGui::GetColorU32(ImGuiCol_TextDisabled), text, nullptr,
                                       wrap);
    ImPlot::PopPlotClipRect();
    chart.notesBelow += ImGui::CalcTextSize(text, nullptr, false, wrap).y;
}

std::vector<RunView*> timelineRuns(const std::vector<RunView*>& selected) {
    return {selected.begin(), selected.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(selected.size(), kTimelineRuns))};
}

void timelineNote(const std::vector<RunView*>& selected) {
    if (selected.size() > kTimelineRuns) {
        const std::string note = "the first " + std::to_string(kTimelineRuns) + " of " +
                                 std::to_string(selected.size()) +
                                 " runs (right-click to select only these)";
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
