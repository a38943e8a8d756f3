// What every view gets each frame: the session to command, the store to read, the form
// to edit, the settings, and a status line to report to. Views keep their own UI state
// (zoom, scratch buffers) as members; nothing here is per-view.
#pragma once

#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/study.h"
#include "lmprof/ui/config_form.h"
#include "lmprof/ui/run_store.h"
#include "settings.h"
#include "verdict_cache.h"

#include <filesystem>
#include <map>
#include <string>

namespace lmprof::ui {

// A plot to save as PNG once the frame has rendered: its rectangle in ImGui coordinates.
struct PngRequest {
    float x = 0, y = 0, width = 0, height = 0;
    std::string fileStem; // e.g. "step-times"
    int framesToWait = 2; // let the context menu that asked for it close first
    std::string path;     // where to write; empty: <chart>-<runs>-<time>.png in the cwd
    // Who asked: a failure of --export-plots changes the exit code, a demo's stops the demo,
    // a person's is said on the status line.
    enum class Origin { Person, ExportPlots, Demo } origin = Origin::Person;
};

struct ViewContext {
    engine::SessionInterface& session; // the engine, local or remote
    RunStore& store;
    ConfigForm& form;
    Settings& settings;
    std::string& status;
    bool& statusIsError;
    std::vector<PngRequest>* pngRequests = nullptr; // null: PNG export unavailable (tests)
    std::filesystem::path snapshotDir = {};         // where GUI memory snapshots are saved
    // Each chart's rectangle in the last frame it was drawn, by file stem (scripted export).
    std::map<std::string, PngRequest>* plotRects = nullptr;
    std::filesystem::path traceDir = {}; // where the op profiles' Chrome traces are saved
    std::filesystem::path studyDir = {}; // where the Study view's studies go, one folder each
    // Draws a study report's charts with the window's OpenGL context (the window's chart
    // exporter); empty where there is none (tests): the report then says so.
    engine::StudyChartDrawer drawStudyCharts = {};
    // A precision-lab experiment is running: benchmark runs wait for it (it would disturb
    // their timings), as it waits for them.
    bool experimentRunning = false;
    // The steps of the verdict clicked in the strip (verdict_strip.h): the charts that show
    // its run mark them. Null: none.
    const VerdictMark* verdictMark = nullptr;
    // The watched script the window started (`lmprof -- python train.py`) while it is the
    // engine: Cancel stops it as Ctrl+C would (AppOptions::interruptWatchedScript).
    std::function<void()> interruptScript = {};

    void report(const std::string& message, bool isError) {
        status = message;
        statusIsError = isError;
    }
    // Selected runs, in selection order, skipping stale indices.
    std::vector<RunView*> selectedRuns();
};

// A fresh memory-snapshot file for a run of c under ctx.snapshotDir (created if needed):
// <run label>-<UTC time>.pickle on CUDA (for memory_viz), .json (allocation trace) on CPU.
std::string snapshotPath(const ViewContext& ctx, const engine::RunConfig& c);
// A fresh Chrome trace file for an op profile of c: <run label>-<UTC time>.trace.json.
std::string tracePath(const ViewContext& ctx, const engine::RunConfig& c);

// Starts a run of c, as the Run button does: refused with the reason on the status line if it
// cannot run here (-1); otherwise its memory snapshot and op trace get fresh files (all of
// them, or with keepGivenFiles only those without a path), "started ..." is reported and
// the session index returned.
int submitRun(ViewContext& ctx, engine::RunConfig c, bool keepGivenFiles = false);
// Asks the engine to stop its run after the current step and says so, as the Cancel button
// (and Escape) does; a watched script the window started is sent a Ctrl+C instead.
void cancelRun(ViewContext& ctx);

} // namespace lmprof::ui
