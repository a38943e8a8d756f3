// What App is made of. Each part owns its own state and is written in its own file; the
// model they share is the Workspace (workspace.h), and the windows are the WindowSet's
// (window_set.h). App::Parts only puts them together and runs the frame (app.cpp).
#pragma once

#include "autosave.h"
#include "chart_export.h"
#include "lmprof/ui/app.h"
#include "window_set.h"
#include "workspace.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

// Chart PNGs (app_script.cpp): the requests taken once a frame has rendered (Save PNG,
// --export-plots, a demo's save_chart), each chart's rectangle on screen, and the
// offscreen renderers that draw a chart alone for a file.
class ChartExports {
public:
    ChartExports(const AppOptions& options, Workspace& ws) : m_options(options), m_ws(ws) {}
    std::vector<PngRequest> requests;
    std::map<std::string, PngRequest> plotRects; // by file stem, as last drawn
    bool queued = false;                         // --export-plots is queued
    bool ok = true;                              // every --export-plots chart was saved
    std::string demoError;                       // a demo's save_chart that failed
    // A request to export chart `stem` to `path` at the export size (the size asked for,
    // else its size on screen, else a default).
    PngRequest request(const std::string& stem, std::string path) const;
    // Queues --export-plots for the runs selected now; a name that is no chart is said.
    void queue(ViewContext& ctx, const WindowSet& windows);
    // Draws a chart for a PNG request; false (the status line says why) when it cannot.
    bool save(const Chart& chart, const PngRequest& request, ViewContext& ctx);
    // Draws a study report's charts (ViewContext::drawStudyCharts), light and at font
    // scale 1, as lmprof-cli study draws them.
    void drawStudyCharts(const engine::ResultSet& set,
                         const std::vector<engine::StudyChart>& charts,
                         const std::filesystem::path& dir);

private:
    const AppOptions& m_options;
    Workspace& m_ws;
    std::unique_ptr<OffscreenCharts> m_offscreen;      // made at the first export
    std::unique_ptr<OffscreenCharts> m_studyOffscreen; // the Study view's report charts
};

// The --autorun run (app_script.cpp): its session index, and whether and how it ended.
struct Autorun {
    int index = -1; // -1: no autorun
    bool answered = false;
    bool ok = false;
    int framesSinceAnswer = 0;
    int framesSinceScriptEnded = 0; // a watched script gone, its server too
    void track(RunStore& store);
};

// A screenshot of the whole window, taken once the frame has rendered (F12, File >
// Screenshot, a demo's step); an empty path: a name with the local time.
struct ScreenshotRequest {
    bool requested = false;
    std::filesystem::path path;
};

// --frame-stats (app_script.cpp): each frame's times, and how long after the engine
// published it each step was on screen.
struct FrameStats {
    struct Sample {
        double uiMs;
        double ms;
        size_t stepsHeld;
        bool running;
        size_t selected; // runs selected (drawn by the charts)
    };
    std::vector<Sample> frames;
    std::vector<int64_t> stepsPublishedNs; // steps drained this frame
    std::vector<double> stepLatencyMs;
};

// The runs the last session autosaved (app_restore.cpp): the offer, restoring them (now,
// or on a thread behind a progress bar) or setting them aside, and this session's
// autosave of every run that finishes.
class SessionRestore {
public:
    SessionRestore(const std::filesystem::path& configDir, Workspace& ws, FilesView& files)
        : autosave(configDir), m_ws(ws), m_files(files) {}
    Autosave autosave;
    // At launch: restore now, ask in a modal, or discard, as the options say.
    void answerAtLaunch(RestoreChoice choice);
    void drawOffer();
    void saveFinished(const std::vector<engine::SessionEvent>& events);

private:
    Workspace& m_ws;
    FilesView& m_files;
    std::optional<Autosave::Previous> m_offer; // shown as a modal until answered
    void restoreNow();
    void restoreInBackground();
    void restore(std::vector<engine::RunResult> runs, const std::vector<std::string>& warnings);
    void discard();
};

// Which engine the window drives (app_connect.cpp): File > Connect...'s dialog, the switch
// between engines (refused, with the reason on the status line, while the engine is busy),
// and the menu bar's indicator of the engine in use.
class EngineSwitch {
public:
    EngineSwitch(AppOptions& options, Workspace& ws, WindowSet& windows)
        : m_options(options), m_ws(ws), m_windows(windows) {}
    void openDialog();
    void drawDialog();
    // `watchedRunEnded`: a watched script's run has ended (its server is gone, as planned).
    void drawIndicator(bool watchedRunEnded) const;
    // Makes the next engine, numbering its runs after every run the window has.
    bool switchTo(
        const std::function<std::shared_ptr<engine::SessionInterface>(int firstRunIndex)>& make);

private:
    AppOptions& m_options; // the address and token file the dialog offers next
    Workspace& m_ws;
    WindowSet& m_windows;
    bool m_open = false;
    char m_address[256] = {};
    char m_tokenFile[1024] = {};
    char m_token[256] = {};
    std::string m_error;
};

