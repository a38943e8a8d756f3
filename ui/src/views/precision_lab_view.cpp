// The Precision lab (docs/PRECISION_LAB.md): what reduced precision does to numbers, beside
// the speed it buys. Three tabs: accumulation (the seeds' loops, the grid's error against
// the number of terms with the stalls marked), dtypes (every module's dtypes under a
// precision, reduced cells coloured, the notes; precision_lab_dtypes.cpp), and training numerics
// (loss curves of runs that differ only in precision, the fp16 loss scale and skipped updates,
// gradient norms). The two experiments are requests to the engine (SessionInterface::submitLab),
// local or remote, on its devices; their reports come back as LabFinished events.

#include "precision_lab_view.h"

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <imgui.h>
#include <implot.h>
#include <map>
#include <sstream>

namespace lmprof::ui {

using namespace lmprof::engine;

void labDeviceCombo(const char* label, const std::vector<std::string>& devices,
                    std::string& chosen) {
    if (std::find(devices.begin(), devices.end(), chosen) == devices.end()) {
        chosen = devices.empty() ? "auto" : devices.front();
    }
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.0f);
    deviceCombo(label, devices, chosen);
}

namespace {

// Each accumulator its colour, each addend its marker; LibTorch's sum() grey.
// The addend formats' markers as text, in the same order: circle, diamond, square.
constexpr const char* kAddendGlyphs[] = {" \u25CF", " \u25C6", " \u25A0"};

ImPlotSpec seriesSpec(const AccumulationSeries& s) {
    ImPlotSpec spec = plot::colorSpec(
        runColor(s.accumulator ? static_cast<int>(*s.accumulator) : kRunColorCount - 1));
    const ImPlotMarker markers[] = {ImPlotMarker_Circle, ImPlotMarker_Diamond, ImPlotMarker_Square};
    static_assert(std::size(markers) == std::size(kAddendGlyphs));
    spec.Marker = markers[static_cast<int>(s.addend)];
    spec.MarkerSize = 3.0f;
    spec.LineWeight = s.accumulator ? 1.5f : 2.5f;
    return spec;
}

} // namespace

void PrecisionLabView::observe(ViewContext&, const std::vector<SessionEvent>& events) {
    for (const auto& e : events) {
        const auto* fin = std::get_if<LabFinished>(&e);
        if (fin && (fin->labIndex == m_accumulationJob || fin->labIndex == m_dtypesJob)) {
            (fin->labIndex == m_accumulationJob ? m_accumulationJob : m_dtypesJob).reset();
            m_arrived.push_back(fin->report);
        }
    }
}

void PrecisionLabView::poll(ViewContext& ctx) {
    for (LabReport& arrived : std::exchange(m_arrived, {})) {
        if (auto* dtypes = std::get_if<DtypeReport>(&arrived)) {
            DtypeReport report = std::move(*dtypes);
            ctx.report("dtypes of " + report.model + " under " +
                           std::string(toString(report.precision)) +
                           (report.error ? ": " + *report.error : " done"),
                       report.error.has_value());
            m_shownReport =
                report.model + "/" + std::string(toString(report.precision)) + "/" + report.device;
            ctx.store.addDtypeReport(std::move(report));
            continue;
        }
        AccumulationReport report = std::move(std::get<AccumulationReport>(arrived));
        if (report.error) {
            ctx.report("accumulation: " + *report.error, !report.cancelled);
        } else {
            ctx.report("accumulation on " + report.device + " done", false);
        }
        // A cancelled or failed run does not replace a whole one (the status line says
        // why it stopped); kept if there is nothing else to show.
        if (!report.error || (!ctx.store.lab().accumulation && !report.seedLoops.empty())) {
            ctx.store.lab().accumulation = std::move(report);
        }
    }
}

bool PrecisionLabView::busy() const {
    return m_accumulationJob || m_dtypesJob;
}

