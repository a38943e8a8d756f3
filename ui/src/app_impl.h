// App's private state, shared by app.cpp (the frame loop, layout, menu, restore offer)
// and app_script.cpp (autorun, PNG exports, frame statistics); and the window registry.
#pragma once

#include "autosave.h"
#include "chart_export.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/session.h"
#include "lmprof/ui/app.h"
#include "settings.h"
#include "views/files_view.h"
#include "views/plot_helpers.h"
#include "views/precision_lab_view.h"
#include "views/study_view.h"
#include "views/sweep_view.h"
#include "views/view.h"

#include <filesystem>
#include <functional>
#include <imgui.h>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmprof::ui {

// One window of the registry: its title (the view's kTitle), its place in the default
// layout and how to draw it. The registry drives the default layout, the View menu, --show
// and the frame's draw calls.
struct Window {
    const char* title;
    DockSlot slot;
    std::function<void(ViewContext&)> draw;
    // The share of its split a window's dock place grows to when the window is brought
    // forward (its tab selected, or --show), if it is smaller: 0 keeps the place as it is.
    float roomShare = 0.0f;
    const View* view = nullptr; // whether it wantsRoom
    bool wantedRoom = false;    // last frame: in front, with something to show
    bool seen = false;          // it has existed for a frame
};

// A chart that exports as itself (chart_export.h): its name (the PNG's file stem), the
// title written above it, and how to draw it alone into the space left.
struct Chart {
    const char* name;
    const char* title;
    std::function<void(ViewContext&)> draw;
};

// One view per registry entry, in its order (app.cpp).
std::vector<std::unique_ptr<View>> makeViews();
// The view of class V among them: the app drives a few directly.
template <typename V>
V& viewOf(const std::vector<std::unique_ptr<View>>& views) {
    for (const auto& v : views) {
        if (auto* view = dynamic_cast<V*>(v.get())) {
            return *view;
        }
    }
    throw std::logic_error(std::string(V::kTitle) + " is not in the window registry");
}

// Frames drawn after the autorun run finished before it counts as settled (the charts'
// auto-fit needs a frame or two to take the final data into account).
inline constexpr int kSettleFrames = 5;
inline constexpr int kLayoutPatienceFrames = 120;

struct App::Impl {
    explicit Impl(AppOptions o)
        : options(std::move(o)), form(options.initialConfig),
          settingsFile(options.configDir / "settings.json"),
          iniFile((options.configDir / "imgui.ini").string()),
          settings(Settings::load(settingsFile)),
          layoutProblem(options.freshLayout ? std::string() : setAsideOversizedLayout(iniFile)),
          hadLayout(std::filesystem::exists(iniFile)), autosave(options.configDir) {
        registerWindows();
        activeEngine->setWaker(options.wake);
    }

    AppOptions options;
    // The engine the window drives: a Session in this process, or a RemoteSession after
    // File > Connect... (or --connect).
    std::shared_ptr<engine::SessionInterface> activeEngine =
        options.engine ? std::exchange(options.engine, nullptr)
                       : std::make_shared<engine::Session>();
    engine::SessionInterface& session() const { return *activeEngine; }
    // File > Connect...: the dialog's fields and what went wrong, and the switch itself
    // (refused, with the reason on the status line, while the engine is busy).
    struct ConnectDialog {
        bool open = false;
        char address[256] = {};
        char tokenFile[1024] = {};
        char token[256] = {};
        std::string error;
    } connectDialog;
    void drawConnectDialog();
    // Makes the next engine, numbering its runs after every run the window has.
    bool switchEngine(
        const std::function<std::shared_ptr<engine::SessionInterface>(int firstRunIndex)>& make);
    void drawEngineIndicator();
    std::vector<engine::SessionEvent> retiredEvents; // the last engine's, after a switch
    std::vector<int64_t> stepsPublishedNs;           // steps drained this frame (recordFrameTime)
    std::vector<double> stepLatencyMs;
    RunStore store;
    ConfigForm form;
    std::filesystem::path settingsFile;
    std::string iniFile;
    Settings settings;
    Settings savedSettings = settings; // what settings.json holds: saved again on change
    std::string layoutProblem; // an oversized imgui.ini set aside (before hadLayout is read)
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
    // A request to export chart `stem` to `path` at the export size (exportRequest's rule).
    PngRequest exportRequest(const std::string& stem, std::string path) const;

