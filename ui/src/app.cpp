// App: the frame loop's body. Drains engine events into the RunStore, lets the views see
// them, draws the windows of the registry (window_set.h) and the menu. Each part of the
// window is its own (app_parts.h); this file puts them together.

#include "app_parts.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "theme.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <imgui.h>
#include <implot.h>
#include <utility>

namespace lmprof::ui {

using namespace lmprof::engine;

std::vector<SessionEvent> Workspace::drain() {
    auto events = std::exchange(retiredEvents, {});
    for (auto& e : session().drain()) {
        events.push_back(std::move(e));
    }
    return events;
}

void Workspace::saveSettingsWhenChanged() {
    settings.configure = configToJsonLine(form.config()); // the form as last left
    if (!(settings == savedSettings)) {
        settings.save(settingsFile);
        savedSettings = settings;
    }
}

App::Parts::Parts(AppOptions o)
    : options(std::move(o)), ws(options.engine ? std::exchange(options.engine, nullptr)
                                               : std::make_shared<engine::LocalSession>(),
                                options.initialConfig, options.configDir / "settings.json"),
      windows((options.configDir / "imgui.ini").string(), options.freshLayout, reading),
      restore(options.configDir, ws, windows.files) {
    ws.session().setWaker(options.wake);
    if (options.awaitWatchedRun) {
        scriptEngine = &ws.session();
    }
}

ViewContext App::Parts::context() {
    ViewContext ctx{ws.session(),
                    ws.store,
                    ws.form,
                    ws.settings,
                    ws.status,
                    ws.statusIsError,
                    &exports.requests,
                    options.configDir / "snapshots",
                    &exports.plotRects,
                    options.configDir / "traces"};
    ctx.experimentRunning = windows.precisionLab.busy();
    ctx.verdictMark = ws.verdictMark ? &*ws.verdictMark : nullptr;
    ctx.studyDir = options.configDir / "studies";
    if (scriptEngine == &ws.session() && options.interruptWatchedScript) {
        ctx.interruptScript = options.interruptWatchedScript;
    }
    ctx.drawStudyCharts =
        [this](const engine::ResultSet& set, const std::vector<engine::StudyChart>& charts,
               const std::filesystem::path& dir) { exports.drawStudyCharts(set, charts, dir); };
    return ctx;
}

App::App(AppOptions options) : m_parts(std::make_unique<Parts>(std::move(options))) {
    Parts& s = *m_parts;
    s.ws.themeOverride = s.options.darkTheme;
    s.restore.answerAtLaunch(s.options.restore);
    std::string formProblem;
    if (s.options.resumeConfigure && !s.ws.settings.configure.empty()) {
        try {
            s.ws.form = ConfigForm(parseConfig(s.ws.settings.configure));
        } catch (const std::exception& e) {
            formProblem = s.ws.settingsFile.string() + ": configure: " + e.what() +
                          "; Configure starts from the defaults";
        }
    }
    // A damaged settings.json or an autosave that could not be handed over: said, not hidden.
    for (const std::string& problem : {s.ws.settings.loadProblem, formProblem,
                                       s.windows.layoutProblem(), s.restore.autosave.problem()}) {
        if (!problem.empty()) {
            s.ws.report(problem, true);
            std::fprintf(stderr, "lmprof: %s\n", problem.c_str());
        }
    }
    // --show names windows of the registry; an unknown name is reported, not ignored.
    for (const std::string& name : s.options.showWindows) {
        if (!s.windows.isWindow(name)) {
            s.ws.report("--show: '" + name + "' is not a window (" + s.windows.windowTitles() + ")",
                        true);
            std::fprintf(stderr, "lmprof: %s\n", s.ws.status.c_str());
        }
    }
    s.openAtLaunch();
    s.demo.checkTargets();
    if (s.options.autorun && s.options.awaitWatchedRun) {
        s.autorun.index = 0; // the script's run: the first this client numbers
        s.ws.report("waiting for the watched script's first step", false);
    } else if (s.options.autorun) {
        ViewContext ctx = s.context();
        s.autorun.index = submitRun(ctx, s.ws.form.config(), /*keepGivenFiles=*/true);
        s.autorun.answered = s.autorun.index < 0; // refused: the status line says why
        if (s.autorun.answered) { // and so does stderr, for a launch that exits 1 for it
            std::fprintf(stderr, "lmprof: --autorun: not started: %s\n", s.ws.status.c_str());
        }
    }
}

bool App::saveOnExit() {
    const Parts& s = *m_parts;
    if (s.options.saveOnExit.empty()) {
        return true;
    }
    ResultSet set = s.ws.store.toResultSet(s.ws.session().environment(s.ws.form.config().device));
    set.created = utcNow();
    set.tool = toolInfo();
    try {
        saveResultSetAtomic(set, s.options.saveOnExit);
        return true;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lmprof: --save-on-exit: %s\n", e.what());
        return false;
    }
}

std::optional<std::pair<int, int>> App::savedWindowSize(const std::filesystem::path& configDir) {
    const auto [width, height] = Settings::peekWindowSize(configDir / "settings.json");
    if (width > 0 && height > 0) {
        return std::pair{width, height};
    }
    return std::nullopt;
}

void App::setWindowSize(int width, int height) {
    if (!m_parts->options.freshLayout && width >= kMinWindowSide && height >= kMinWindowSide &&
        width <= kMaxWindowSide && height <= kMaxWindowSide) {
        m_parts->ws.settings.windowWidth = width;
        m_parts->ws.settings.windowHeight = height;
    }
}

App::~App() {
    m_parts->ws.settings.save(m_parts->ws.settingsFile);
    // io.IniFilename points into this object: save the layout now and let ImGui forget it.
    if (ImGui::GetCurrentContext() && ImGui::GetIO().IniFilename) {
        ImGui::SaveIniSettingsToDisk(m_parts->windows.iniFile().c_str());
        ImGui::GetIO().IniFilename = nullptr;
    }
}

void App::setupStyle(float contentScale) {
    ImGuiIO& io = ImGui::GetIO();
    std::filesystem::create_directories(m_parts->options.configDir);
    // A fresh layout (--window-size, demos) neither reads nor replaces the saved one.
    io.IniFilename = m_parts->options.freshLayout ? nullptr : m_parts->windows.iniFile().c_str();
    io.ConfigFlags |= ImGuiConfigFlags_DockingEnable | ImGuiConfigFlags_NavEnableKeyboard;
    loadFonts(contentScale);
    ImGui::GetStyle().FontScaleMain = m_parts->options.fontScale;
    applyTheme(m_parts->ws.darkTheme(), contentScale);
}

void App::Parts::drawRecentReport(float end) {
    const auto now = std::chrono::steady_clock::now();
    recentReport.shown.clear();
    if (ws.status != recentReport.text) { // a new message, by whatever path it came
        recentReport = {ws.status, now, {}};
    }
    if (ws.status.empty() || now - recentReport.at > recentReport.kShown) {
        return;
    }
    const float pad = ImGui::GetFontSize();
    const float start = ImGui::GetCursorPosX() + pad;
    if (end - start < 8.0f * pad) {
        return; // no room beside the menus and the indicator
    }
    ImGui::SameLine(0, pad);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const ImVec2 clipMax(at.x + end - start - pad, at.y + ImGui::GetFrameHeight());
    ImGui::PushClipRect(at, clipMax, true);
    ImGui::TextColored(ws.statusIsError ? palette().error : palette().ok, "%s", ws.status.c_str());
    ImGui::PopClipRect();
    recentReport.shown = ws.status;
}

std::optional<std::chrono::steady_clock::time_point> App::nextQuietChange() const {
    const auto& report = m_parts->recentReport;
    const auto ends = report.at + report.kShown;
    if (report.text.empty() || std::chrono::steady_clock::now() > ends) {
        return std::nullopt;
    }
    return ends + std::chrono::milliseconds(50); // drawn just after, when it is gone
}

void App::Parts::drawMenu() {
    fileMenu.handleShortcuts();
    fileMenu.drawDialogs();
    if (!ImGui::BeginMainMenuBar()) {
        return;
    }
    if (ImGui::BeginMenu("File")) {
        fileMenu.drawMenu();
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Dark theme", nullptr, ws.darkTheme())) {
            ws.settings.darkTheme = true;
            ws.themeOverride.reset();
            applyTheme(true, ImGui::GetStyle().FontScaleDpi);
        }
        if (ImGui::MenuItem("Light theme", nullptr, !ws.darkTheme())) {
            ws.settings.darkTheme = false;
            ws.themeOverride.reset();
            applyTheme(false, ImGui::GetStyle().FontScaleDpi);
        }
        ImGui::Separator();
        // Brings a window (or its tab) to the front.
        for (const Window& w : windows.windows()) {
            if (ImGui::MenuItem(w.title)) {
                ImGui::SetWindowFocus(w.title);
            }
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Lock the layout", nullptr, ws.settings.lockLayout)) {
            ws.settings.lockLayout = !ws.settings.lockLayout;
        }
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Locked, tabs stay in their places (splitters still move); "
                              "unlock to drag a tab out or dock it elsewhere.");
        }
        if (ImGui::MenuItem("Reset layout")) {
            windows.resetLayout();
        }
        ImGui::EndMenu();
    }
    const RunView* active = ws.store.active();
    const std::string state = active                ? "running " + active->result.id
                              : ws.session().busy() ? std::string("starting")
                                                    : std::string("idle");
    ImGui::SameLine(0, ImGui::GetFontSize() * 2);
    engines.drawIndicator(autorun.answered);
    const float stateX = std::max(ImGui::GetCursorPosX() + ImGui::GetFontSize(),
                                  ImGui::GetWindowWidth() - ImGui::CalcTextSize(state.c_str()).x -
                                      ImGui::GetStyle().ItemSpacing.x * 2);
    drawRecentReport(stateX);
    ImGui::SameLine(stateX);
    ImGui::TextDisabled("%s", state.c_str());
    ImGui::EndMainMenuBar();
    engines.drawDialog();
}

