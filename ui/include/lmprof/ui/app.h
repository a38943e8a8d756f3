// The lmprof window's contents: owns the engine, the runs, the views and the rest of its
// parts (ui/src/app_parts.h), and draws one frame at a time. Platform setup (GLFW, OpenGL,
// the ImGui/ImPlot contexts) stays in app/main.cpp; this class only needs a current ImGui
// frame.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/session_interface.h"
#include "lmprof/ui/demo_script.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

// The sides a window may have, in pixels (--window-size, the size kept in settings.json).
inline constexpr int kMinWindowSide = 320;
inline constexpr int kMaxWindowSide = 16384;

// What to do with the runs the last session autosaved (see autosave.h): ask in a modal,
// or answer without asking (scripted launches and tests).
enum class RestoreChoice { Ask, Restore, Discard };

struct AppOptions {
    engine::RunConfig initialConfig;
    // Configure starts as settings.json last left it, not at initialConfig: set when the
    // command line chose no configuration and plays nothing (no --autorun, --demo or script).
    bool resumeConfigure = false;
    bool autorun = false;
    // The engine is a watched training script's server (`lmprof -- python train.py`,
    // docs/WATCH.md): the autorun submits nothing and waits for the script's run, the first
    // that appears, to finish.
    bool awaitWatchedRun = false;
    // With awaitWatchedRun: how the script ended once it has ("exited with status 1"), else
    // nullopt. A script that ends before its run does (a crash before its first step) ends
    // the autorun as failed instead of leaving the window waiting.
    std::function<std::optional<std::string>()> watchedScriptEnded;
    // With awaitWatchedRun: stops the script as Ctrl+C would (SIGINT to its process group),
    // so that its run ends `cancelled` with every step it showed. Cancel calls it, and so
    // does closing the window while the run is in progress (mayClose).
    std::function<void()> interruptWatchedScript;
    std::filesystem::path configDir; // imgui.ini, settings.json and autosave.jsonl live here
    RestoreChoice restore = RestoreChoice::Ask;
    std::filesystem::path saveOnExit;     // if set, the finished runs are saved there at exit
    std::vector<std::string> showWindows; // brought to the front at launch, e.g. "Summary"
    // Charts (by name: "step-times", "memory", ...; exportableCharts()) drawn for the file
    // once the autorun run has settled: <exportDir>/<name>-<what the runs are>.png, at
    // exportWidth x exportHeight (0: the size the chart has on screen, else 1200 x 700).
    std::vector<std::string> exportPlots;
    std::filesystem::path exportDir;
    int exportWidth = 0, exportHeight = 0;
    // The stage for demos (docs/DEMO.md).
    std::optional<bool> darkTheme;      // this launch's theme (not saved); else the setting
    bool freshLayout = false;           // lay out afresh; leave the saved layout alone
    std::vector<std::string> openFiles; // opened at launch, their runs selected together
    float fontScale = 1.0f;
    std::optional<DemoScript> demo; // played from the first frame
    // The engine to drive from the start (--connect: a RemoteSession); null: a Session in
    // this process. File > Connect... changes it later.
    std::shared_ptr<engine::SessionInterface> engine;
    // Given to every engine the window drives (SessionInterface::setWaker): called from the
    // engine's thread when it has something to show, so a loop asleep until input draws.
    std::function<void()> wake;
    // What File > Connect... offers: the last server and its token file.
    std::string connectAddress = "127.0.0.1:7377";
    std::string connectTokenFile;
};

class App {
public:
    explicit App(AppOptions options);
    ~App();
    App(const App&) = delete;
    App& operator=(const App&) = delete;

    // The size the window had when it last closed (settings.json in configDir), for the
    // next one to open at; nullopt when none is known.
    static std::optional<std::pair<int, int>>
    savedWindowSize(const std::filesystem::path& configDir);
    // The window's size now, kept at exit as the size the layout belongs to (not kept for a
    // launch laid out afresh, --window-size or a demo).
    void setWindowSize(int width, int height);

    // Loads fonts and theme into the current ImGui context (before the first frame).
    void setupStyle(float contentScale);
    // Pulls engine events and draws the whole window.
    void frame();

