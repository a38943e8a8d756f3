// The verdict strip: the run's verdicts as chips along the bottom of the window
// (verdict_strip.h).

#include "verdict_strip.h"

#include "lmprof/engine/verdicts.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>
#include <imgui_internal.h>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

namespace {

using engine::Certainty;
using engine::RunVerdict;
using engine::Severity;

ImVec4 chipColor(const RunVerdict& v) {
    if (v.certainty == Certainty::Abstained) {
        return ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    }
    switch (v.severity) {
    case Severity::Critical:
        return palette().error;
    case Severity::Warn:
        return palette().warning;
    case Severity::Info:
        break;
    }
    return ImGui::GetStyleColorVec4(ImGuiCol_Text);
}

// "critical input-bound 72.7% [69.5%, 76.0%]", "likely drift -12.0% [...]", "memory-creep:
// needs 20 steps": short enough that a few fit on a line at 1280 px.
std::string chipText(const RunVerdict& v) {
    const std::string kind(toString(v.kind));
    if (v.certainty == Certainty::Abstained) {
        return kind + ": " + v.evidence.substr(0, v.evidence.find(';'));
    }
    const std::string grade = v.certainty == Certainty::Likely
                                  ? std::string("likely ")
                                  : std::string(toString(v.severity)) + " ";
    return grade + kind + " " + engine::verdictValueText(v, v.value) + " [" +
           engine::verdictValueText(v, v.low) + ", " + engine::verdictValueText(v, v.high) + "]";
}

bool isMarked(const std::optional<VerdictMark>& mark, const std::string& runId,
              const RunVerdict& v) {
    return mark && mark->runId == runId && mark->kind == v.kind;
}

void tooltip(const RunVerdict& v, const std::optional<std::string>& window) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
    ImGui::TextColored(chipColor(v), "%s", engine::verdictLine(v).c_str());
    ImGui::TextUnformatted(v.evidence.c_str());
    if (!v.advice.empty()) {
        ImGui::Text("Next: %s", v.advice.c_str());
    }
    ImGui::TextDisabled("Rule: %s", v.rule.c_str());
    if (window) {
        ImGui::TextDisabled("Click: %s, with steps %d-%d marked (click again to unmark).",
                            window->c_str(), v.firstStep, v.lastStep);
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
}

// One verdict as a button in its colour, framed while its steps are marked; a click marks
// them (or unmarks) and brings its chart forward.
void chip(const RunVerdict& v, const std::string& runId, std::optional<VerdictMark>& mark,
          const std::function<void(const std::string&)>& bringForward) {
    const std::string label = chipText(v) + "##" + std::string(toString(v.kind));
    const bool marked = isMarked(mark, runId, v);
    const ImVec4 color = chipColor(v);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::PushStyleColor(ImGuiCol_Button, withAlpha(color, marked ? 0.30f : 0.10f));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, withAlpha(color, 0.22f));
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, withAlpha(color, 0.35f));
    const bool clicked = ImGui::SmallButton(label.c_str());
    ImGui::PopStyleColor(4);
    const std::optional<std::string> window = windowOfChart(v.chart);
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_DelayShort)) {
        tooltip(v, window);
    }
    if (!clicked) {
        return;
    }
    if (marked) {
        mark.reset();
        return;
    }
    mark = VerdictMark{runId, v.kind, v.severity, v.firstStep, v.lastStep};
    if (window) {
        bringForward(*window);
    }
}

float chipWidth(const RunVerdict& v) {
    return ImGui::CalcTextSize(chipText(v).c_str()).x + ImGui::GetStyle().FramePadding.x * 2.0f +
           ImGui::GetStyle().ItemSpacing.x;
}

} // namespace

std::optional<std::string> windowOfChart(const std::string& chart) {
    for (const WindowEntry& w : windowRegistry()) {
        for (const ChartEntry& c : w.charts) {
            if (chart == c.name) {
                return std::string(w.title);
            }
        }
    }
    return std::nullopt;
}