// The status line follows the work: "started ..." gives way to how each run ended, and a
// sweep's to "sweep finished" once its last run is in.
void App::Parts::reportFinished(const std::vector<SessionEvent>& events) {
    for (const auto& e : events) {
        const auto* fin = std::get_if<RunFinished>(&e);
        if (!fin || fin->result.status == RunStatus::Skipped) {
            continue;
        }
        const RunResult& r = fin->result;
        const PhaseStats& t = r.summary.totalMs;
        ws.status =
            std::string(windows.sweep.running() ? "sweep: " : "") + "finished " + r.id + ": " +
            statusText(r) + (r.error ? " - " + clipText(*r.error, 300) : std::string()) +
            (r.status == RunStatus::Ok ? ", " + std::to_string(t.n) + " measured step(s), " +
                                             formatFixed(t.mean, 2) + " ms per step"
                                       : std::string());
        ws.statusIsError = r.status == RunStatus::Oom || r.status == RunStatus::Error;
    }
    if (sweepWasRunning && !windows.sweep.running()) {
        ws.status = "sweep finished; " + ws.status;
    }
    sweepWasRunning = windows.sweep.running();
}

void App::Parts::noticeScriptEnd() {
    if (!options.awaitWatchedRun || !options.watchedScriptEnded || autorun.answered) {
        return;
    }
    const std::optional<std::string> ended = options.watchedScriptEnded();
    if (!ended || ws.session().info().connected) {
        autorun.framesSinceScriptEnded = 0;
        return;
    }
    // One more frame drains what its server sent before it closed (a run_finished).
    if (++autorun.framesSinceScriptEnded < 2) {
        return;
    }
    autorun.answered = true;
    autorun.ok = false;
    keepCutShortRun(*ended);
    ws.report("the watched script " + *ended +
                  " before lmprof saw its run end (its messages are in the terminal)",
              true);
    std::fprintf(stderr, "lmprof: %s\n", ws.status.c_str());
}

