// The scripted side of App: tracking the --autorun run, --export-plots and PNG requests
// (Save PNG, F12, --screenshot) taken after a frame is rendered, and --frame-stats.

#include "app_impl.h"
#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"
#include "views/plot_helpers.h"

#include <ctime>
#include <imgui.h>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

// The runs a chart shows, for file names: "tiny-ctx16-fp32-train", or the first run's
// label and how many more.
std::string runsLabel(const std::vector<RunView*>& runs) {
    if (runs.empty()) {
        return "no-run";
    }
    std::string label = engine::runFileLabel(runs.front()->result);
    if (runs.size() > 1) {
        label += "-and-" + std::to_string(runs.size() - 1) + "-more";
    }
    return label;
}

} // namespace

const Chart* App::Impl::findChart(const std::string& stem) const {
    // A telemetry chart's own "Save PNG" exports the linked charts together.
    const bool telemetryPart = stem == "telemetry-step-time" || stem == "telemetry-cpu" ||
                               stem == "telemetry-clocks" || stem == "telemetry-power";
    const std::string name = telemetryPart ? "telemetry" : stem;
    for (const Chart& c : charts) {
        if (name == c.name) {
            return &c;
        }
    }
    return nullptr;
}

std::string App::Impl::chartNames() const {
    std::string names;
    for (const Chart& c : charts) {
        names += (names.empty() ? "" : ", ") + std::string(c.name);
    }
    return names;
}

bool App::Impl::exportChart(const Chart& chart, const PngRequest& request) {
    ViewContext ctx = context();
    const auto runs = ctx.selectedRuns();
    const std::filesystem::path path = std::filesystem::absolute(
        !request.path.empty()
            ? std::filesystem::path(request.path)
            : std::filesystem::path(std::string(chart.name) + "-" + runsLabel(runs) + "-" +
                                    engine::localNowForFileName() + ".png"));
    try {
        if (!offscreen) {
            offscreen = std::make_unique<OffscreenCharts>(darkTheme(), options.fontScale);
        }
        const plot::ExportScope exporting; // axes show what the window shows
        offscreen->render(path, static_cast<int>(request.width), static_cast<int>(request.height),
                          darkTheme(), chart.title, chartRunsLine(runs), [&] { chart.draw(ctx); });
        status = "chart saved to " + path.string();
        statusIsError = false;
        return true;
    } catch (const std::exception& e) {
        status = e.what();
        statusIsError = true;
        std::fprintf(stderr, "lmprof: %s\n", e.what());
        return false;
    }
}

void App::Impl::trackAutorun() {
    if (autorunIndex < 0 || autorunAnswered) {
        return;
    }
    if (const RunView* v = store.findBySessionIndex(autorunIndex); v && v->finished) {
        autorunAnswered = true;
        autorunOk = v->result.status == RunStatus::Ok; // the status line says it (frame())
    }
}

PngRequest App::Impl::exportRequest(const std::string& stem, std::string path) const {
    // The size asked for; else the chart's size on screen; else a default for a chart never
    // drawn (its window behind another tab since launch).
    const auto drawn = plotRects.find(stem);
    PngRequest request;
    request.fileStem = stem;
    request.path = std::move(path);
    request.framesToWait = 1;
    request.width = options.exportWidth > 0    ? static_cast<float>(options.exportWidth)
                    : drawn != plotRects.end() ? drawn->second.width
                                               : 1200.0f;
    request.height = options.exportHeight > 0   ? static_cast<float>(options.exportHeight)
                     : drawn != plotRects.end() ? drawn->second.height
                                                : 700.0f;
    return request;
}

void App::Impl::queueExports() {
    exportsQueued = true;
    ViewContext ctx = context();
    const auto runs = ctx.selectedRuns();
    for (const std::string& stem : options.exportPlots) {
        if (!findChart(stem)) {
            std::fprintf(stderr, "lmprof: --export-plots: '%s' is not a chart (%s)\n", stem.c_str(),
                         chartNames().c_str());
            exportsOk = false;
            continue;
        }
        PngRequest request = exportRequest(
            stem, (options.exportDir / (stem + "-" + runsLabel(runs) + ".png")).string());
        request.origin = PngRequest::Origin::ExportPlots;
        pngRequests.push_back(request);
    }
}

bool App::pngPending() const {
    return !m_impl->pngRequests.empty() ||
           (!m_impl->options.exportPlots.empty() && !m_impl->exportsQueued);
}

bool App::animating() const {
    const Impl& s = *m_impl;
    return s.session().busy() || s.sweepView.running() || !autorunSettled() || pngPending() ||
           s.demoPlaying() || s.screenshotRequested ||
           s.frameNumber < static_cast<int>(s.options.showWindows.size()) + kSettleFrames;
}

