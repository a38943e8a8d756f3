// Compare (A/B), two ways. By configuration: the session's finished runs, or a file A,
// against a file B (result set .json or autosave .jsonl), matched by the engine's
// compareRuns. Or two runs the user picks from the session and both files, whatever their
// configurations: a watched script's run against the engine's at the same size, say. Each
// row shows what tells the runs apart (engine comparisonRows: batch, warmup, variants; "A vs
// B" where a picked pair differs), the mean step time of each, the ratio B/A with its 95%
// interval, the p of the same test and a verdict; regressions beyond noise in red.
// Selecting a row overlays the two step-time histograms.

#include "file_pick.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/ui/run_selection.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

class CompareView final : public View {
public:
    static constexpr const char* kTitle = "Compare";
    void draw(ViewContext& ctx) override;

private:
    void load(ViewContext& ctx);
    // The mode, Compare / Load files, and the two file paths: the pane's first two lines.
    void drawControls(ViewContext& ctx);
    void browseButton(const char* side, const char* dialog, char* path, size_t size);
    static constexpr const char* kDialogA = "lmprof-compare-a";
    static constexpr const char* kDialogB = "lmprof-compare-b";
    void drawPickers(const std::vector<PickableRun>& pool);
    void drawReferenceButton(ViewContext& ctx, const std::vector<PickableRun>& pool,
                             const engine::RunResult* watched);
    void drawTable(const engine::Comparison& cmp);
    void drawHistograms(ViewContext& ctx, const engine::ComparedRun& m);

    char m_pathA[1024] = "";
    char m_pathB[1024] = "";
    std::vector<engine::RunResult> m_fileA; // when a path A is given
    std::vector<engine::RunResult> m_runsB;
    std::string m_loadedA, m_loadedB; // what was loaded, for the header line
    bool m_haveB = false;
    bool m_pickTwo = false;       // two runs the user picks, not pairs matched by configuration
    std::string m_pickA, m_pickB; // PickableRun keys
    int m_selected = -1;
    std::vector<double> m_valuesA, m_valuesB;
    int m_referenceRun = -1; // the engine's run at a watched run's size, until it is picked
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

// A list of the pool to pick one run from; `key` keeps the pick.
void pickOne(const char* label, const std::vector<PickableRun>& pool, std::string& key,
             float width) {
    const auto shown =
        std::find_if(pool.begin(), pool.end(), [&](const PickableRun& p) { return p.key == key; });
    const bool picked = shown != pool.end();
    ImGui::SetNextItemWidth(width - ImGui::CalcTextSize(label).x -
                            ImGui::GetStyle().ItemInnerSpacing.x);
    if (ImGui::BeginCombo(label, picked ? shown->label.c_str() : "pick a run")) {
        for (const PickableRun& p : pool) {
            if (ImGui::Selectable(p.label.c_str(), p.key == key)) {
                key = p.key;
            }
        }
        ImGui::EndCombo();
    } else if (picked && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", shown->label.c_str()); // the whole label, cut in the box
    }
}

} // namespace

void CompareView::load(ViewContext& ctx) {
    std::string notes;
    try {
        // Both files are read before anything changes, so a bad one leaves the view as it was.
        std::vector<RunResult> a = m_pathA[0] ? loadRuns(m_pathA, notes) : std::vector<RunResult>();
        std::vector<RunResult> b = m_pathB[0] ? loadRuns(m_pathB, notes) : std::vector<RunResult>();
        m_fileA = std::move(a);
        m_runsB = std::move(b);
        m_loadedA = m_pathA[0] ? std::string(m_pathA) : std::string();
        m_loadedB = m_pathB;
        m_haveB = m_pathB[0] != 0;
        m_selected = -1;
        ctx.report("compare: loaded " + std::to_string(m_fileA.size() + m_runsB.size()) +
                       " run(s)" + (notes.empty() ? "" : " (" + notes + ")"),
                   false);
    } catch (const std::exception& e) {
        ctx.report(std::string("compare: ") + e.what(), true);
    }
}