    // The views of the registry (views/registry.cpp), in its order, and the three the app
    // also drives.
    std::vector<std::unique_ptr<View>> views = makeViews();
    FilesView& filesView = viewOf<FilesView>(views);
    SweepView& sweepView = viewOf<SweepView>(views);
    PrecisionLabView& precisionLabView = viewOf<PrecisionLabView>(views);
    StudyView& studyView = viewOf<StudyView>(views);
    std::vector<Window> windows;
    // Grows the dock place of a window with a roomShare as it comes to the front
    // (app_layout.cpp), when its view has something to fill it with.
    void giveRoomToWindowsBroughtForward();
    void giveRoomTo(const Window& w);
    // After the windows are drawn: moves room between the dock places so that no plot drawn
    // this frame is smaller than kMinPlot while a neighbour has room to spare, whatever the
    // layout was (a crushed one saved by an earlier version is repaired in the first frames).
    void keepPlotsReadable(ImGuiID dockspace);
    // The plots of the last frame drawn and the windows in front, as JSON (a demo's
    // "layout" step; docs/DEMO.md): what gui_e2e checks the layout by.
    void writeLayoutReport(const std::filesystem::path& path) const;
    std::vector<plot::DrawnPlot> lastFramePlots;
    int framesSinceLayoutMove = 0; // frames since keepPlotsReadable last moved room
    void registerWindows();
    bool isWindow(const std::string& title) const;
    std::string windowTitles() const; // "Configure, Files, ..." for messages
    // Steps of the demo naming a window or chart that is none, said before it plays.
    void checkDemoTargets();
    std::vector<Chart> charts;
    const Chart* findChart(const std::string& stem) const;
    std::string chartNames() const;                  // "step-times, distribution, ..." for messages
    std::unique_ptr<OffscreenCharts> offscreen;      // made at the first export
    std::unique_ptr<OffscreenCharts> studyOffscreen; // the Study view's report charts
    // Draws the chart for a PNG request; false (status says why) when it cannot.
    bool exportChart(const Chart& chart, const PngRequest& request);

    // Scripted launch: -1 no autorun; otherwise the session index of the autorun run.
    int autorunIndex = -1;
    bool autorunAnswered = false;
    bool autorunOk = false;
    int framesSinceAnswer = 0;
    bool screenshotRequested = false;
    std::filesystem::path screenshotPath; // a demo's; empty: a name with the local time

    // The demo script (app_demo.cpp): the step being played, when it began on the clock,
    // the last run it started, how it ended, and the caption banner.
    double clockS = 0.0;
    size_t demoStep = 0;
    double demoStepStartS = -1.0;
    int demoRunIndex = -1;
    bool demoFailed = false;
    std::string demoExportError; // a save_chart that failed, for its step to report
    std::string caption;
    bool demoPlaying() const {
        return options.demo && demoStep < options.demo->steps.size() && !demoFailed;
    }
    void playDemo();
    // Plays one step; true when it is done and the next may start.
    bool playStep(const DemoStep& step, const std::string& where, bool firstFrame);
    // playStep's longer steps, each true when it is done (false: ask again next frame).
    std::optional<engine::RunConfig> demoConfig(const DemoStep& step, const std::string& where);
    bool playRun(ViewContext& ctx, const DemoStep& step, const std::string& where);
    bool playSweep(ViewContext& ctx, const DemoStep& step, const std::string& where);
    bool playWait(const DemoStep& step, const std::string& where, double elapsed);
    void playSelect(const DemoStep& step, const std::string& where);
    bool playSaveChart(const DemoStep& step, const std::string& where, bool firstFrame);
    void failDemo(const std::string& where, const std::string& why);
    void drawCaption();
    void openAtLaunch();
    bool darkTheme() const { return themeOverride.value_or(settings.darkTheme); }
    std::optional<bool> themeOverride; // --theme or a demo's theme step: not saved

    struct FrameSample {
        double uiMs;
        double ms;
        size_t stepsHeld;
        bool running;
        size_t selected; // runs selected (drawn by the charts)
    };
    std::vector<FrameSample> frames;

    ViewContext context() {
        ViewContext ctx{session(),    store,
                        form,         settings,
                        status,       statusIsError,
                        &pngRequests, options.configDir / "snapshots",
                        &plotRects,   options.configDir / "traces"};
        ctx.experimentRunning = precisionLabView.busy();
        ctx.studyDir = options.configDir / "studies";
        ctx.drawStudyCharts = [this](const engine::ResultSet& set,
                                     const std::vector<engine::StudyChart>& charts,
                                     const std::filesystem::path& dir) {
            // Light and at font scale 1, as lmprof-cli study draws them.
            if (!studyOffscreen) {
                studyOffscreen = std::make_unique<OffscreenCharts>(false, 1.0f);
            }
            drawStudyCharts(*studyOffscreen, set, charts, dir);
        };
        return ctx;
    }
    void buildDefaultLayout(ImGuiID dockspace);
    // The first frame's layout: the saved one, or the default when there is none or it was
    // made for a window of another size.
    void layOutOnce(ImGuiID dockspace);
    // Windows the saved layout does not know (added by a later version) join, as a tab, a
    // window it knows from the same default place, instead of floating over the layout.
    std::map<std::string, ImGuiID> pendingDocks; // title -> dock node, for the first frame
    void dockUnknownWindows();
    // The answers to the restore offer: reading the last session's runs now (--restore-last)
    // or on a thread behind a progress bar (the offer's Restore), then taking them.
    void restoreNow();
    void restoreInBackground();
    void restore(std::vector<engine::RunResult> runs, const std::vector<std::string>& warnings);
    void discard();
    void drawRestoreOffer();
    void autosaveFinished(const std::vector<engine::SessionEvent>& events);
    void reportFinished(const std::vector<engine::SessionEvent>& events);
    bool sweepWasRunning = false;
    void drawMenu();
    // The File menu, its file dialogs and the keyboard shortcuts (app_file_menu.cpp).
    void drawFileMenu();
    void drawFileDialogs();
    void handleShortcuts();
    void openFileDialog();
    void saveAsDialog();
    bool quitRequested = false; // File > Quit or Ctrl+Q: the main loop ends
    void trackAutorun();
};

} // namespace lmprof::ui