void App::Parts::keepCutShortRun(const std::string& ended) {
    RunView* live = ws.store.active();
    if (!live || live->result.steps.empty() || !live->result.source) {
        return;
    }
    engine::RunFinished fin{live->runIndex, live->result};
    engine::RunResult& r = fin.result;
    r.status = scriptInterrupted ? engine::RunStatus::Cancelled : engine::RunStatus::Error;
    r.error = "the watched script " + ended + " before its run's end reached lmprof; the " +
              std::to_string(r.steps.size()) + " steps it showed are kept";
    r.summary = engine::summarize(r.config, r.steps, std::nullopt);
    std::vector<engine::SessionEvent> events{std::move(fin)};
    ViewContext ctx = context();
    windows.observe(ctx, events);
    restore.saveFinished(events);
    ws.store.apply(events);
}

void App::frame() {
    Parts& s = *m_parts;
    s.ws.saveSettingsWhenChanged();
    auto events = s.ws.drain();
    s.ws.store.claimIds(events); // before anything keeps an id
    for (const auto& e : events) {
        if (const auto* step = std::get_if<engine::StepFinished>(&e);
            step && step->publishedNs > 0) {
            s.frameStats.stepsPublishedNs.push_back(step->publishedNs);
        }
    }
    {
        ViewContext ctx = s.context();
        s.windows.observe(ctx, events); // before the store moves the events' contents
    }
    s.reportFinished(events);
    s.restore.saveFinished(events); // an autosave error is the last word of the frame
    s.ws.store.apply(events);
    s.autorun.track(s.ws.store);
    s.noticeScriptEnd();
    if (s.frameNumber > 2) { // the windows and the layout exist (a demo may focus them)
        s.demo.play();
    }
    s.ws.store.refreshSelection();
    if (s.autorun.answered) {
        ++s.autorun.framesSinceAnswer;
    }
    // --export-plots once the autorun run has drawn for a few frames, or (without an autorun,
    // say with --open) once the first frames have drawn.
    if (!s.exports.queued && autorunSettled() && s.frameNumber > kSettleFrames) {
        ViewContext ctx = s.context();
        s.exports.queue(ctx, s.windows);
    }

    s.drawMenu();
    s.windows.verdicts.draw(s.ws.store, s.ws.verdictMark,
                            [&s](const std::string& window) { s.windows.show(window); });
    // Locked (the default), a tab cannot be dragged out of its place by accident.
    const ImGuiID dockspace = ImGui::DockSpaceOverViewport(
        0, ImGui::GetMainViewport(),
        s.ws.settings.lockLayout ? ImGuiDockNodeFlags_NoUndocking : ImGuiDockNodeFlags_None);
    ViewContext ctx = s.context();
    s.windows.draw(dockspace, ctx, s.ws);
    // --show: one window per frame once the windows exist (focusing several docked windows
    // in one frame leaves only the last one's tab in front).
    const size_t showIndex = static_cast<size_t>(s.frameNumber++) - 2;
    if (s.frameNumber > 2 && showIndex < s.options.showWindows.size()) {
        s.windows.show(s.options.showWindows[showIndex]);
    }
    s.windows.keepPlotsReadable(dockspace, s.frameNumber > kSettleFrames);
    s.restore.drawOffer();
    s.demo.drawCaption();
}

void App::setStatus(const std::string& message, bool isError) {
    m_parts->ws.report(message, isError);
}

bool App::darkTheme() const {
    return m_parts->ws.darkTheme();
}

void App::setClock(double seconds) {
    m_parts->demo.clockS = seconds;
}

bool App::demoFinished() const {
    return !m_parts->demo.playing();
}

bool App::demoSucceeded() const {
    return !m_parts->demo.failed();
}

void App::writeLayoutReport(const std::filesystem::path& path) const {
    m_parts->windows.writeLayoutReport(path, m_parts->ws.verdictMark,
                                       m_parts->ws.store.selectedIds(),
                                       m_parts->recentReport.shown);
}

} // namespace lmprof::ui