void CompareView::drawControls(ViewContext& ctx) {
    // One line of controls, one of files, (picking) one of runs: the pane is often short.
    int mode = m_pickTwo ? 1 : 0;
    ImGui::RadioButton("Match by configuration", &mode, 0);
    ImGui::SameLine();
    ImGui::RadioButton("Pick two runs", &mode, 1);
    if ((mode == 1) != m_pickTwo) {
        m_pickTwo = mode == 1;
        m_selected = -1;
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(m_pathB[0] == 0 && (!m_pickTwo || m_pathA[0] == 0));
    if (ImGui::Button(m_pickTwo ? "Load files" : "Compare")) {
        load(ctx);
    }
    ImGui::EndDisabled();
    if (!m_pickTwo && !m_haveB) {
        ImGui::SameLine();
        ImGui::TextDisabled("B is matched against A by model, context, batch, precision, "
                            "mode, warmup and variants");
    }
    // Each path with a Browse button (a file dialog), then its label.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float browse = ImGui::CalcTextSize("Browse...").x + 2.0f * style.FramePadding.x;
    const float half = ImGui::GetContentRegionAvail().x * 0.5f;
    const float labelWidth =
        ImGui::CalcTextSize("A (baseline)").x + 2.0f * style.ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(half - labelWidth - browse - 2.0f * style.ItemSpacing.x);
    ImGui::InputTextWithHint("##A",
                             m_pickTwo ? "optional: a file whose runs join the lists"
                                       : "empty: this session's runs",
                             m_pathA, sizeof(m_pathA));
    browseButton("A", kDialogA, m_pathA, sizeof(m_pathA));
    ImGui::SameLine();
    ImGui::TextUnformatted("A (baseline)");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-ImGui::CalcTextSize("B").x - browse - style.ItemInnerSpacing.x -
                            2.0f * style.ItemSpacing.x);
    ImGui::InputTextWithHint("##B",
                             m_pickTwo ? "optional: a file whose runs join the lists"
                                       : "result set .json or autosave .jsonl",
                             m_pathB, sizeof(m_pathB));
    browseButton("B", kDialogB, m_pathB, sizeof(m_pathB));
    ImGui::SameLine();
    ImGui::TextUnformatted("B");
}

// Beside a path: a button that opens a file dialog, whose pick replaces the path.
void CompareView::browseButton(const char* side, const char* dialog, char* path, size_t size) {
    ImGui::SameLine();
    ImGui::PushID(side);
    if (ImGui::Button("Browse...")) {
        const std::filesystem::path current(path);
        std::error_code ec;
        const std::string folder =
            current.has_parent_path() && std::filesystem::is_directory(current.parent_path(), ec)
                ? current.parent_path().string()
                : std::filesystem::current_path(ec).string();
        openFileDialog(dialog, (std::string("Compare: run set ") + side).c_str(), kResultFilter,
                       false, folder);
    }
    ImGui::PopID();
    if (const auto picked = fileDialogResult(dialog); picked && !picked->empty()) {
        std::snprintf(path, size, "%s", picked->front().c_str());
    }
}

void CompareView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    drawControls(ctx);

    Comparison cmp;
    if (m_pickTwo) {
        const std::vector<PickableRun> pool =
            pickableRuns(ctx.store.runs(), m_fileA, m_loadedA, m_runsB, m_loadedB);
        drawPickers(pool);
        const RunResult* a = pickedRun(pool, m_pickA);
        const RunResult* b = pickedRun(pool, m_pickB);
        drawReferenceButton(ctx, pool, b);
        if (!a || !b) {
            ImGui::TextDisabled(pool.empty() ? "No runs yet: finish a run, or load a file."
                                             : "Pick run A (the baseline) and run B.");
            ImGui::End();
            return;
        }
        cmp.matched.push_back(compareTwo(*a, *b));
        m_selected = 0;
    } else {
        if (!m_haveB) {
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
        cmp = compareRuns(m_loadedA.empty() ? sessionRuns : m_fileA, m_runsB);
        ImGui::Text("A: %s   B: %s   %zu matched, %d slower beyond noise, %zu only in A, "
                    "%zu only in B",
                    m_loadedA.empty() ? "this session" : m_loadedA.c_str(), m_loadedB.c_str(),
                    cmp.matched.size(), cmp.regressions(), cmp.onlyA.size(), cmp.onlyB.size());
    }
    drawTable(cmp);
    if (m_selected < 0 || m_selected >= static_cast<int>(cmp.matched.size())) {
        ImGui::TextDisabled("Select a row to overlay its step-time distributions.");
    } else {
        drawHistograms(ctx, cmp.matched[m_selected]);
    }
    ImGui::End();
}

void CompareView::drawPickers(const std::vector<PickableRun>& pool) {
    const float half = ImGui::GetContentRegionAvail().x * 0.5f;
    pickOne("run A", pool, m_pickA, half - ImGui::GetStyle().ItemSpacing.x);
    ImGui::SameLine();
    pickOne("run B", pool, m_pickB, ImGui::GetContentRegionAvail().x);
}