void PrecisionLabView::draw(ViewContext& ctx) {
    poll(ctx);
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    if (ImGui::BeginTabBar("##lab")) {
        if (ImGui::BeginTabItem("Accumulation")) {
            drawAccumulation(ctx);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Dtypes")) {
            drawDtypes(ctx);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Training numerics")) {
            drawNumerics(ctx);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::End();
}

// ---------------------------------------------------------------------------------------
// Accumulation

void PrecisionLabView::drawAccumulation(ViewContext& ctx) {
    labDeviceCombo("device##acc", ctx.session.devices(), m_device);
    ImGui::SameLine();
    const char* sizes[] = {"1e4", "1e5", "1e6", "1e7"};
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.0f);
    ImGui::Combo("terms", &m_maxTermsIndex, sizes, IM_ARRAYSIZE(sizes));
    ImGui::SameLine();
    const bool running = m_accumulationJob.has_value();
    ImGui::BeginDisabled(running || busy() || ctx.session.busy());
    if (ImGui::Button("Run")) {
        AccumulationRequest request;
        request.device = m_device;
        request.maxTerms = static_cast<int64_t>(std::pow(10.0, 4 + m_maxTermsIndex));
        m_accumulationJob = ctx.session.submitLab(request);
        ctx.report("accumulating 0.01 up to " + std::string(sizes[m_maxTermsIndex]) + " times on " +
                       request.device + "...",
                   false);
    }
    ImGui::EndDisabled();
    if (running) {
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) {
            ctx.session.cancel(); // the grid stops within a chunk, with what it has
        }
        ImGui::SameLine();
        ImGui::TextDisabled("running...");
    } else if (ctx.session.busy()) {
        ImGui::SameLine();
        ImGui::TextDisabled("(waits for the run in progress, whose timings it would disturb)");
    }
    const auto& report = ctx.store.lab().accumulation;
    if (!report) {
        ImGui::TextWrapped(
            "Adds 0.01 over and over in fp32, fp16 and bf16, as the CS336 study "
            "does by hand: their four loops, then every accumulator with every addend "
            "up to the chosen number of terms, with LibTorch's sum() of the same "
            "values for reference. Press Run.");
        return;
    }
    ImGui::Text("On %s: 1000 × 0.01", report->device.c_str());
    ImGui::SameLine();
    const Rows loops = seedLoopRows(*report);
    copyMarkdownButton("Copy as Markdown##loops", loops, 1);
    drawRowsTable("##seed-loops", loops);
    ImGui::Checkbox("error against n × 0.01 (with the error of storing 0.01)", &m_intended);
    plot::helpMarker();
    const float height =
        std::max(ImGui::GetFontSize() * 14.0f, ImGui::GetContentRegionAvail().y * 0.55f);
    drawAccumulationChart(ctx, ImVec2(-1, height));
    if (ImGui::CollapsingHeader("Sums at every decade")) {
        const Rows grid = accumulationRows(*report, false);
        copyMarkdownButton("Copy as Markdown##grid", grid, 2);
        drawRowsTable("##grid", grid);
    }
}

