// The Precision lab window; the app also feeds it every frame's events (the lab reports
// it asked for) and asks whether an experiment is under way.
#pragma once

#include "lmprof/engine/precision_lab.h"
#include "plot_helpers.h"
#include "view.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmprof::ui {

// The lab's device combo: one of the engine's devices (a remote engine's list replaces the
// local one, and a device it lacks gives way to its first).
void labDeviceCombo(const char* label, const std::vector<std::string>& devices,
                    std::string& chosen);

// The precision lab (docs/PRECISION_LAB.md): accumulation error, dtypes per module, and the
// loss, loss scale and gradient norms of runs that differ only in precision.
class PrecisionLabView final : public View {
public:
    static constexpr const char* kTitle = "Precision lab";
    void draw(ViewContext& ctx) override;
    // Keeps the reports of the experiments this view asked the engine for (drawn or not).
    void observe(ViewContext& ctx, const std::vector<engine::SessionEvent>& events) override;
    // The charts alone, filling `size` (the window's, or an exported PNG's).
    void drawAccumulationChart(ViewContext& ctx, ImVec2 size);
    void drawLossChart(ViewContext& ctx, ImVec2 size);
    void drawLossScaleChart(ViewContext& ctx, ImVec2 size);
    void drawGradNormChart(ViewContext& ctx, ImVec2 size);
    // An experiment this view asked for is queued or running on the engine.
    bool busy() const;

private:
    void poll(ViewContext& ctx);
    void drawAccumulation(ViewContext& ctx);
    void drawDtypes(ViewContext& ctx);
    void drawDtypesRequest(ViewContext& ctx);
    const engine::DtypeReport& pickDtypeReport(const std::vector<engine::DtypeReport>& reports);
    void drawNumerics(ViewContext& ctx);
    // The runs of the chosen training-numerics group, each with its legend name.
    using NamedRuns = std::vector<std::pair<RunView*, std::string>>;
    NamedRuns groupRuns(ViewContext& ctx) const;
    static ImPlotSpec precisionSpec(const RunView& run);
    // One value per step of every run of the chosen group; `mark` adds crosses on the steps
    // it picks (fp16's skipped updates).
    void drawStepChart(ViewContext& ctx, const NamedRuns& runs, const char* title,
                       const char* yLabel, const char* stem, ImVec2 size, plot::FollowAxis& ax,
                       plot::FollowAxis& ay, bool logY,
                       const std::function<std::optional<double>(const engine::StepRecord&)>& value,
                       const std::function<bool(const engine::StepRecord&)>& mark = {});

    std::optional<int> m_accumulationJob; // the engine's lab index while it runs
    std::optional<int> m_dtypesJob;
    std::vector<engine::LabReport> m_arrived; // reports observed, not yet taken in by poll()
    std::string m_device = "auto";            // one of the engine's devices
    int m_maxTermsIndex = 2;                  // 1e4 .. 1e7: 1e6
    bool m_intended = false;   // errors against n × 0.01 instead of n × 0.01 as stored
    int m_model = 0;           // toy
    int m_precision = 2;       // fp16
    std::string m_shownReport; // model/precision/device of the dtype report shown
    int m_group = 0;
    bool m_lossDelta = false; // the loss chart shows loss - fp32's loss
    bool m_showGradNorms = false;
    int m_layer = 0;
    plot::FollowAxis m_accX, m_accY, m_lossX, m_lossY, m_scaleX, m_scaleY, m_normX, m_normY;
    std::vector<double> m_xs, m_ys;
    std::vector<double> m_ticks; // a log axis's tick values
};

} // namespace lmprof::ui
