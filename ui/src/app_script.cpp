// The scripted side of App: tracking the --autorun run, --export-plots and PNG requests
// (Save PNG, F12, --screenshot) taken after a frame is rendered, and --frame-stats.

#include "app_parts.h"
#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"
#include "views/plot_helpers.h"

#include <cstdio>
#include <ctime>
#include <imgui.h>
#include <nlohmann/json.hpp>
#include <string_view>

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

bool ChartExports::save(const Chart& chart, const PngRequest& request, ViewContext& ctx) {
    const auto runs = ctx.selectedRuns();
    const std::filesystem::path path = std::filesystem::absolute(
        !request.path.empty()
            ? std::filesystem::path(request.path)
            : std::filesystem::path(std::string(chart.name) + "-" + runsLabel(runs) + "-" +
                                    engine::localNowForFileName() + ".png"));
    try {
        if (!m_offscreen) {
            m_offscreen = std::make_unique<OffscreenCharts>(m_ws.darkTheme(), m_options.fontScale);
        }
        m_offscreen->render(path, static_cast<int>(request.width), static_cast<int>(request.height),
                            m_ws.darkTheme(), chart.title, chartRunsLine(runs),
                            [&] { chart.draw(ctx); });
        m_ws.report("chart saved to " + path.string(), false);
        return true;
    } catch (const std::exception& e) {
        m_ws.report(e.what(), true);
        std::fprintf(stderr, "lmprof: %s\n", e.what());
        return false;
    }
}

void Autorun::track(RunStore& store) {
    if (index < 0 || answered) {
        return;
    }
    if (const RunView* v = store.findBySessionIndex(index); v && v->finished) {
        answered = true;
        ok = v->result.status == RunStatus::Ok; // the status line says it (frame())
        if (!ok) { // and so does stderr, for a scripted launch that will exit 1 for it
            std::fprintf(stderr, "lmprof: the run %s ended %s%s%s\n", v->result.id.c_str(),
                         std::string(toString(v->result.status)).c_str(),
                         v->result.error ? ": " : "", v->result.error.value_or("").c_str());
        }
    }
}

PngRequest ChartExports::request(const std::string& stem, std::string path) const {
    // The size asked for; else the chart's size on screen; else a default for a chart never
    // drawn (its window behind another tab since launch).
    const auto drawn = plotRects.find(stem);
    PngRequest request;
    request.fileStem = stem;
    request.path = std::move(path);
    request.framesToWait = 1;
    request.width = m_options.exportWidth > 0  ? static_cast<float>(m_options.exportWidth)
                    : drawn != plotRects.end() ? drawn->second.width
                                               : 1200.0f;
    request.height = m_options.exportHeight > 0 ? static_cast<float>(m_options.exportHeight)
                     : drawn != plotRects.end() ? drawn->second.height
                                                : 700.0f;
    return request;
}

void ChartExports::queue(ViewContext& ctx, const WindowSet& windows) {
    queued = true;
    const auto runs = ctx.selectedRuns();
    for (const std::string& stem : m_options.exportPlots) {
        if (!windows.findChart(stem)) {
            std::fprintf(stderr, "lmprof: --export-plots: '%s' is not a chart (%s)\n", stem.c_str(),
                         windows.chartNames().c_str());
            ok = false;
            continue;
        }
        PngRequest asked =
            request(stem, (m_options.exportDir / (stem + "-" + runsLabel(runs) + ".png")).string());
        asked.origin = PngRequest::Origin::ExportPlots;
        requests.push_back(asked);
    }
}

void ChartExports::drawStudyCharts(const engine::ResultSet& set,
                                   const std::vector<engine::StudyChart>& charts,
                                   const std::filesystem::path& dir) {
    if (!m_studyOffscreen) {
        m_studyOffscreen = std::make_unique<OffscreenCharts>(false, 1.0f);
    }
    ui::drawStudyCharts(*m_studyOffscreen, set, charts, dir);
}

bool App::pngPending() const {
    return !m_parts->exports.requests.empty() ||
           (!m_parts->options.exportPlots.empty() && !m_parts->exports.queued);
}

bool App::animating() const {
    const Parts& s = *m_parts;
    return s.ws.session().busy() || s.windows.sweep.running() || !autorunSettled() ||
           pngPending() || s.demo.playing() || s.screenshot.requested ||
           s.windows.layoutSettling() ||
           s.frameNumber < static_cast<int>(s.options.showWindows.size()) + kSettleFrames;
}

namespace {

// Whether an engine on `where` ("host:port") shares this machine's cores.
bool loopback(std::string_view where) {
    const std::string_view host = where.substr(0, where.rfind(':'));
    return host == "localhost" || host == "[::1]" || host == "::1" || host.starts_with("127.");
}

} // namespace