// The File menu, its file dialogs and the keyboard shortcuts (app_file_menu.cpp).
class FileMenu {
public:
    FileMenu(Workspace& ws, WindowSet& windows, EngineSwitch& engines,
             ScreenshotRequest& screenshot, std::function<ViewContext()> context)
        : m_ws(ws), m_windows(windows), m_engines(engines), m_screenshot(screenshot),
          m_context(std::move(context)) {}
    void drawMenu();
    void drawDialogs();
    void handleShortcuts();
    bool quitRequested = false; // File > Quit or Ctrl+Q: the main loop ends

private:
    Workspace& m_ws;
    WindowSet& m_windows;
    EngineSwitch& m_engines;
    ScreenshotRequest& m_screenshot;
    std::function<ViewContext()> m_context;
    void openFileDialog();
    void saveAsDialog();
};

// The demo script (app_demo.cpp, docs/DEMO.md), played from the first frames on the app's
// clock, and its caption banner.
class DemoPlayer {
public:
    DemoPlayer(const AppOptions& options, Workspace& ws, WindowSet& windows, ChartExports& exports,
               ScreenshotRequest& screenshot, std::function<ViewContext()> context)
        : m_options(options), m_ws(ws), m_windows(windows), m_exports(exports),
          m_screenshot(screenshot), m_context(std::move(context)) {}
    double clockS = 0.0; // the wall clock, or the recording's
    bool playing() const {
        return m_options.demo && m_step < m_options.demo->steps.size() && !m_failed;
    }
    bool failed() const { return m_failed; }
    // Steps naming a window or chart that is none, said before the demo plays.
    void checkTargets();
    void play();
    void drawCaption() const;

private:
    const AppOptions& m_options;
    Workspace& m_ws;
    WindowSet& m_windows;
    ChartExports& m_exports;
    ScreenshotRequest& m_screenshot;
    std::function<ViewContext()> m_context;
    size_t m_step = 0;          // the step being played
    double m_stepStartS = -1.0; // when it began on the clock
    int m_runIndex = -1;        // the last run it started
    bool m_failed = false;
    std::string m_caption;

    // Plays one step; true when it is done and the next may start.
    bool playStep(const DemoStep& step, const std::string& where, bool firstFrame);
    // playStep's longer steps, each true when it is done (false: ask again next frame).
    std::optional<engine::RunConfig> demoConfig(const DemoStep& step, const std::string& where);
    bool playRun(ViewContext& ctx, const DemoStep& step, const std::string& where);
    bool playSweep(ViewContext& ctx, const DemoStep& step, const std::string& where);
    bool playWait(const DemoStep& step, const std::string& where, double elapsed);
    void playSelect(const DemoStep& step, const std::string& where);
    bool playSaveChart(const DemoStep& step, const std::string& where, bool firstFrame);
    bool playVerdict(const DemoStep& step, const std::string& where, bool firstFrame);
    void fail(const std::string& where, const std::string& why);
};

// Members are made in this order and destroyed in the reverse: the parts after the views
// (WindowSet) go first. The file reading outlives them all: ~FileReading cancels and joins
// a reading still in progress (SessionRestore's, or File > Open's) without handing it on,
// so nothing reaches a part gone.
struct App::Parts {
    explicit Parts(AppOptions o);

    AppOptions options;
    FileReading reading; // the only thread the window's contents start (docs/ARCHITECTURE.md)
    Workspace ws;
    WindowSet windows;
    ChartExports exports{options, ws};
    ScreenshotRequest screenshot;
    Autorun autorun;
    FrameStats frameStats;
    SessionRestore restore;
    EngineSwitch engines{options, ws, windows};
    FileMenu fileMenu{ws, windows, engines, screenshot, [this] { return context(); }};
    DemoPlayer demo{options, ws, windows, exports, screenshot, [this] { return context(); }};
    int frameNumber = 0;
    bool sweepWasRunning = false;
    // The watched script's server, while the window drives it (null otherwise): Cancel and
    // closing stop the script only while it is still the engine.
    const engine::SessionInterface* scriptEngine = nullptr;
    bool scriptInterrupted = false; // by mayClose, once

    // What every view gets this frame.
    ViewContext context();
    // --open: the files read and their runs selected together.
    void openAtLaunch();
    // The status line follows the work: how each run ended, and "sweep finished".
    void reportFinished(const std::vector<engine::SessionEvent>& events);
    // A watched script that ended while its run was awaited: once its server is gone too
    // (every event it sent is drained), the autorun ends as failed, saying how it ended.
    void noticeScriptEnd();
    // Its run as far as the window saw it, ended `cancelled` (the window stopped the script)
    // or `error`, saved and autosaved as a finished run: nothing the window showed is lost.
    void keepCutShortRun(const std::string& ended);
    void drawMenu();
    // The status line's message in the menu bar, up to x `end`, for a few seconds after it
    // changed: Ctrl+S or a failed open says so wherever the user looks.
    void drawRecentReport(float end);
    struct RecentReport {
        static constexpr std::chrono::seconds kShown{6};
        std::string text;
        std::chrono::steady_clock::time_point at;
        std::string shown; // what the last frame drew of it: "" for nothing
    } recentReport;
};

} // namespace lmprof::ui
