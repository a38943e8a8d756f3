// Precision comparison: for each configuration that ran in fp32 and another precision (its
// rows told apart by engine::settingColumns), the speedup fp32 / other of the mean step time with
// its 95% interval, the p of the same test and whether the difference is beyond noise.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>

namespace lmprof::ui {

// Speedup of bf16 / fp16 / bf16-pure over fp32 per cell, with interval, p and verdict from one
// test.
class PrecisionView final : public View {
public:
    static constexpr const char* kTitle = "Precision";
    void draw(ViewContext& ctx) override;
};

using namespace lmprof::engine;

void PrecisionView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const std::vector<PrecisionCell> cells = precisionComparison(ctx.store);
    if (cells.empty()) {
        std::string others;
        for (Precision p : kPrecisions) {
            if (p != Precision::Fp32) {
                others += (others.empty() ? "" : ", ") + std::string(toString(p));
            }
        }
        ImGui::TextDisabled("Run the same configuration in fp32 and in another precision (%s; "
                            "a sweep with two precisions does) to compare them here.",
                            others.c_str());
        ImGui::End();
        return;
    }
    ImGui::TextDisabled("speedup = fp32 step time / this precision's; beyond noise when p < %.2f, "
                        "i.e. when the interval excludes 1",
                        kSignificance);
    // The settings that tell the rows apart (engine::settingColumns), then the figures.
    std::vector<const RunResult*> compared;
    for (const auto& cell : cells) {
        compared.push_back(&cell.fp32);
        compared.push_back(&cell.other);
    }
    const std::vector<const RunColumn*> settings = settingColumns(compared);
    std::vector<std::string> headers;
    for (const RunColumn* c : settings) {
        headers.push_back(c->header);
    }
    for (const char* h : {"fp32 step ms", "its step ms", "speedup [95%]", "p", "verdict"}) {
        headers.emplace_back(h);
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("precision", static_cast<int>(headers.size()), flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        for (const std::string& h : headers) {
            ImGui::TableSetupColumn(h.c_str());
        }
        ImGui::TableHeadersRow();
        for (const auto& cell : cells) {
            ImGui::TableNextRow();
            for (const RunColumn* c : settings) {
                cell::text(c->cellOf(cell.other, cell.other.summary));
            }
            cell::text(formatMeanStd(cell.fp32.summary.totalMs));
            cell::text(formatMeanStd(cell.other.summary.totalMs));
            ImGui::TableNextColumn();
            ImGui::Text("%.2fx [%.2f, %.2f]", cell.speedup, cell.low, cell.high);
            // The verdict is of the other precision's step time against fp32's.
            const Verdict v = cell.verdict;
            cell::pAndVerdict(cell.welch, v,
                              v == Verdict::Faster   ? "faster"
                              : v == Verdict::Slower ? "slower"
                                                     : std::string_view());
        }
        ImGui::EndTable();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry precisionWindow() {
    return windowOf<PrecisionView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