void VerdictStrip::draw(RunStore& store, std::optional<VerdictMark>& mark,
                        const std::function<void(const std::string&)>& bringForward) {
    // A line of chips and little more: the charts above keep the height.
    const float pad = ImGui::GetStyle().FramePadding.y;
    const float height = ImGui::GetFrameHeight() + pad * 2.0f;
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoScrollbar |
                                   ImGuiWindowFlags_NoScrollWithMouse |
                                   ImGuiWindowFlags_NoSavedSettings;
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                        ImVec2(ImGui::GetStyle().WindowPadding.x, pad));
    const bool open = ImGui::BeginViewportSideBar("##verdicts", ImGui::GetMainViewport(),
                                                  ImGuiDir_Down, height, flags);
    ImGui::PopStyleVar();
    if (open) {
        drawLine(store, mark, bringForward);
    }
    ImGui::End();
}

void VerdictStrip::drawLine(RunStore& store, std::optional<VerdictMark>& mark,
                            const std::function<void(const std::string&)>& bringForward) {
    ImGui::AlignTextToFramePadding();
    RunView* run = verdictRun(store);
    m_run = run ? run->result.id : std::string();
    m_chips.clear();
    m_more = 0;
    if (!run) {
        ImGui::TextDisabled("Verdicts: select a run, or start one, to see what bounds its steps");
        return;
    }
    const std::vector<RunVerdict>& verdicts = m_cache.of(*run);
    ImGui::TextUnformatted("Verdicts");
    ImGui::SameLine();
    ImGui::TextDisabled("%s%s:", run->finished ? "" : "live, ",
                        (run->name.empty() ? run->result.id : run->name).c_str());
    if (verdicts.empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("none yet: the run has no measured steps");
        return;
    }
    const float moreWidth =
        ImGui::CalcTextSize("+99 more").x + ImGui::GetStyle().FramePadding.x * 4;
    size_t shown = 0;
    for (const RunVerdict& v : verdicts) {
        ImGui::SameLine();
        const float left = ImGui::GetContentRegionMax().x - ImGui::GetCursorPosX();
        const bool last = shown + 1 == verdicts.size();
        if (chipWidth(v) > left - (last ? 0.0f : moreWidth)) {
            break;
        }
        chip(v, run->result.id, mark, bringForward);
        m_chips.push_back(chipText(v));
        ++shown;
    }
    if (shown == verdicts.size()) {
        return;
    }
    m_more = verdicts.size() - shown;
    const std::string more = "+" + std::to_string(verdicts.size() - shown) + " more";
    ImGui::SameLine();
    if (ImGui::SmallButton(more.c_str())) {
        ImGui::OpenPopup("##more-verdicts");
    }
    if (ImGui::BeginPopup("##more-verdicts")) {
        for (size_t i = shown; i < verdicts.size(); ++i) {
            chip(verdicts[i], run->result.id, mark, bringForward);
        }
        ImGui::EndPopup();
    }
}

std::optional<std::string> VerdictStrip::select(const std::string& kind, RunStore& store,
                                                std::optional<VerdictMark>& mark) {
    RunView* run = verdictRun(store);
    if (!run) {
        return std::nullopt;
    }
    for (const RunVerdict& v : m_cache.of(*run)) {
        if (toString(v.kind) == kind) {
            mark = VerdictMark{run->result.id, v.kind, v.severity, v.firstStep, v.lastStep};
            return windowOfChart(v.chart);
        }
    }
    return std::nullopt;
}

std::string VerdictStrip::kindsShown(RunStore& store) {
    RunView* run = verdictRun(store);
    std::string kinds;
    for (const RunVerdict& v : run ? m_cache.of(*run) : std::vector<RunVerdict>{}) {
        kinds += (kinds.empty() ? "" : ", ") + std::string(toString(v.kind));
    }
    return kinds.empty() ? "none" : kinds;
}

nlohmann::json VerdictStrip::report(const std::optional<VerdictMark>& mark) const {
    const ImGuiWindow* strip = ImGui::FindWindowByName("##verdicts");
    nlohmann::json r{{"run", m_run},
                     {"chips", m_chips},
                     {"more", m_more},
                     {"mark", mark ? nlohmann::json(std::string(toString(mark->kind))) : nullptr}};
    if (strip) {
        r["y"] = strip->Pos.y;
        r["height"] = strip->Size.y;
    }
    return r;
}

} // namespace lmprof::ui
