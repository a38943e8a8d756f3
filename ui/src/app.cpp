// App: the frame loop's body. Drains engine events into the RunStore, lays out the docked
// views (a default layout on first launch, the user's own afterwards), and tracks the
// scripted-launch state (autorun, screenshot requests).

#include "lmprof/ui/app.h"

#include "autosave.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "settings.h"
#include "theme.h"
#include "views/views.h"

#include <ctime>
#include <filesystem>
#include <imgui.h>
#include <imgui_internal.h>
#include <implot.h>
#include <nlohmann/json.hpp>
#include <utility>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {
// Frames drawn after the autorun run finished before it counts as settled (the charts'
// auto-fit needs a frame or two to take the final data into account).
constexpr int kSettleFrames = 5;
} // namespace

struct App::Impl {
    explicit Impl(AppOptions o)
        : options(std::move(o)), form(options.initialConfig),
          settingsFile(options.configDir / "settings.json"),
          iniFile((options.configDir / "imgui.ini").string()),
          settings(Settings::load(settingsFile)), hadLayout(std::filesystem::exists(iniFile)),
          autosave(options.configDir) {}

    AppOptions options;
    Session session;
    RunStore store;
    ConfigForm form;
    std::filesystem::path settingsFile;
    std::string iniFile;
    Settings settings;
    bool hadLayout;
    bool layoutBuilt = false;
    std::string status;
    bool statusIsError = false;

    Autosave autosave;
    std::optional<Autosave::Previous> restoreOffer; // shown as a modal until answered
    std::vector<PngRequest> pngRequests;
    std::map<std::string, PngRequest> plotRects;
    bool exportsQueued = false;
    bool exportsOk = true;
    int frameNumber = 0;
    void queueExports();

    ConfigView configView;
    SweepView sweepView;
    SummaryTableView summaryTableView;
    HeatmapView heatmapView;
    PrecisionView precisionView;
    WarmupView warmupView;
    CompareView compareView;
    StepTimesView stepTimesView;
    HistogramView histogramView;
    MemoryView memoryView;
    TelemetryView telemetryView;
    ThroughputView throughputView;
    RunsTableView runsTableView;
    FilesView filesView;

    // Scripted launch: -1 no autorun; otherwise the session index of the autorun run.
    int autorunIndex = -1;
    bool autorunAnswered = false;
    bool autorunOk = false;
    int framesSinceAnswer = 0;
    bool screenshotRequested = false;

    struct FrameSample {
        double uiMs;
        double ms;
        size_t stepsHeld;
        bool running;
    };
    std::vector<FrameSample> frames;

    ViewContext context() {
        return ViewContext{session,   store,         form,         settings,
                           status,    statusIsError, &pngRequests, options.configDir / "snapshots",
                           &plotRects};
    }
    void buildDefaultLayout(ImGuiID dockspace);
    void restore(const Autosave::Previous& previous);
    void drawRestoreOffer();
    void autosaveFinished(const std::vector<SessionEvent>& events);
    void drawMenu();
    void trackAutorun();
};

