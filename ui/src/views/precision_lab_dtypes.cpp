// The Precision lab's dtypes tab (precision_lab_view.h): every module's dtypes under a
// precision, from an inspection the engine runs (DtypeRequest), reduced cells coloured and
// each row's note.

#include "lmprof/engine/report.h"
#include "precision_lab_view.h"
#include "table_cells.h"
#include "theme.h"

#include <imgui.h>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

using namespace lmprof::engine;

// The model, precision and device of an inspection, and the Inspect button that submits it.
void PrecisionLabView::drawDtypesRequest(ViewContext& ctx) {
    const std::vector<std::string> models = dtypeModelNames();
    m_model = std::clamp(m_model, 0, static_cast<int>(models.size()) - 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
    if (ImGui::BeginCombo("model", models[m_model].c_str())) {
        for (int i = 0; i < static_cast<int>(models.size()); ++i) {
            if (ImGui::Selectable(models[i].c_str(), i == m_model)) {
                m_model = i;
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
    const Precision chosen = kPrecisions[static_cast<size_t>(m_precision)];
    if (ImGui::BeginCombo("precision", toString(chosen).data())) {
        for (int i = 0; i < static_cast<int>(kPrecisions.size()); ++i) {
            if (ImGui::Selectable(toString(kPrecisions[i]).data(), i == m_precision)) {
                m_precision = i;
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    labDeviceCombo("device##dtypes", ctx.session.devices(), m_device);
    ImGui::SameLine();
    ImGui::BeginDisabled(busy() || ctx.session.busy());
    if (ImGui::Button("Inspect")) {
        DtypeRequest request;
        request.model = models[m_model];
        request.precision = chosen;
        request.device = m_device;
        m_dtypesJob = ctx.session.submitLab(request);
        ctx.report("inspecting the dtypes of " + request.model + " under " +
                       std::string(toString(chosen)) + "...",
                   false);
    }
    ImGui::EndDisabled();
    if (m_dtypesJob) {
        ImGui::SameLine();
        ImGui::TextDisabled("running...");
    }
}

// The report shown: the one just made, or picked among those made or opened (not empty).
const DtypeReport& PrecisionLabView::pickDtypeReport(const std::vector<DtypeReport>& reports) {
    int shown = static_cast<int>(reports.size()) - 1;
    for (int i = 0; i < static_cast<int>(reports.size()); ++i) {
        const auto& d = reports[i];
        if (d.model + "/" + std::string(toString(d.precision)) + "/" + d.device == m_shownReport) {
            shown = i;
        }
    }
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16.0f);
    auto reportName = [](const DtypeReport& d) {
        return d.model + " · " + std::string(toString(d.precision)) + " · " + d.device;
    };
    if (ImGui::BeginCombo("report", reportName(reports[shown]).c_str())) {
        for (int i = 0; i < static_cast<int>(reports.size()); ++i) {
            if (ImGui::Selectable(reportName(reports[i]).c_str(), i == shown)) {
                m_shownReport = reports[i].model + "/" +
                                std::string(toString(reports[i].precision)) + "/" +
                                reports[i].device;
                shown = i;
            }
        }
        ImGui::EndCombo();
    }
    return reports[shown];
}

namespace {

// A report's table: each module's dtypes, reduced-precision cells in the warning colour
// (where autocast, or a bf16 model, put the numbers into 16 bits), the notes wrapping.
void drawDtypeTable(const Rows& rows) {
    const auto tint = [&rows](size_t r, size_t c) -> std::optional<ImVec4> {
        if (c >= 2 && c <= 5 && isReducedDtype(rows[r][c])) {
            return palette().warning;
        }
        return std::nullopt;
    };
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable;
    if (!ImGui::BeginTable("##dtypes", 7, flags, ImVec2(0, 0))) {
        return;
    }
    ImGui::TableSetupScrollFreeze(0, 1);
    const float em = ImGui::GetFontSize();
    const float widths[] = {14 * em, 7 * em, 5 * em, 6 * em, 4 * em, 5 * em};
    for (size_t c = 0; c < 6; ++c) {
        ImGui::TableSetupColumn(rows[0][c].c_str(), ImGuiTableColumnFlags_WidthFixed, widths[c]);
    }
    ImGui::TableSetupColumn(rows[0][6].c_str(), ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    drawRowsBody(rows, tint, 6); // the notes wrap
    ImGui::EndTable();
}

} // namespace

void PrecisionLabView::drawDtypes(ViewContext& ctx) {
    drawDtypesRequest(ctx);
    const auto& reports = ctx.store.lab().dtypes;
    if (reports.empty()) {
        ImGui::TextWrapped(
            "Runs one forward and backward of the CS336 study's ToyModel (fc1, ReLU, "
            "LayerNorm, fc2) or an LM preset under a precision and shows the "
            "dtype every module saw: its parameters, input, output and, after "
            "backward, its gradients; reduced-precision cells are coloured and "
            "each row says why. Press Inspect.");
        return;
    }
    const DtypeReport& report = pickDtypeReport(reports);
    ImGui::SameLine();
    ImGui::Text("autocast %s", report.autocast.c_str());
    if (report.error) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
        ImGui::TextWrapped("Not run: %s", report.error->c_str());
        ImGui::PopStyleColor();
        return;
    }
    ImGui::SameLine();
    copyMarkdownButton("Copy as Markdown##dtypes", dtypeRows(report, true, false), 7);
    drawDtypeTable(dtypeRows(report, true, true));
}

} // namespace lmprof::ui