void PrecisionLabView::drawAccumulationChart(ViewContext& ctx, ImVec2 size) {
    const auto& report = ctx.store.lab().accumulation;
    if (!plot::beginPlot("relative error of the sum", size)) {
        return;
    }
    ImPlot::SetupAxes("terms added", "|sum - exact| / exact");
    ImPlot::SetupAxisScale(ImAxis_X1, ImPlotScale_Log10);
    ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
    ImPlot::SetupLegend(ImPlotLocation_East, ImPlotLegendFlags_Outside);
    plot::Range xs, ys;
    bool zeros = false;
    m_xs.clear();
    if (report) {
        for (const auto& s : report->series) {
            for (const auto& p : s.points) {
                xs.add(static_cast<double>(p.terms));
                const double e = relativeError(s, p, m_intended);
                if (e > 0) {
                    ys.add(e);
                } else {
                    zeros = true;
                }
            }
        }
    }
    plot::watchInput({&m_accX, &m_accY});
    m_accX.setup(ImAxis_X1,
                 xs.empty() ? plot::Range{100, 1e6} : plot::Range{xs.lo / 1.3, xs.hi * 1.3}, 0.0);
    m_accY.setup(ImAxis_Y1, ys.empty() ? plot::Range{1e-8, 1} : plot::Range{ys.lo / 3, ys.hi * 3},
                 0.0);
    if (!report) {
        plot::hint("Run the experiment to see the error grow with the number of terms");
    } else {
        for (const auto& s : report->series) {
            m_xs.clear();
            m_ys.clear();
            for (const auto& p : s.points) {
                const double e = relativeError(s, p, m_intended);
                if (e > 0) {
                    m_xs.push_back(static_cast<double>(p.terms));
                    m_ys.push_back(e);
                }
            }
            // Colour says the accumulator, the marker the addend's format: the marker's
            // shape follows the name, as the legend's swatch shows the colour alone.
            const std::string label = s.label() + kAddendGlyphs[static_cast<int>(s.addend)];
            plot::record(plot::DrawnSeries{label, m_xs, m_ys});
            ImPlot::PlotLine(label.c_str(), m_xs.data(), m_ys.data(), static_cast<int>(m_xs.size()),
                             seriesSpec(s));
        }
        // Where each reduced accumulator stops growing: one line per accumulator, labelled.
        std::map<NumberFormat, const AccumulationSeries*> stalls;
        for (const auto& s : report->series) {
            if (s.accumulator && s.stallTerms && !stalls.count(*s.accumulator)) {
                stalls[*s.accumulator] = &s;
            }
        }
        int row = 0;
        for (const auto& [acc, s] : stalls) {
            const double x = static_cast<double>(*s->stallTerms);
            ImPlotSpec spec = plot::colorSpec(withAlpha(runColor(static_cast<int>(acc)), 0.6f));
            const std::string id = "##stall" + std::string(toString(acc));
            ImPlot::PlotInfLines(id.c_str(), &x, 1, spec);
            const plot::Range shown = plot::shownRange(ImAxis_Y1);
            const double y =
                shown.empty()
                    ? 1e-3
                    : std::pow(10.0, std::log10(shown.lo) +
                                         0.15 * (row + 1) * std::log10(shown.hi / shown.lo));
            ImPlot::Annotation(x, y, runColor(static_cast<int>(acc)), ImVec2(6, 0), true,
                               "%s stops growing at %lld terms (sum %g)", toString(acc).data(),
                               static_cast<long long>(*s->stallTerms), *s->stallSum);
            ++row;
        }
        if (zeros) {
            plot::cornerNote("exact sums (error 0) are not drawn on the log axis");
        }
    }
    plot::endPlot(ctx, "accumulation");
}

// ---------------------------------------------------------------------------------------
// Training numerics

void PrecisionLabView::drawNumerics(ViewContext& ctx) {
    const std::vector<LossGroup> groups = lossGroups(ctx.store);
    if (groups.empty()) {
        ImGui::TextWrapped("Every run records its loss on the same fixed batch. Run one model in "
                           "fp32 and in other precisions (a sweep with several precisions does) "
                           "to overlay their loss curves here; tick \"gradient norms\" in "
                           "Configure to compare each layer's gradient norm as well.");
        return;
    }
    groupCombo("model and data", groups, m_group, 20.0f);
    ImGui::SameLine();
    ImGui::Checkbox("loss minus fp32's", &m_lossDelta);
    ImGui::SameLine();
    ImGui::Checkbox("gradient norms", &m_showGradNorms);
    const LossGroup& group = groups[m_group];
    const auto& runs = ctx.store.runs();
    const RunResult* fp32 = nullptr;
    for (int i : group.runs) {
        if (runs[i].result.config.precision == Precision::Fp32) {
            fp32 = &runs[i].result;
            break;
        }
    }
    Rows table{{"run", "precision", "steps", "last loss", "max |Δ loss| vs fp32", "skipped updates",
                "loss scale"}};
    for (int i : group.runs) {
        table.push_back(numericsRow(runs[i].result, fp32));
    }
    copyMarkdownButton("Copy as Markdown##numerics", table, 2);
    drawRowsTable("##numerics", table);
    if (!fp32) {
        ImGui::TextDisabled("No fp32 run of this model and data: run one for max |Δ loss|.");
    }
    const bool anyFp16 = std::any_of(group.runs.begin(), group.runs.end(), [&](int i) {
        return runs[i].result.config.precision == Precision::Fp16;
    });
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const int charts = 1 + (anyFp16 ? 1 : 0) + (m_showGradNorms ? 1 : 0);
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    const float h =
        std::max(ImGui::GetFontSize() * 12.0f,
                 (avail.y - spacing * static_cast<float>(charts - 1)) / static_cast<float>(charts));
    if (!ImGui::BeginChild("##numerics-charts", ImVec2(0, 0))) {
        ImGui::EndChild();
        return;
    }
    drawLossChart(ctx, ImVec2(-1, h));
    if (anyFp16) {
        drawLossScaleChart(ctx, ImVec2(-1, h));
    }
    if (m_showGradNorms) {
        drawGradNormChart(ctx, ImVec2(-1, h));
    }
    ImGui::EndChild();
}