App::App(AppOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {
    Impl& s = *m_impl;
    if (auto previous = s.autosave.takePrevious()) {
        if (s.options.restore == RestoreChoice::Restore) {
            s.restore(*previous);
        } else if (s.options.restore == RestoreChoice::Ask) {
            s.restoreOffer = std::move(previous);
        }
    }
    if (s.options.autorun) {
        if (auto refusal = checkRunnable(s.form.config())) {
            s.autorunAnswered = true;
            s.statusIsError = true;
            s.status = refusal->message();
        } else {
            s.autorunIndex = s.session.submit(s.form.config());
        }
    }
}

App::~App() {
    m_impl->settings.save(m_impl->settingsFile);
    if (!m_impl->options.saveOnExit.empty()) {
        ResultSet set = m_impl->store.toResultSet(
            probeEnvironment(resolveDevice(m_impl->form.config().device)));
        set.created = utcNow();
        set.tool = toolInfo();
        try {
            saveResultSetAtomic(set, m_impl->options.saveOnExit);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: --save-on-exit: %s\n", e.what());
        }
    }
    // io.IniFilename points into this object: save the layout now and let ImGui forget it.
    if (ImGui::GetCurrentContext() && ImGui::GetIO().IniFilename) {
        ImGui::SaveIniSettingsToDisk(m_impl->iniFile.c_str());
        ImGui::GetIO().IniFilename = nullptr;
    }
}

void App::setupStyle(float contentScale) {
    ImGuiIO& io = ImGui::GetIO();
    std::filesystem::create_directories(m_impl->options.configDir);
    io.IniFilename = m_impl->iniFile.c_str();
    io.ConfigFlags |= ImGuiConfigFlags_DockingEnable | ImGuiConfigFlags_NavEnableKeyboard;
    loadFonts(contentScale);
    applyTheme(m_impl->settings.darkTheme, contentScale);
}

void App::Impl::buildDefaultLayout(ImGuiID dockspace) {
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::DockBuilderRemoveNode(dockspace);
    ImGui::DockBuilderAddNode(dockspace, ImGuiDockNodeFlags_DockSpace);
    ImGui::DockBuilderSetNodeSize(dockspace, viewport->WorkSize);
    ImGuiID left = 0, main = 0, leftTop = 0, leftBottom = 0, charts = 0, bottom = 0;
    ImGui::DockBuilderSplitNode(dockspace, ImGuiDir_Left, 0.23f, &left, &main);
    ImGui::DockBuilderSplitNode(left, ImGuiDir_Down, 0.16f, &leftBottom, &leftTop);
    ImGui::DockBuilderSplitNode(main, ImGuiDir_Down, 0.27f, &bottom, &charts);
    ImGuiID chartsLeft = 0, chartsRight = 0, tl = 0, bl = 0, tr = 0, br = 0;
    ImGui::DockBuilderSplitNode(charts, ImGuiDir_Left, 0.5f, &chartsLeft, &chartsRight);
    ImGui::DockBuilderSplitNode(chartsLeft, ImGuiDir_Down, 0.5f, &bl, &tl);
    // The Memory view (timeline, breakdown, allocations) gets the taller right-hand place.
    ImGui::DockBuilderSplitNode(chartsRight, ImGuiDir_Down, 0.36f, &br, &tr);
    ImGui::DockBuilderDockWindow("Configure", leftTop);
    ImGui::DockBuilderDockWindow("Files", leftBottom);
    ImGui::DockBuilderDockWindow("Step times", tl);
    ImGui::DockBuilderDockWindow("Telemetry", bl); // under the step times, same time axis
    ImGui::DockBuilderDockWindow("Distribution", tr);
    ImGui::DockBuilderDockWindow("Memory", tr);
    ImGui::DockBuilderDockWindow("Throughput", br);
    ImGui::DockBuilderDockWindow("Runs", bottom);
    // The sweep and summary windows share those places as tabs.
    ImGui::DockBuilderDockWindow("Sweep", leftTop);
    ImGui::DockBuilderDockWindow("Heatmap", tr);
    ImGui::DockBuilderDockWindow("Warmup study", br);
    ImGui::DockBuilderDockWindow("Summary", bottom);
    ImGui::DockBuilderDockWindow("Precision", bottom);
    ImGui::DockBuilderDockWindow("Compare", bottom);
    ImGui::DockBuilderFinish(dockspace);
}

void App::Impl::drawMenu() {
    if (ImGui::IsKeyPressed(ImGuiKey_F12, false)) {
        screenshotRequested = true;
    }
    if (!ImGui::BeginMainMenuBar()) {
        return;
    }
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Save results", nullptr, false, !store.runs().empty())) {
            ViewContext ctx = context();
            filesView.save(ctx, settings.savePath);
        }
        if (ImGui::MenuItem("Screenshot", "F12")) {
            screenshotRequested = true;
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Dark theme", nullptr, settings.darkTheme)) {
            settings.darkTheme = true;
            applyTheme(true, ImGui::GetStyle().FontScaleDpi);
        }
        if (ImGui::MenuItem("Light theme", nullptr, !settings.darkTheme)) {
            settings.darkTheme = false;
            applyTheme(false, ImGui::GetStyle().FontScaleDpi);
        }
        ImGui::Separator();
        // Brings a window (or its tab) to the front.
        for (const char* window :
             {"Configure", "Sweep", "Files", "Step times", "Telemetry", "Memory", "Distribution",
              "Throughput", "Heatmap", "Warmup study", "Runs", "Summary", "Precision", "Compare"}) {
            if (ImGui::MenuItem(window)) {
                ImGui::SetWindowFocus(window);
            }
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Reset layout")) {
            layoutBuilt = false;
            hadLayout = false;
        }
        ImGui::EndMenu();
    }
    const RunView* active = store.active();
    const std::string state = active           ? "running " + active->result.id
                              : session.busy() ? std::string("starting")
                                               : std::string("idle");
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(state.c_str()).x -
                    ImGui::GetStyle().ItemSpacing.x * 2);
    ImGui::TextDisabled("%s", state.c_str());
    ImGui::EndMainMenuBar();
}

