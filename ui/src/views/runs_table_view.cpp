// Every run of the session (and runs opened from files): status (its message on hover),
// configuration, phase times with their std, peak memory and throughput. Click selects a
// run, Ctrl+click adds or removes it from the selection the charts overlay; the run's id
// shows on hover over its number.

#include "lmprof/engine/precision.h"
#include "lmprof/engine/report.h"
#include "table_cells.h"
#include "views.h"

#include <algorithm>
#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

void timeCell(const PhaseStats& s, bool runs) {
    if (!runs || s.n == 0) {
        ImGui::TextDisabled("-");
    } else {
        ImGui::TextUnformatted(formatMeanStd(s).c_str());
    }
}

const char* shortMode(Mode m) {
    switch (m) {
    case Mode::Forward:
        return "fwd";
    case Mode::ForwardBackward:
        return "fwd+bwd";
    case Mode::Train:
        return "train";
    }
    return "?";
}

ImVec4 statusColor(const RunView& v) {
    if (!v.finished) {
        return ImVec4(0.4f, 0.7f, 1.0f, 1.0f);
    }
    switch (v.result.status) {
    case RunStatus::Ok:
        return ImVec4(0.4f, 0.8f, 0.4f, 1.0f);
    case RunStatus::Cancelled:
    case RunStatus::Skipped:
        return ImVec4(0.8f, 0.8f, 0.4f, 1.0f);
    default:
        return ImVec4(0.95f, 0.35f, 0.3f, 1.0f);
    }
}

} // namespace

void RunsTableView::draw(ViewContext& ctx) {
    if (!ImGui::Begin("Runs")) {
        ImGui::End();
        return;
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    const char* headers[] = {"#",         "status",   "model",   "ctx",    "batch",
                             "precision", "mode",     "fwd ms",  "bwd ms", "opt ms",
                             "step ms",   "peak mem", "tokens/s"};
    if (ImGui::BeginTable("runs", IM_ARRAYSIZE(headers), flags)) {
        ImGui::TableSetupScrollFreeze(2, 1);
        // Fixed widths from sample contents, so a column never clips "1234.56 ± 12.34".
        std::string_view widestPrecision;
        for (const auto& p : engine::precisionTable()) {
            widestPrecision = p.name.size() > widestPrecision.size() ? p.name : widestPrecision;
        }
        const std::string precisionSample(widestPrecision);
        const char* samples[] = {"000",
                                 "cancelled (optimizer)",
                                 "medium",
                                 "1024",
                                 "batch",
                                 precisionSample.c_str(),
                                 "fwd+bwd",
                                 "0000.00 ± 00.00",
                                 "0000.00 ± 00.00",
                                 "0000.00 ± 00.00",
                                 "0000.00 ± 00.00",
                                 "1023.9 MiB",
                                 "0000000"};
        static_assert(IM_ARRAYSIZE(samples) == IM_ARRAYSIZE(headers));
        for (int c = 0; c < IM_ARRAYSIZE(headers); ++c) {
            const float width =
                std::max(ImGui::CalcTextSize(samples[c]).x, ImGui::CalcTextSize(headers[c]).x);
            ImGui::TableSetupColumn(headers[c], ImGuiTableColumnFlags_WidthFixed, width);
        }
        ImGui::TableHeadersRow();
        auto& runs = ctx.store.runs();
        for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
            RunView& v = runs[i];
            const RunConfig& c = v.result.config;
            const RunSummary& s = v.liveSummary();
            const auto phases = phasesOf(c.mode);
            ImGui::TableNextRow();
            ImGui::TableSetColumnIndex(0);
            ImGui::PushID(i);
            const std::string number = std::to_string(i + 1);
            if (ImGui::Selectable(number.c_str(), ctx.store.isSelected(i),
                                  ImGuiSelectableFlags_SpanAllColumns)) {
                if (ImGui::GetIO().KeyCtrl) {
                    ctx.store.toggle(i);
                } else {
                    ctx.store.selectOnly(i);
                }
            }
            if (ImGui::IsItemHovered() && !v.result.id.empty()) {
                ImGui::SetTooltip("%s", v.result.id.c_str());
            }
            ImGui::PopID();
            ImGui::TableNextColumn();
            const std::string status = v.finished ? statusText(v.result) : "running";
            ImGui::TextColored(statusColor(v), "%s", status.c_str());
            if (v.result.error && ImGui::IsItemHovered()) {
                ImGui::SetTooltip("%s", v.result.error->c_str());
            }
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(c.model.preset.c_str());
            cell::integer(c.contextLength);
            cell::integer(c.batchSize);
            cell::text(toString(c.precision));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(shortMode(c.mode));
            ImGui::TableNextColumn();
            timeCell(s.forwardMs, true);
            ImGui::TableNextColumn();
            timeCell(s.backwardMs, phases.size() > 1);
            ImGui::TableNextColumn();
            timeCell(s.optimizerMs, phases.size() > 2);
            ImGui::TableNextColumn();
            timeCell(s.totalMs, true);
            cell::peakAndTokens(s);
        }
        ImGui::EndTable();
    }
    ImGui::End();
}

} // namespace lmprof::ui