// The runs of the chosen group with their legend names (what differs, or the precision).
PrecisionLabView::NamedRuns PrecisionLabView::groupRuns(ViewContext& ctx) const {
    const std::vector<LossGroup> groups = lossGroups(ctx.store);
    NamedRuns out;
    if (groups.empty()) {
        return out;
    }
    const LossGroup& g =
        groups[static_cast<size_t>(std::clamp(m_group, 0, static_cast<int>(groups.size()) - 1))];
    std::vector<const RunResult*> results;
    for (int i : g.runs) {
        results.push_back(&ctx.store.runs()[i].result);
    }
    const std::vector<std::string> names = distinguishingNames(results);
    for (size_t k = 0; k < g.runs.size(); ++k) {
        out.emplace_back(&ctx.store.runs()[g.runs[k]], names[k]);
    }
    return out;
}

// A run's colour in these charts: its precision's, so fp16 looks the same in every group.
ImPlotSpec PrecisionLabView::precisionSpec(const RunView& run) {
    const auto it = std::find(kPrecisions.begin(), kPrecisions.end(), run.result.config.precision);
    return plot::colorSpec(runColor(static_cast<int>(it - kPrecisions.begin())));
}

void PrecisionLabView::drawStepChart(
    ViewContext& ctx, const NamedRuns& runs, const char* title, const char* yLabel,
    const char* stem, ImVec2 size, plot::FollowAxis& ax, plot::FollowAxis& ay, bool logY,
    const std::function<std::optional<double>(const StepRecord&)>& value,
    const std::function<bool(const StepRecord&)>& mark) {
    if (!plot::beginPlot(title, size)) {
        return;
    }
    ImPlot::SetupAxes("step", yLabel);
    if (logY) {
        ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
    }
    std::vector<RunView*> views;
    plot::Range ys;
    for (const auto& [run, name] : runs) {
        views.push_back(run);
        for (const auto& s : run->result.steps) {
            if (const auto v = value(s); v && (!logY || *v > 0)) {
                ys.add(*v);
            }
        }
    }
    plot::watchInput({&ax, &ay});
    ax.setup(ImAxis_X1, plot::stepRange(views), 0.02);
    plot::stepTicks(ImAxis_X1);
    const plot::Range yFit = logY && !ys.empty() ? plot::Range{ys.lo / 1.5, ys.hi * 1.5} : ys;
    ay.setup(ImAxis_Y1, yFit, logY ? 0.0 : 0.05);
    if (logY) {
        // 1, 2, 5 × 10^k (ImPlot's own log ticks leave less than a decade unlabelled).
        m_ticks = plot::logTicks(ay.following() ? yFit : plot::shownRange(ImAxis_Y1));
        if (!m_ticks.empty()) {
            ImPlot::SetupAxisTicks(ImAxis_Y1, m_ticks.data(), static_cast<int>(m_ticks.size()));
        }
    }
    bool any = false;
    for (const auto& [run, name] : runs) {
        m_xs.clear();
        m_ys.clear();
        for (const auto& s : run->result.steps) {
            if (const auto v = value(s); v && std::isfinite(*v) && (!logY || *v > 0)) {
                m_xs.push_back(s.index);
                m_ys.push_back(*v);
            }
        }
        if (m_xs.empty()) {
            continue; // not in the legend either (fp32 has no loss scale)
        }
        any = true;
        const std::string label = name + "##" + run->result.id;
        ImPlotSpec spec = precisionSpec(*run);
        if (m_xs.size() == 1) {
            spec.Marker = ImPlotMarker_Circle;
        }
        ImPlot::PlotLine(label.c_str(), m_xs.data(), m_ys.data(), static_cast<int>(m_xs.size()),
                         spec);
        if (!mark) {
            continue;
        }
        m_xs.clear();
        m_ys.clear();
        for (const auto& s : run->result.steps) {
            if (const auto v = value(s); v && mark(s) && std::isfinite(*v) && *v > 0) {
                m_xs.push_back(s.index);
                m_ys.push_back(*v);
            }
        }
        if (!m_xs.empty()) {
            ImPlotSpec marks = plot::colorSpec(palette().error);
            marks.Marker = ImPlotMarker_Cross;
            marks.MarkerSize = 6.0f;
            const std::string markLabel = "skipped update##" + run->result.id;
            ImPlot::PlotScatter(markLabel.c_str(), m_xs.data(), m_ys.data(),
                                static_cast<int>(m_xs.size()), marks);
        }
    }
    if (!any) {
        plot::hint(std::string("no run of this group recorded ").append(yLabel).c_str());
    }
    plot::endPlot(ctx, stem);
}

