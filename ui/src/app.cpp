// App: the frame loop's body. Drains engine events into the RunStore, draws the windows of
// the registry (registerWindows) and lays them out (a default layout on first launch, the
// user's own afterwards); the menu and the restore offer. The scripted side (autorun,
// exports, frame statistics) is in app_script.cpp.

#include "app_impl.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "theme.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <imgui.h>
#include <imgui_internal.h>
#include <implot.h>
#include <utility>

namespace lmprof::ui {

using namespace lmprof::engine;

App::App(AppOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {
    Impl& s = *m_impl;
    s.themeOverride = s.options.darkTheme;
    if (auto previous = s.autosave.takePrevious()) {
        if (s.options.restore == RestoreChoice::Restore) {
            s.restoreNow();
        } else if (s.options.restore == RestoreChoice::Ask) {
            s.restoreOffer = std::move(previous);
        } else {
            s.discard();
        }
    }
    std::string formProblem;
    if (s.options.resumeConfigure && !s.settings.configure.empty()) {
        try {
            s.form = ConfigForm(parseConfig(s.settings.configure));
        } catch (const std::exception& e) {
            formProblem = s.settingsFile.string() + ": configure: " + e.what() +
                          "; Configure starts from the defaults";
        }
    }
    // A damaged settings.json or an autosave that could not be handed over: said, not hidden.
    for (const std::string& problem :
         {s.settings.loadProblem, formProblem, s.layoutProblem, s.autosave.problem()}) {
        if (!problem.empty()) {
            s.status = problem;
            s.statusIsError = true;
            std::fprintf(stderr, "lmprof: %s\n", problem.c_str());
        }
    }
    // --show names windows of the registry; an unknown name is reported, not ignored.
    for (const std::string& name : s.options.showWindows) {
        if (!s.isWindow(name)) {
            s.status = "--show: '" + name + "' is not a window (" + s.windowTitles() + ")";
            s.statusIsError = true;
            std::fprintf(stderr, "lmprof: %s\n", s.status.c_str());
        }
    }
    s.openAtLaunch();
    s.checkDemoTargets();
    if (s.options.autorun && s.options.awaitWatchedRun) {
        s.autorunIndex = 0; // the script's run: the first this client numbers
        s.status = "waiting for the watched script's first step";
    } else if (s.options.autorun) {
        ViewContext ctx = s.context();
        s.autorunIndex = submitRun(ctx, s.form.config(), /*keepGivenFiles=*/true);
        s.autorunAnswered = s.autorunIndex < 0; // refused: the status line says why
    }
}

bool App::saveOnExit() {
    if (m_impl->options.saveOnExit.empty()) {
        return true;
    }
    ResultSet set =
        m_impl->store.toResultSet(m_impl->session().environment(m_impl->form.config().device));
    set.created = utcNow();
    set.tool = toolInfo();
    try {
        saveResultSetAtomic(set, m_impl->options.saveOnExit);
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
    if (!m_impl->options.freshLayout && width >= kMinWindowSide && height >= kMinWindowSide &&
        width <= kMaxWindowSide && height <= kMaxWindowSide) {
        m_impl->settings.windowWidth = width;
        m_impl->settings.windowHeight = height;
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
    // A fresh layout (--window-size, demos) neither reads nor replaces the saved one.
    io.IniFilename = m_impl->options.freshLayout ? nullptr : m_impl->iniFile.c_str();
    if (m_impl->options.freshLayout) {
        m_impl->hadLayout = false;
    }
    io.ConfigFlags |= ImGuiConfigFlags_DockingEnable | ImGuiConfigFlags_NavEnableKeyboard;
    loadFonts(contentScale);
    ImGui::GetStyle().FontScaleMain = m_impl->options.fontScale;
    applyTheme(m_impl->darkTheme(), contentScale);
}

std::vector<std::unique_ptr<View>> makeViews() {
    std::vector<std::unique_ptr<View>> views;
    for (const WindowEntry& entry : windowRegistry()) {
        views.push_back(entry.make());
    }
    return views;
}

void App::Impl::registerWindows() {
    const auto& registry = windowRegistry();
    for (size_t i = 0; i < registry.size(); ++i) {
        const WindowEntry& entry = registry[i];
        View* view = views[i].get();
        windows.push_back({entry.title, entry.slot, [view](ViewContext& c) { view->draw(c); },
                           entry.roomShare, view});
        for (const ChartEntry& chart : entry.charts) {
            charts.push_back({chart.name, chart.title, [view, draw = chart.draw](ViewContext& c) {
                                  draw(*view, c, ImVec2(-1, -1));
                              }});
        }
    }
}

bool App::Impl::isWindow(const std::string& title) const {
    return std::any_of(windows.begin(), windows.end(),
                       [&](const Window& w) { return title == w.title; });
}

std::string App::Impl::windowTitles() const {
    std::string titles;
    for (const Window& w : windows) {
        titles += (titles.empty() ? "" : ", ") + std::string(w.title);
    }
    return titles;
}

void App::Impl::buildDefaultLayout(ImGuiID dockspace) {
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::DockBuilderRemoveNode(dockspace);
    ImGui::DockBuilderAddNode(dockspace, ImGuiDockNodeFlags_DockSpace);
    ImGui::DockBuilderSetNodeSize(dockspace, viewport->WorkSize);
    ImGuiID left = 0, main = 0, leftTop = 0, leftBottom = 0, charts = 0, bottom = 0;
    ImGui::DockBuilderSplitNode(dockspace, ImGuiDir_Left, 0.23f, &left, &main);
    ImGui::DockBuilderSplitNode(left, ImGuiDir_Down, 0.16f, &leftBottom, &leftTop);
    // The bottom strip (tables) gets about 12 rows, at most 27% of a tall window and at
    // least 20% of a small one, so the charts keep their height at 1280x720.
    const float bottomShare =
        std::clamp(ImGui::GetFontSize() * 17.0f / viewport->WorkSize.y, 0.2f, 0.27f);
    ImGui::DockBuilderSplitNode(main, ImGuiDir_Down, bottomShare, &bottom, &charts);
    ImGuiID chartsLeft = 0, chartsRight = 0, tl = 0, bl = 0, tr = 0, br = 0;
    ImGui::DockBuilderSplitNode(charts, ImGuiDir_Left, 0.5f, &chartsLeft, &chartsRight);
    // Below about 900 px (1280x720) two rows of charts each side leave no plot readable
    // (docs/WINDOW.md, "Layout"): Telemetry becomes a tab beside Step times.
    if (viewport->WorkSize.y >= 52.0f * ImGui::GetFontSize()) {
        ImGui::DockBuilderSplitNode(chartsLeft, ImGuiDir_Down, 0.5f, &bl, &tl);
    } else {
        tl = bl = chartsLeft;
    }
    // The Memory view (timeline, breakdown, allocations) gets the taller right-hand place.
    ImGui::DockBuilderSplitNode(chartsRight, ImGuiDir_Down, 0.36f, &br, &tr);
    const std::map<DockSlot, ImGuiID> places = {
        {DockSlot::Left, leftTop},     {DockSlot::LeftBottom, leftBottom},
        {DockSlot::ChartTopLeft, tl},  {DockSlot::ChartBottomLeft, bl},
        {DockSlot::ChartTopRight, tr}, {DockSlot::ChartBottomRight, br},
        {DockSlot::Bottom, bottom}};
    for (const Window& w : windows) {
        ImGui::DockBuilderDockWindow(w.title, places.at(w.slot));
    }
    ImGui::DockBuilderFinish(dockspace);
}

void App::Impl::dockUnknownWindows() {
    const auto settingsOf = [](const char* title) {
        return ImGui::FindWindowSettingsByID(ImHashStr(title));
    };
    for (const Window& w : windows) {
        if (settingsOf(w.title)) {
            continue;
        }
        for (const Window& other : windows) {
            const ImGuiWindowSettings* known =
                other.slot == w.slot ? settingsOf(other.title) : nullptr;
            if (known && known->DockId != 0) {
                pendingDocks[w.title] = known->DockId;
                break;
            }
        }
    }
}

void App::Impl::drawMenu() {
    handleShortcuts();
    drawFileDialogs();
    if (!ImGui::BeginMainMenuBar()) {
        return;
    }
    if (ImGui::BeginMenu("File")) {
        drawFileMenu();
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Dark theme", nullptr, darkTheme())) {
            settings.darkTheme = true;
            themeOverride.reset();
            applyTheme(true, ImGui::GetStyle().FontScaleDpi);
        }
        if (ImGui::MenuItem("Light theme", nullptr, !darkTheme())) {
            settings.darkTheme = false;
            themeOverride.reset();
            applyTheme(false, ImGui::GetStyle().FontScaleDpi);
        }
        ImGui::Separator();
        // Brings a window (or its tab) to the front.
        for (const Window& w : windows) {
            if (ImGui::MenuItem(w.title)) {
                ImGui::SetWindowFocus(w.title);
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
    const std::string state = active             ? "running " + active->result.id
                              : session().busy() ? std::string("starting")
                                                 : std::string("idle");
    ImGui::SameLine(0, ImGui::GetFontSize() * 2);
    drawEngineIndicator();
    ImGui::SameLine(std::max(ImGui::GetCursorPosX() + ImGui::GetFontSize(),
                             ImGui::GetWindowWidth() - ImGui::CalcTextSize(state.c_str()).x -
                                 ImGui::GetStyle().ItemSpacing.x * 2));
    ImGui::TextDisabled("%s", state.c_str());
    ImGui::EndMainMenuBar();
    drawConnectDialog();
}

void App::Impl::restoreNow() {
    ResultsFile read;
    try {
        read = loadResultsFile(autosave.previousPath()); // as File > Open reads it
    } catch (const std::exception& e) {
        status = autosave.setAside(e.what());
        statusIsError = true;
        return;
    }
    restore(std::move(read.runs), read.warnings);
}

void App::Impl::restoreInBackground() {
    filesView.readInBackground(autosave.previousPath().string(), "Restoring the last session",
                               [this](ViewContext&, std::optional<ResultsFile> file,
                                      const std::string& error, bool cancelled) {
                                   if (file) {
                                       restore(std::move(file->runs), file->warnings);
                                   } else if (cancelled) {
                                       status =
                                           "restore cancelled: the last session's runs stay in " +
                                           autosave.previousPath().string() +
                                           " and are offered at the next launch";
                                       statusIsError = false;
                                   } else {
                                       status = autosave.setAside(error);
                                       statusIsError = true;
                                   }
                               });
}

void App::Impl::restore(std::vector<RunResult> runs, const std::vector<std::string>& warnings) {
    if (runs.empty()) {
        status =
            autosave.setAside("no line of it is a readable run (" + skippedLines(warnings) + ")");
        statusIsError = true;
        return;
    }
    const size_t count = runs.size();
    std::string problem;
    if (warnings.empty()) {
        problem = autosave.adopt(); // its lines start this session's autosave
    } else {
        // Into this session's autosave without the damaged lines, so they survive another
        // crash or restart and are not reported again.
        for (const auto& run : runs) {
            try {
                autosave.append(run);
            } catch (const std::exception& e) {
                problem = std::string("autosave: ") + e.what();
                break;
            }
        }
        problem = problem.empty() ? autosave.answer(true) : problem;
    }
    store.selectNewestOf(store.addLoaded(std::move(runs))); // the others are in Runs
    status = "restored " + std::to_string(count) + " run(s) of the last session" +
             (count > 1 ? ", showing the newest (Runs selects the others)" : "") +
             (warnings.empty() ? std::string() : "; " + skippedLines(warnings));
    statusIsError = !warnings.empty();
    if (!problem.empty()) {
        status = problem;
        statusIsError = true;
    }
}

void App::Impl::discard() {
    if (const std::string problem = autosave.answer(false); !problem.empty()) {
        status = problem;
        statusIsError = true;
    }
}

void App::Impl::drawRestoreOffer() {
    // One file is read at a time, and one modal shows: a file being opened (a demo's) goes
    // first, and the offer waits for it.
    if (!restoreOffer || filesView.opening()) {
        return;
    }
    ImGui::OpenPopup("Restore last session?");
    const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (!ImGui::BeginPopupModal("Restore last session?", nullptr,
                                ImGuiWindowFlags_AlwaysAutoResize)) {
        return;
    }
    // Counted, not read: the runs are read only if they are restored.
    ImGui::Text("The last session autosaved %zu run(s), %s%s.", restoreOffer->runs,
                engine::formatBytes(static_cast<int64_t>(restoreOffer->bytes)).c_str(),
                restoreOffer->savedAt.empty() ? "" : (", at " + restoreOffer->savedAt).c_str());
    ImGui::TextDisabled("Restore reads them, with a progress bar and Cancel; damaged lines are "
                        "skipped and listed.");
    ImGui::TextDisabled("Discarded runs are kept in %s until the next discard.",
                        autosave.discardedPath().string().c_str());
    const std::string restoreLabel = "Restore " + std::to_string(restoreOffer->runs) + " run(s)";
    if (ImGui::Button(restoreLabel.c_str())) {
        restoreInBackground();
        restoreOffer.reset();
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard")) {
        discard();
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

// The status line follows the work: "started ..." gives way to how each run ended, and a
// sweep's to "sweep finished" once its last run is in.
void App::Impl::reportFinished(const std::vector<SessionEvent>& events) {
    for (const auto& e : events) {
        const auto* fin = std::get_if<RunFinished>(&e);
        if (!fin || fin->result.status == RunStatus::Skipped) {
            continue;
        }
        const RunResult& r = fin->result;
        const PhaseStats& t = r.summary.totalMs;
        status = std::string(sweepView.running() ? "sweep: " : "") + "finished " + r.id + ": " +
                 statusText(r) + (r.error ? " - " + *r.error : std::string()) +
                 (r.status == RunStatus::Ok ? ", " + std::to_string(t.n) + " measured step(s), " +
                                                  formatFixed(t.mean, 2) + " ms per step"
                                            : std::string());
        statusIsError = r.status == RunStatus::Oom || r.status == RunStatus::Error;
    }
    if (sweepWasRunning && !sweepView.running()) {
        status = "sweep finished; " + status;
    }
    sweepWasRunning = sweepView.running();
}

void App::Impl::layOutOnce(ImGuiID dockspace) {
    if (layoutBuilt) {
        return;
    }
    // A saved layout made for a window of another size (a smaller screen now, say)
    // would squeeze panes to slivers: the default layout is built for this size.
    const ImVec2 now = ImGui::GetMainViewport()->Size;
    const auto differs = [](float now, int saved) {
        return saved > 0 && std::abs(now - static_cast<float>(saved)) > 0.15f * saved;
    };
    if (hadLayout &&
        (differs(now.x, settings.windowWidth) || differs(now.y, settings.windowHeight))) {
        hadLayout = false;
        status = "the saved layout was made for a " + std::to_string(settings.windowWidth) + "x" +
                 std::to_string(settings.windowHeight) + " window; laid out afresh for this size";
        statusIsError = false;
    }
    if (!hadLayout) {
        buildDefaultLayout(dockspace);
    } else {
        dockUnknownWindows();
    }
    layoutBuilt = true;
}

void App::frame() {
    Impl& s = *m_impl;
    // Settings are written when they change, not only at a clean exit (a killed window
    // keeps its theme and recent files).
    s.settings.configure = configToJsonLine(s.form.config()); // the form as last left
    if (!(s.settings == s.savedSettings)) {
        s.settings.save(s.settingsFile);
        s.savedSettings = s.settings;
    }
    auto events = std::exchange(s.retiredEvents, {});
    for (auto& e : s.session().drain()) {
        events.push_back(std::move(e));
    }
    s.store.claimIds(events); // before anything keeps an id
    for (const auto& e : events) {
        if (const auto* step = std::get_if<engine::StepFinished>(&e);
            step && step->publishedNs > 0) {
            s.stepsPublishedNs.push_back(step->publishedNs);
        }
    }
    {
        ViewContext ctx = s.context();
        for (auto& view : s.views) { // before the store moves the events' contents
            view->observe(ctx, events);
        }
    }
    s.reportFinished(events);
    s.autosaveFinished(events); // an autosave error is the last word of the frame
    s.store.apply(events);
    s.trackAutorun();
    if (s.frameNumber > 2) { // the windows and the layout exist (a demo may focus them)
        s.playDemo();
    }
    s.store.refreshSelection();
    if (s.autorunAnswered) {
        ++s.framesSinceAnswer;
    }
    // --export-plots once the autorun run has drawn for a few frames, or (without an autorun,
    // say with --open) once the first frames have drawn.
    if (!s.exportsQueued && autorunSettled() && s.frameNumber > kSettleFrames) {
        s.queueExports();
    }

    s.drawMenu();
    const ImGuiID dockspace = ImGui::DockSpaceOverViewport(0, ImGui::GetMainViewport());
    s.layOutOnce(dockspace);
    ViewContext ctx = s.context();
    for (const Window& w : s.windows) {
        if (auto it = s.pendingDocks.find(w.title); it != s.pendingDocks.end()) {
            ImGui::SetNextWindowDockID(it->second);
            s.pendingDocks.erase(it);
        }
        w.draw(ctx);
    }
    // --show: one window per frame once the windows exist (focusing several docked windows
    // in one frame leaves only the last one's tab in front).
    const size_t showIndex = static_cast<size_t>(s.frameNumber++) - 2;
    if (s.frameNumber > 2 && showIndex < s.options.showWindows.size()) {
        const std::string& name = s.options.showWindows[showIndex];
        ImGui::SetWindowFocus(name.c_str());
        for (const Window& w : s.windows) {
            if (name == w.title) {
                s.giveRoomTo(w);
            }
        }
    }
    s.giveRoomToWindowsBroughtForward();
    s.keepPlotsReadable(dockspace);
    s.drawRestoreOffer();
    s.drawCaption();
}

void App::setStatus(const std::string& message, bool isError) {
    m_impl->status = message;
    m_impl->statusIsError = isError;
}

bool App::darkTheme() const {
    return m_impl->darkTheme();
}

void App::setClock(double seconds) {
    m_impl->clockS = seconds;
}

bool App::demoFinished() const {
    return !m_impl->demoPlaying();
}

bool App::demoSucceeded() const {
    return !m_impl->demoFailed;
}

} // namespace lmprof::ui
