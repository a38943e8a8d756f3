// App: the frame loop's body. Drains engine events into the RunStore, lays out the docked
// views (a default layout on first launch, the user's own afterwards), and tracks the
// scripted-launch state (autorun, screenshot requests).

#include "lmprof/ui/app.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/runner.h"
#include "lmprof/engine/session.h"
#include "settings.h"
#include "theme.h"
#include "views/views.h"

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
          settings(Settings::load(settingsFile)), hadLayout(std::filesystem::exists(iniFile)) {}

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

    ConfigView configView;
    StepTimesView stepTimesView;
    HistogramView histogramView;
    MemoryView memoryView;
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
        return ViewContext{session, store, form, settings, status, statusIsError};
    }
    void buildDefaultLayout(ImGuiID dockspace);
    void drawMenu();
    void trackAutorun();
};

App::App(AppOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {
    Impl& s = *m_impl;
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
    ImGui::DockBuilderSplitNode(chartsRight, ImGuiDir_Down, 0.5f, &br, &tr);
    ImGui::DockBuilderDockWindow("Configure", leftTop);
    ImGui::DockBuilderDockWindow("Files", leftBottom);
    ImGui::DockBuilderDockWindow("Step times", tl);
    ImGui::DockBuilderDockWindow("Memory", bl);
    ImGui::DockBuilderDockWindow("Distribution", tr);
    ImGui::DockBuilderDockWindow("Throughput", br);
    ImGui::DockBuilderDockWindow("Runs", bottom);
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

void App::frame() {
    Impl& s = *m_impl;
    auto events = s.session.drain();
    s.store.apply(events);
    s.trackAutorun();
    if (s.autorunAnswered) {
        ++s.framesSinceAnswer;
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
    s.histogramView.draw(ctx);
    s.throughputView.draw(ctx);
    s.runsTableView.draw(ctx);
}

bool App::autorunSettled() const {
    return !m_impl->options.autorun ||
           (m_impl->autorunAnswered && m_impl->framesSinceAnswer >= kSettleFrames);
}

bool App::autorunSucceeded() const {
    return m_impl->autorunOk;
}

bool App::takeScreenshotRequest() {
    return std::exchange(m_impl->screenshotRequested, false);
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

std::string App::writeFrameStats(const std::filesystem::path& path) const {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : m_impl->frames) {
        frames.push_back(
            {{"ui_ms", f.uiMs}, {"ms", f.ms}, {"steps_held", f.stepsHeld}, {"running", f.running}});
    }
    try {
        writeFileAtomic(path, nlohmann::json{{"frames", frames}}.dump() + "\n");
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

} // namespace lmprof::ui
