// Precision comparison: for each model, context, mode (and warmup count) that ran in fp32
// and another precision, the speedup fp32 / other of the mean step time with its 95%
// interval, the p of the same test and whether the difference is beyond noise.

#include "lmprof/engine/report.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "plot_helpers.h"
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
    const char* headers[] = {"Model",        "Context",     "Mode",          "Warmup", "Precision",
                             "fp32 step ms", "its step ms", "speedup [95%]", "p",      "verdict"};
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("precision", IM_ARRAYSIZE(headers), flags)) {
        ImGui::TableSetupScrollFreeze(0, 1);
        for (const char* h : headers) {
            ImGui::TableSetupColumn(h);
        }
        ImGui::TableHeadersRow();
        for (const auto& cell : cells) {
            const RunConfig& c = cell.other.config;
            ImGui::TableNextRow();
            cell::text(modelLabel(c.model));
            cell::integer(c.contextLength);
            cell::text(toString(c.mode));
            cell::integer(c.warmupSteps);
            cell::text(toString(c.precision));
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