bool App::cpuRunStreaming() const {
    const RunView* active = m_impl->store.active();
    // A remote engine's CPU is another machine's: drawing takes nothing from its run.
    return active && active->result.resolvedDevice == "cpu" && !m_impl->session().info().remote;
}

bool App::exportsSucceeded() const {
    return m_impl->exportsOk;
}

bool App::quitRequested() const {
    return m_impl->quitRequested;
}

void App::afterRender(int fbWidth, int fbHeight) {
    auto& requests = m_impl->pngRequests;
    const ImGuiIO& io = ImGui::GetIO();
    const float scaleX = io.DisplaySize.x > 0 ? fbWidth / io.DisplaySize.x : 1.0f;
    const float scaleY = io.DisplaySize.y > 0 ? fbHeight / io.DisplaySize.y : 1.0f;
    for (auto it = requests.begin(); it != requests.end();) {
        if (--it->framesToWait > 0) {
            ++it;
            continue;
        }
        if (const Chart* chart = m_impl->findChart(it->fileStem)) {
            // Asked from one part of a chart (a telemetry row): the whole chart's size.
            const auto whole = m_impl->plotRects.find(chart->name);
            if (it->fileStem != chart->name && whole != m_impl->plotRects.end()) {
                it->width = whole->second.width;
                it->height = whole->second.height;
            }
            const bool ok = m_impl->exportChart(*chart, *it);
            if (!ok && it->origin == PngRequest::Origin::ExportPlots) {
                m_impl->exportsOk = false;
            } else if (!ok && it->origin == PngRequest::Origin::Demo) {
                m_impl->demoExportError = m_impl->status;
            }
            it = requests.erase(it);
            continue;
        }
        // The Ops view's charts are not drawn for files: their "Save PNG" (asked from the
        // chart itself, so it is on screen) saves the chart's rectangle of the window.
        const int x = static_cast<int>(it->x * scaleX);
        const int w = static_cast<int>(it->width * scaleX);
        const int h = static_cast<int>(it->height * scaleY);
        const int y = fbHeight - static_cast<int>(it->y * scaleY) - h; // OpenGL counts from below
        const std::filesystem::path path = std::filesystem::absolute(
            !it->path.empty() ? std::filesystem::path(it->path)
                              : std::filesystem::path("lmprof-" + it->fileStem + "-" +
                                                      engine::localNowForFileName() + ".png"));
        try {
            writeFramebufferRegionPng(path, x, y, w, h);
            setStatus("plot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            setStatus(e.what(), true); // a person's Save PNG of an Ops chart
        }
        it = requests.erase(it);
    }
    if (std::exchange(m_impl->screenshotRequested, false)) {
        const std::filesystem::path path = std::filesystem::absolute(
            !m_impl->screenshotPath.empty()
                ? std::exchange(m_impl->screenshotPath, {})
                : std::filesystem::path("lmprof-screenshot-" + engine::localNowForFileName() +
                                        ".png"));
        try {
            writeFramebufferPng(path, fbWidth, fbHeight);
            setStatus("screenshot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            setStatus(e.what(), true);
        }
    }
}

bool App::autorunSettled() const {
    // Settled once its last frames drew the same layout (a view grown for the finished run
    // has given its neighbours back what their plots need), or, should the layout never
    // come to rest, after kLayoutPatienceFrames.
    const Impl& s = *m_impl;
    return !s.options.autorun || (s.autorunAnswered && s.framesSinceAnswer >= kSettleFrames &&
                                  (s.framesSinceLayoutMove >= kSettleFrames ||
                                   s.framesSinceAnswer >= kLayoutPatienceFrames));
}

bool App::autorunSucceeded() const {
    return m_impl->autorunOk;
}

void App::recordFrameTime(double uiMs, double ms) {
    size_t held = 0;
    for (const auto& r : m_impl->store.runs()) {
        held += r.result.steps.size();
    }
    m_impl->frames.push_back(
        {uiMs, ms, held, m_impl->store.active() != nullptr, m_impl->store.selection().size()});
    // The frame that drew them is on screen now.
    const int64_t now = engine::steadyNowNs();
    for (int64_t published : m_impl->stepsPublishedNs) {
        m_impl->stepLatencyMs.push_back(static_cast<double>(now - published) / 1e6);
    }
    m_impl->stepsPublishedNs.clear();
}

void App::writeFrameStats(const std::filesystem::path& path) const {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : m_impl->frames) {
        frames.push_back({{"ui_ms", f.uiMs},
                          {"ms", f.ms},
                          {"steps_held", f.stepsHeld},
                          {"running", f.running},
                          {"selected", f.selected}});
    }
    writeFileAtomic(
        path,
        nlohmann::json{{"frames", frames}, {"step_latency_ms", m_impl->stepLatencyMs}}.dump() +
            "\n");
}

} // namespace lmprof::ui