void App::Impl::trackAutorun() {
    if (autorunIndex < 0 || autorunAnswered) {
        return;
    }
    if (const RunView* v = store.findBySessionIndex(autorunIndex); v && v->finished) {
        autorunAnswered = true;
        autorunOk = v->result.status == RunStatus::Ok;
        status = v->result.id + ": " + std::string(toString(v->result.status)) +
                 (v->result.error ? " - " + *v->result.error : std::string());
        statusIsError = !autorunOk;
    }
}

void App::Impl::restore(const Autosave::Previous& previous) {
    store.addLoaded(previous.runs);
    // Into this session's autosave too, so they survive another crash or restart.
    for (const auto& run : previous.runs) {
        try {
            autosave.append(run);
        } catch (const std::exception& e) {
            status = std::string("autosave: ") + e.what();
            statusIsError = true;
            return;
        }
    }
    status = "restored " + std::to_string(previous.runs.size()) + " run(s) of the last session" +
             (previous.warnings.empty() ? std::string() : " (" + previous.warnings.front() + ")");
    statusIsError = false;
}

void App::Impl::drawRestoreOffer() {
    if (!restoreOffer) {
        return;
    }
    ImGui::OpenPopup("Restore last session?");
    const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (!ImGui::BeginPopupModal("Restore last session?", nullptr,
                                ImGuiWindowFlags_AlwaysAutoResize)) {
        return;
    }
    ImGui::Text("The last session autosaved %zu run(s)%s.", restoreOffer->runs.size(),
                restoreOffer->savedAt.empty() ? "" : (" at " + restoreOffer->savedAt).c_str());
    for (const auto& w : restoreOffer->warnings) {
        ImGui::TextDisabled("%s", w.c_str());
    }
    ImGui::TextDisabled("Discarded runs stay in %s until the next launch.",
                        autosave.previousPath().string().c_str());
    const std::string restoreLabel =
        "Restore " + std::to_string(restoreOffer->runs.size()) + " run(s)";
    if (ImGui::Button(restoreLabel.c_str())) {
        restore(*restoreOffer);
        restoreOffer.reset();
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard")) {
        restoreOffer.reset();
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

void App::Impl::autosaveFinished(const std::vector<SessionEvent>& events) {
    for (const auto& e : events) {
        const auto* fin = std::get_if<RunFinished>(&e);
        if (!fin || fin->result.status == RunStatus::Skipped) {
            continue;
        }
        try {
            autosave.append(fin->result);
        } catch (const std::exception& e) {
            status = std::string("autosave: ") + e.what();
            statusIsError = true;
        }
    }
}

void App::frame() {
    Impl& s = *m_impl;
    auto events = s.session.drain();
    s.autosaveFinished(events);
    s.sweepView.observe(events); // before the store moves the events' contents
    s.store.apply(events);
    s.trackAutorun();
    if (s.autorunAnswered) {
        ++s.framesSinceAnswer;
    }
    if (!s.exportsQueued && s.autorunAnswered && s.framesSinceAnswer >= kSettleFrames) {
        s.queueExports();
    }

    s.drawMenu();
    const ImGuiID dockspace = ImGui::DockSpaceOverViewport(0, ImGui::GetMainViewport());
    if (!s.layoutBuilt) {
        if (!s.hadLayout) {
            s.buildDefaultLayout(dockspace);
        }
        s.layoutBuilt = true;
    }
    ViewContext ctx = s.context();
    s.configView.draw(ctx);
    s.filesView.draw(ctx);
    s.stepTimesView.draw(ctx);
    s.memoryView.draw(ctx);
    s.telemetryView.draw(ctx);
    s.histogramView.draw(ctx);
    s.throughputView.draw(ctx);
    // On a first launch a dock node shows the first window drawn into it, and the last new
    // window takes the focus: the run views stay in front of the sweep and summary tabs.
    s.sweepView.draw(ctx);
    s.summaryTableView.draw(ctx);
    s.heatmapView.draw(ctx);
    s.precisionView.draw(ctx);
    s.warmupView.draw(ctx);
    s.compareView.draw(ctx);
    s.runsTableView.draw(ctx);
    // --show: one window per frame once the windows exist (focusing several docked windows
    // in one frame leaves only the last one's tab in front).
    const size_t showIndex = static_cast<size_t>(s.frameNumber++) - 2;
    if (s.frameNumber > 2 && showIndex < s.options.showWindows.size()) {
        ImGui::SetWindowFocus(s.options.showWindows[showIndex].c_str());
    }
    s.drawRestoreOffer();
}

void App::Impl::queueExports() {
    exportsQueued = true;
    for (const std::string& stem : options.exportPlots) {
        const auto it = plotRects.find(stem);
        if (it == plotRects.end()) {
            // Its window is hidden behind another tab, or no chart has that name.
            std::fprintf(stderr, "lmprof: --export-plots: no chart '%s' was drawn\n", stem.c_str());
            exportsOk = false;
            continue;
        }
        PngRequest request = it->second;
        request.framesToWait = 1;
        request.path = (options.exportDir / (stem + ".png")).string();
        pngRequests.push_back(request);
    }
}

bool App::pngPending() const {
    return !m_impl->pngRequests.empty() ||
           (!m_impl->options.exportPlots.empty() && !m_impl->exportsQueued);
}

bool App::exportsSucceeded() const {
    return m_impl->exportsOk;
}

namespace {
// lmprof-<stem>-<unix time>.png in the working directory.
std::filesystem::path timestampedPng(const std::string& stem) {
    return "lmprof-" + stem + "-" + std::to_string(std::time(nullptr)) + ".png";
}
} // namespace

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
        const int x = static_cast<int>(it->x * scaleX);
        const int w = static_cast<int>(it->width * scaleX);
        const int h = static_cast<int>(it->height * scaleY);
        const int y = fbHeight - static_cast<int>(it->y * scaleY) - h; // OpenGL counts from below
        const std::filesystem::path path = std::filesystem::absolute(
            !it->path.empty() ? std::filesystem::path(it->path) : timestampedPng(it->fileStem));
        try {
            writeFramebufferRegionPng(path, x, y, w, h);
            setStatus("plot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            m_impl->exportsOk = false;
            setStatus(e.what(), true);
        }
        it = requests.erase(it);
    }
    if (std::exchange(m_impl->screenshotRequested, false)) {
        const std::filesystem::path path = std::filesystem::absolute(timestampedPng("screenshot"));
        try {
            writeFramebufferPng(path, fbWidth, fbHeight);
            setStatus("screenshot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            setStatus(e.what(), true);
        }
    }
}

bool App::autorunSettled() const {
    return !m_impl->options.autorun ||
           (m_impl->autorunAnswered && m_impl->framesSinceAnswer >= kSettleFrames);
}

bool App::autorunSucceeded() const {
    return m_impl->autorunOk;
}

void App::setStatus(const std::string& message, bool isError) {
    m_impl->status = message;
    m_impl->statusIsError = isError;
}

bool App::darkTheme() const {
    return m_impl->settings.darkTheme;
}

void App::recordFrameTime(double uiMs, double ms) {
    size_t held = 0;
    for (const auto& r : m_impl->store.runs()) {
        held += r.result.steps.size();
    }
    m_impl->frames.push_back({uiMs, ms, held, m_impl->store.active() != nullptr});
}

void App::writeFrameStats(const std::filesystem::path& path) const {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : m_impl->frames) {
        frames.push_back(
            {{"ui_ms", f.uiMs}, {"ms", f.ms}, {"steps_held", f.stepsHeld}, {"running", f.running}});
    }
    writeFileAtomic(path, nlohmann::json{{"frames", frames}}.dump() + "\n");
}

} // namespace lmprof::ui