bool App::cpuRunStreaming() const {
    Parts& s = *m_parts;
    const RunView* active = s.ws.store.active();
    if (!active || active->result.resolvedDevice != "cpu") {
        return false;
    }
    // A remote engine's CPU is another machine's: drawing takes nothing from its run. A
    // watched script, or a server on loopback, trains on the cores the window draws with.
    const engine::EngineInfo info = s.ws.session().info();
    return !info.remote || s.scriptEngine == &s.ws.session() || loopback(info.where);
}

bool App::exportsSucceeded() const {
    return m_parts->exports.ok;
}

bool App::quitRequested() const {
    return m_parts->fileMenu.quitRequested;
}

bool App::mayClose() {
    Parts& s = *m_parts;
    // The autorun settles when the script's run ends, or the script does.
    const bool scriptRunning = s.options.awaitWatchedRun && !autorunSettled();
    if (!scriptRunning || !s.options.interruptWatchedScript || s.scriptEngine != &s.ws.session()) {
        return true;
    }
    if (!s.scriptInterrupted) {
        s.scriptInterrupted = true;
        s.options.interruptWatchedScript();
        s.ws.report("closing: the watched script is sent a Ctrl+C; its run ends cancelled "
                    "with its steps, then the window closes",
                    false);
    }
    return false;
}

void App::afterRender(int fbWidth, int fbHeight) {
    Parts& s = *m_parts;
    auto& requests = s.exports.requests;
    const ImGuiIO& io = ImGui::GetIO();
    const float scaleX = io.DisplaySize.x > 0 ? fbWidth / io.DisplaySize.x : 1.0f;
    const float scaleY = io.DisplaySize.y > 0 ? fbHeight / io.DisplaySize.y : 1.0f;
    for (auto it = requests.begin(); it != requests.end();) {
        if (--it->framesToWait > 0) {
            ++it;
            continue;
        }
        if (const Chart* chart = s.windows.findChart(it->fileStem)) {
            // Asked from one part of a chart (a telemetry row): the whole chart's size.
            const auto whole = s.exports.plotRects.find(chart->name);
            if (it->fileStem != chart->name && whole != s.exports.plotRects.end()) {
                it->width = whole->second.width;
                it->height = whole->second.height;
            }
            ViewContext ctx = s.context();
            const bool ok = s.exports.save(*chart, *it, ctx);
            if (!ok && it->origin == PngRequest::Origin::ExportPlots) {
                s.exports.ok = false;
            } else if (!ok && it->origin == PngRequest::Origin::Demo) {
                s.exports.demoError = s.ws.status;
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
    if (std::exchange(s.screenshot.requested, false)) {
        const std::filesystem::path path = std::filesystem::absolute(
            !s.screenshot.path.empty()
                ? std::exchange(s.screenshot.path, {})
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
    const Parts& s = *m_parts;
    const Autorun& a = s.autorun;
    return !s.options.autorun || (a.answered && a.framesSinceAnswer >= kSettleFrames &&
                                  (s.windows.framesSinceLayoutMove() >= kSettleFrames ||
                                   a.framesSinceAnswer >= kLayoutPatienceFrames));
}

bool App::autorunSucceeded() const {
    return m_parts->autorun.ok;
}

bool App::autorunAsked() const {
    return m_parts->options.autorun;
}

void App::recordFrameTime(double uiMs, double ms) {
    size_t held = 0;
    RunStore& store = m_parts->ws.store;
    for (const auto& r : store.runs()) {
        held += r.result.steps.size();
    }
    FrameStats& stats = m_parts->frameStats;
    stats.frames.push_back({uiMs, ms, held, store.active() != nullptr, store.selection().size()});
    // The frame that drew them is on screen now.
    const int64_t now = engine::steadyNowNs();
    for (int64_t published : stats.stepsPublishedNs) {
        stats.stepLatencyMs.push_back(static_cast<double>(now - published) / 1e6);
    }
    stats.stepsPublishedNs.clear();
}

void App::writeFrameStats(const std::filesystem::path& path) const {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : m_parts->frameStats.frames) {
        frames.push_back({{"ui_ms", f.uiMs},
                          {"ms", f.ms},
                          {"steps_held", f.stepsHeld},
                          {"running", f.running},
                          {"selected", f.selected}});
    }
    writeFileAtomic(path, nlohmann::json{{"frames", frames},
                                         {"step_latency_ms", m_parts->frameStats.stepLatencyMs}}
                                  .dump() +
                              "\n");
}

} // namespace lmprof::ui