void PrecisionLabView::drawLossChart(ViewContext& ctx, ImVec2 size) {
    // The curves of a healthy run lie on top of each other: the difference to fp32's loss
    // at the same step shows what precision changed.
    const NamedRuns runs = groupRuns(ctx);
    std::map<int, double> reference;
    if (m_lossDelta) {
        for (const auto& [run, name] : runs) {
            if (run->result.config.precision == Precision::Fp32) {
                for (const auto& s : run->result.steps) {
                    if (s.loss) {
                        reference[s.index] = *s.loss;
                    }
                }
                break;
            }
        }
    }
    if (reference.empty()) {
        drawStepChart(ctx, runs, "loss per step", "loss", "loss", size, m_lossX, m_lossY, false,
                      [](const StepRecord& s) { return s.loss; });
        return;
    }
    drawStepChart(ctx, runs, "loss minus fp32's loss at the same step", "loss - fp32 loss", "loss",
                  size, m_lossX, m_lossY, false,
                  [&reference](const StepRecord& s) -> std::optional<double> {
                      const auto it = reference.find(s.index);
                      if (!s.loss || it == reference.end()) {
                          return std::nullopt;
                      }
                      return *s.loss - it->second;
                  });
}

void PrecisionLabView::drawLossScaleChart(ViewContext& ctx, ImVec2 size) {
    drawStepChart(
        ctx, groupRuns(ctx), "fp16 loss scale (skipped updates marked)", "loss scale", "loss-scale",
        size, m_scaleX, m_scaleY, true, [](const StepRecord& s) { return s.lossScale; },
        [](const StepRecord& s) { return s.skippedUpdate; });
}

void PrecisionLabView::drawGradNormChart(ViewContext& ctx, ImVec2 size) {
    const auto runs = groupRuns(ctx);
    std::vector<std::string> names;
    for (const auto& [run, name] : runs) {
        if (!run->result.steps.empty() && !run->result.steps.front().gradNorms.empty()) {
            names = gradNormNames(run->result.config.model);
            break;
        }
    }
    if (names.empty()) {
        ImGui::TextDisabled("No run of this group recorded gradient norms: tick \"gradient "
                            "norms\" in Configure (lmprof-cli --grad-norms) and run again.");
        return;
    }
    m_layer = std::clamp(m_layer, 0, static_cast<int>(names.size()) - 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10.0f);
    if (!plot::exporting() && ImGui::BeginCombo("layer", names[m_layer].c_str())) {
        for (int i = 0; i < static_cast<int>(names.size()); ++i) {
            if (ImGui::Selectable(names[i].c_str(), i == m_layer)) {
                m_layer = i;
            }
        }
        ImGui::EndCombo();
    }
    const size_t layer = static_cast<size_t>(m_layer);
    const std::string title = "gradient norm of " + names[static_cast<size_t>(m_layer)];
    drawStepChart(ctx, runs, title.c_str(), "gradient L2 norm", "grad-norms", size, m_normX,
                  m_normY, true, [layer](const StepRecord& s) -> std::optional<double> {
                      if (layer < s.gradNorms.size()) {
                          return s.gradNorms[layer];
                      }
                      return std::nullopt;
                  });
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry precisionLabWindow() {
    return windowOf<PrecisionLabView>(
        DockSlot::Bottom,
        {chart<PrecisionLabView>(
             engine::chart::kAccumulation,
             "Precision lab: relative error of a sum against its number of terms",
             &PrecisionLabView::drawAccumulationChart),
         chart<PrecisionLabView>(engine::chart::kLoss,
                                 "Precision lab: loss per step of runs that differ in precision",
                                 &PrecisionLabView::drawLossChart),
         chart<PrecisionLabView>(engine::chart::kLossScale,
                                 "Precision lab: fp16 loss scale per step, skipped updates marked",
                                 &PrecisionLabView::drawLossScaleChart),
         chart<PrecisionLabView>(engine::chart::kGradNorms,
                                 "Precision lab: a layer's gradient norm per step",
                                 &PrecisionLabView::drawGradNormChart)});
}

} // namespace lmprof::ui