// Your implementation against the reference (docs/WATCH.md): a watched run B with its
// model's dimensions can have the engine run at its size; once that run finishes it becomes
// run A, so the table and histograms compare the two.
void CompareView::drawReferenceButton(ViewContext& ctx, const std::vector<PickableRun>& pool,
                                      const RunResult* watched) {
    if (const RunView* v =
            m_referenceRun >= 0 ? ctx.store.findBySessionIndex(m_referenceRun) : nullptr) {
        for (const PickableRun& p : pool) {
            if (p.run == &v->result) { // finished: in the pool
                m_pickA = p.key;
                m_referenceRun = -1;
            }
        }
        if (m_referenceRun >= 0 && v->finished) {
            m_referenceRun = -1; // it ended without joining the pool (failed)
        }
    }
    if (!watched || !watched->source) {
        return;
    }
    std::string why;
    const auto config = referenceConfig(*watched, engine::RunConfig{}.measureSteps, why);
    ImGui::BeginDisabled(!config || m_referenceRun >= 0);
    if (ImGui::Button(m_referenceRun >= 0 ? "Running the reference..."
                                          : "Run the reference at this size")) {
        m_referenceRun = submitRun(ctx, *config);
    }
    ImGui::EndDisabled();
    if (!config && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        ImGui::SetTooltip("%s", why.c_str());
    } else if (config && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("lmprof's engine, %s, context %lld, batch %lld, %s, on %s",
                          modelLabel(config->model).c_str(),
                          static_cast<long long>(config->contextLength),
                          static_cast<long long>(config->batchSize),
                          std::string(toString(config->precision)).c_str(), config->device.c_str());
    }
}

void CompareView::drawTable(const Comparison& cmp) {
    const Rows rows = comparisonRows(cmp);
    const size_t columns = rows[0].size();
    // p and the verdict end the comparison's figures; the logged scalars follow.
    const size_t pColumn = comparisonFiguresAt(cmp) + kComparisonFigures - 2;
    const float tableHeight = m_pickTwo ? ImGui::GetFrameHeightWithSpacing() * 2.5f
                                        : ImGui::GetContentRegionAvail().y * 0.5f;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("compare", static_cast<int>(columns), flags, ImVec2(-1, tableHeight))) {
        return;
    }
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const std::string& h : rows[0]) {
        ImGui::TableSetupColumn(h.c_str());
    }
    ImGui::TableHeadersRow();
    for (size_t r = 1; r < rows.size(); ++r) {
        const ComparedRun& m = cmp.matched[r - 1];
        const int i = static_cast<int>(r - 1);
        ImGui::TableNextRow();
        if (m.verdict == Verdict::Slower) {
            ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0,
                                   ImGui::GetColorU32(palette().regression));
        }
        ImGui::TableNextColumn();
        ImGui::PushID(i);
        if (ImGui::Selectable(rows[r][0].c_str(), i == m_selected,
                              ImGuiSelectableFlags_SpanAllColumns)) {
            m_selected = i;
        }
        ImGui::PopID();
        // The settings and figures as written, p and the verdict in their colours, then
        // what the runs logged.
        for (size_t c = 1; c < pColumn; ++c) {
            cell::text(rows[r][c]);
        }
        cell::pAndVerdict(m.welch, m.verdict);
        for (size_t c = pColumn + 2; c < columns; ++c) {
            cell::text(rows[r][c]);
        }
    }
    noteTableRows("matched runs", static_cast<int>(rows.size()) - 1, 4);
    ImGui::EndTable();
}

void CompareView::drawHistograms(ViewContext& ctx, const ComparedRun& m) {
    engine::measuredStepTimes(m.a.steps, m_valuesA);
    engine::measuredStepTimes(m.b.steps, m_valuesB);
    if (!plot::beginPlot("step time distributions (measured steps)", ImVec2(-1, -1))) {
        return;
    }
    ImPlot::SetupAxes("step ms", "steps", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
    ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside); // off the bars
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
    const int bins = std::max(5, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
    // A and B in their runs' colours (from their ids, as everywhere); the same id on both
    // sides (a run compared with its rerun) gives B the next colour.
    const int colorA = colorOfId(m.a.id, kRunColorCount);
    int colorB = colorOfId(m.b.id, kRunColorCount);
    colorB = colorB == colorA ? (colorA + 1) % kRunColorCount : colorB;
    struct Side {
        const std::vector<double>& values;
        std::string label;
        int color;
        double mean;
    };
    const Side sides[] = {{m_valuesA, "A: " + m.a.id, colorA, m.a.summary.totalMs.mean},
                          {m_valuesB, "B: " + m.b.id, colorB, m.b.summary.totalMs.mean}};
    for (const Side& side : sides) {
        ImPlotSpec spec = plot::colorSpec(runColor(side.color));
        spec.FillAlpha = 0.5f;
        ImPlot::PlotHistogram(side.label.c_str(), side.values.data(),
                              static_cast<int>(side.values.size()), bins, 1.0, range, spec);
        // Its mean as a line in its colour, under the same legend entry.
        ImPlot::PlotInfLines(side.label.c_str(), &side.mean, 1, spec);
    }
    plot::endPlot(ctx, "compare");
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry compareWindow() {
    return windowOf<CompareView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