    // The autorun request has been answered (finished, refused, or never asked) and the
    // charts have drawn its final state for a few frames.
    bool autorunSettled() const;
    // True if the autorun run ended with status ok.
    bool autorunSucceeded() const;
    // An autorun was asked for: by --autorun, or a watched script's run (awaited).
    bool autorunAsked() const;
    // Call after rendering the frame, before the buffer swap: saves the plots whose
    // "Save PNG" was picked and the whole window when F12 (or File > Screenshot) asked
    // for it (a framebuffer of fbWidth x fbHeight pixels is current).
    void afterRender(int fbWidth, int fbHeight);
    // Something changes on screen without input: a run or sweep in progress, the autorun
    // settling, windows to bring forward, PNGs to take. When false the frame loop can wait
    // for input instead of drawing (an idle window costs no CPU).
    bool animating() const;
    // When the screen next changes with nothing animating and no input (the menu bar's
    // message goes), or none: an idle frame loop waits no longer than that.
    std::optional<std::chrono::steady_clock::time_point> nextQuietChange() const;
    // A run on this machine's CPU is in progress (not a remote engine's): every frame drawn
    // (Mesa's software rasteriser under Xvfb, or the driver's CPU work) takes cores from what
    // it measures.
    bool cpuRunStreaming() const;
    // Chart PNGs still to be written (asked for, or --export-plots not yet done).
    bool pngPending() const;
    // False if a chart named in exportPlots is not one, or could not be saved.
    bool exportsSucceeded() const;
    // File > Quit or Ctrl+Q: the main loop should end as if the window were closed.
    bool quitRequested() const;
    // The window was asked to close: true if it may now. While a watched script's run is in
    // progress, the script is stopped as Ctrl+C would (once) and this answers false until
    // its run has ended (it arrives with its steps, saved and autosaved as the others) or
    // the script has exited: the loop goes on drawing meanwhile, within a grace of its own.
    bool mayClose();
    void setStatus(const std::string& message, bool isError);
    // Saves the finished runs to AppOptions::saveOnExit, if set (call once, before the App
    // goes). False, with the reason on stderr, if the file could not be written.
    bool saveOnExit();

    // Frame-time recording for the GUI benchmark: the main loop reports each frame's UI
    // time (building and tessellating the frame) and its whole work time (with rendering
    // and the buffer swap); frames are kept with the number of steps the charts held and
    // whether a run was in progress, and for each step drawn in the frame how long after
    // the engine published it (a remote engine's too, on loopback). writeFrameStats() saves
    // them as JSON.
    void recordFrameTime(double uiMs, double frameMs);
    // Throws std::runtime_error naming the path if the file cannot be written.
    void writeFrameStats(const std::filesystem::path& path) const;
    // The last frame's plots (their shown frame and data area) and the windows in front, as
    // JSON: what gui_e2e checks the layout by (docs/WINDOW.md, "Layout").
    void writeLayoutReport(const std::filesystem::path& path) const;
    bool darkTheme() const;

    // The clock the demo's pauses and time limits run on, in seconds: the wall clock, or the
    // recording's (frames / fps) so that a recorded demo keeps its pace on any machine.
    void setClock(double seconds);
    // The demo script has played to its end or stopped on a failed step (or there is none).
    bool demoFinished() const;
    bool demoSucceeded() const;

private:
    struct Parts; // its parts, each with its own state (app_parts.h)
    std::unique_ptr<Parts> m_parts;
};

// Pixels read from OpenGL (RGBA, bottom row first) as a PNG at `path`, written atomically
// (a temporary file renamed over it: never half a file, never through a link at `path`).
// Throws std::runtime_error naming the path and the reason.
void writeGlPixelsPng(const std::filesystem::path& path, int width, int height,
                      const std::vector<unsigned char>& pixels);

// Reads the current OpenGL framebuffer (width x height, RGBA) and writes it as a PNG.
// Throws std::runtime_error naming the path and the reason when it cannot.
void writeFramebufferPng(const std::filesystem::path& path, int width, int height);
// The same for a rectangle of it; x, y are OpenGL's (origin at the bottom left).
void writeFramebufferRegionPng(const std::filesystem::path& path, int x, int y, int width,
                               int height);

} // namespace lmprof::ui
