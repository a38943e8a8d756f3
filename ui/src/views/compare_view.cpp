// Compare (A/B): the session's finished runs, or a file A, against a file B (result set
// .json or autosave .jsonl), matched by configuration with the engine's compareRuns: the
// mean step time of each, the ratio B/A with its 95% interval, the p of the same test and a
// verdict; regressions beyond noise in red. Selecting a row overlays the two step-time histograms.

#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "plot_helpers.h"
#include "view.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

// A/B comparison: the current runs (or a file A) against a file B, matched by
// configuration, ratio with 95% interval and verdict, step-time histograms of a row.
class CompareView final : public View {
public:
    static constexpr const char* kTitle = "Compare";
    void draw(ViewContext& ctx) override;

private:
    void load(ViewContext& ctx);

    char m_pathA[1024] = "";
    char m_pathB[1024] = "";
    std::vector<engine::RunResult> m_fileA; // when a path A is given
    std::vector<engine::RunResult> m_runsB;
    std::string m_loadedA, m_loadedB; // what was loaded, for the header line
    bool m_haveB = false;
    int m_selected = -1;
    std::vector<double> m_valuesA, m_valuesB;
};

using namespace lmprof::engine;

namespace {

// Runs of a result set or an autosave file; warnings of a cut last line go to `notes`.
std::vector<RunResult> loadRuns(const std::string& path, std::string& notes) {
    JsonlRuns loaded = engine::loadRuns(path);
    for (const auto& w : loaded.warnings) {
        notes += (notes.empty() ? "" : "; ") + w;
    }
    return std::move(loaded.runs);
}

} // namespace

void CompareView::load(ViewContext& ctx) {
    std::string notes;
    try {
        // Both files are read before anything changes, so a bad one leaves the view as it was.
        std::vector<RunResult> a = m_pathA[0] ? loadRuns(m_pathA, notes) : std::vector<RunResult>();
        std::vector<RunResult> b = loadRuns(m_pathB, notes);
        m_fileA = std::move(a);
        m_runsB = std::move(b);
        m_loadedA = m_pathA[0] ? std::string(m_pathA) : std::string();
        m_loadedB = m_pathB;
        m_haveB = true;
        m_selected = -1;
        ctx.report("compare: loaded " + std::to_string(m_runsB.size()) + " run(s) from " +
                       m_loadedB + (notes.empty() ? "" : " (" + notes + ")"),
                   false);
    } catch (const std::exception& e) {
        ctx.report(std::string("compare: ") + e.what(), true);
    }
}

void CompareView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const float labelWidth = ImGui::GetFontSize() * 6.0f;
    ImGui::SetNextItemWidth(-labelWidth);
    ImGui::InputTextWithHint("A (baseline)", "empty: this session's runs", m_pathA,
                             sizeof(m_pathA));
    ImGui::SetNextItemWidth(-labelWidth);
    ImGui::InputTextWithHint("B", "result set .json or autosave .jsonl", m_pathB, sizeof(m_pathB));
    ImGui::BeginDisabled(m_pathB[0] == 0);
    if (ImGui::Button("Compare")) {
        load(ctx);
    }
    ImGui::EndDisabled();
    if (!m_haveB) {
        ImGui::SameLine();
        ImGui::TextDisabled("B is matched against A by model, context, batch, precision, mode");
        ImGui::End();
        return;
    }

    std::vector<RunResult> sessionRuns;
    if (m_loadedA.empty()) {
        for (const auto& v : ctx.store.runs()) {
            if (v.finished) {
                sessionRuns.push_back(v.result);
            }
        }
    }
    const Comparison cmp = compareRuns(m_loadedA.empty() ? sessionRuns : m_fileA, m_runsB);
    ImGui::SameLine();
    ImGui::Text("A: %s   B: %s   %zu matched, %d slower beyond noise, %zu only in A, %zu only in B",
                m_loadedA.empty() ? "this session" : m_loadedA.c_str(), m_loadedB.c_str(),
                cmp.matched.size(), cmp.regressions(), cmp.onlyA.size(), cmp.onlyB.size());

    const float tableHeight = ImGui::GetContentRegionAvail().y * 0.5f;
    const char* headers[] = {"Model",     "Context",   "Precision", "Mode",   "A step ms",
                             "B step ms", "B/A [95%]", "p",         "verdict"};
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("compare", IM_ARRAYSIZE(headers), flags, ImVec2(-1, tableHeight))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        for (const char* h : headers) {
            ImGui::TableSetupColumn(h);
        }
        ImGui::TableHeadersRow();
        for (int i = 0; i < static_cast<int>(cmp.matched.size()); ++i) {
            const ComparedRun& m = cmp.matched[i];
            const RunConfig& c = m.a.config;
            ImGui::TableNextRow();
            if (m.verdict == Verdict::Slower) {
                ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0,
                                       ImGui::GetColorU32(palette().regression));
            }
            ImGui::TableNextColumn();
            ImGui::PushID(i);
            if (ImGui::Selectable(modelLabel(c.model).c_str(), i == m_selected,
                                  ImGuiSelectableFlags_SpanAllColumns)) {
                m_selected = i;
            }
            ImGui::PopID();
            cell::integer(c.contextLength);
            cell::text(toString(c.precision));
            cell::text(toString(c.mode));
            cell::text(formatMeanStd(m.a.summary.totalMs));
            cell::text(formatMeanStd(m.b.summary.totalMs));
            ImGui::TableNextColumn();
            ImGui::Text("%.3f [%.3f, %.3f]", m.stepRatio.ratio, m.stepRatio.low, m.stepRatio.high);
            cell::pAndVerdict(m.welch, m.verdict);
        }
        ImGui::EndTable();
    }

    if (m_selected < 0 || m_selected >= static_cast<int>(cmp.matched.size())) {
        ImGui::TextDisabled("Select a row to overlay its step-time distributions.");
        ImGui::End();
        return;
    }
    const ComparedRun& m = cmp.matched[m_selected];
    engine::measuredStepTimes(m.a.steps, m_valuesA);
    engine::measuredStepTimes(m.b.steps, m_valuesB);
    if (ImPlot::BeginPlot("step time distributions (measured steps)", ImVec2(-1, -1))) {
        ImPlot::SetupAxes("step ms", "steps", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
        // One bin range for both, so the bars line up.
        double lo = INFINITY, hi = -INFINITY;
        for (const auto* values : {&m_valuesA, &m_valuesB}) {
            for (double v : *values) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
        const ImPlotRange range = lo < hi ? ImPlotRange(lo, hi) : ImPlotRange();
        const size_t n = std::max(m_valuesA.size(), m_valuesB.size());
        const int bins =
            std::max(5, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
        ImPlotSpec spec;
        spec.FillAlpha = 0.5f;
        ImPlot::PlotHistogram("A", m_valuesA.data(), static_cast<int>(m_valuesA.size()), bins, 1.0,
                              range, spec);
        ImPlot::PlotHistogram("B", m_valuesB.data(), static_cast<int>(m_valuesB.size()), bins, 1.0,
                              range, spec);
        const double means[2] = {m.a.summary.totalMs.mean, m.b.summary.totalMs.mean};
        ImPlotSpec markSpec;
        markSpec.Flags = ImPlotItemFlags_NoLegend;
        ImPlot::PlotInfLines("##means", means, 2, markSpec);
        plot::endPlot(ctx, "compare");
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry compareWindow() {
    return windowOf<CompareView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
