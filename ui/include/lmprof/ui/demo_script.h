// A demo script (docs/DEMO.md): the steps a recorded demo needs, played by the window
// itself (DemoPlayer::play in ui/src/app_demo.cpp). Parsing is separate from playing so a
// bad script is refused at launch, naming the step and field, before any window opens. No
// ImGui here.
#pragma once

#include "lmprof/engine/config.h"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmprof::ui {

struct DemoStep {
    enum class Kind {
        Configure,  // change fields of the Configure form: `patch`
        Run,        // press Run (with `patch` applied first when given)
        Sweep,      // start a sweep over the lists below, the form's config as its base
        Wait,       // until `target` ("run": the last started run, "sweep", "script": the
                    // watched script's run) has finished
        Select,     // select runs by number (`runs`) or the last `last` runs, overlaid
        Show,       // bring the window `target` to the front
        Pause,      // hold for `seconds` (of recording time when recording)
        SaveChart,  // save the chart `target` as a PNG at `path`
        Caption,    // show `text` in a banner over the window ("" hides it)
        Theme,      // switch to the `target` theme ("dark" or "light")
        Study,      // plan and run a study on the device `target` within the budget `text`
        Screenshot, // the whole window as a PNG at `path`, after the frame renders
        Layout,     // the layout report (docs/DEMO.md) of the last frame, as JSON at `path`
        Open,       // open the result set or autosave file at `path` as File > Open does
                    // (read on its own thread, with a progress bar: wait for "open")
        Verdict,    // click the verdict strip's chip of kind `target` (docs/VERDICTS.md)
        Cancel,     // press Cancel (a watched script the window started gets a Ctrl+C)
    };
    Kind kind = Kind::Pause;
    std::string patch;  // Configure / Run: a JSON object in the result schema's names
    std::string target; // Wait, Show, SaveChart, Theme, Study (the device), Verdict (kind)
    std::string path;   // SaveChart, Screenshot, Layout, Open
    std::string text;   // Caption, Study (the budget)
    double seconds = 0; // Pause; Wait's time limit
    std::vector<int> runs;
    int last = 0;
    // Sweep lists (empty: the base's value only).
    std::vector<std::string> models;
    std::vector<int64_t> contexts;
    std::vector<engine::Precision> precisions;
    std::vector<engine::Mode> modes;
    std::vector<int> warmups;
    // The plain fields a sweep lists (ValueField::sweepAxis: seed, threads), by key.
    std::vector<std::pair<std::string, std::vector<int64_t>>> values;
};

struct DemoScript {
    std::vector<DemoStep> steps;
};

class DemoScriptError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws DemoScriptError naming the step and field ("steps[3].do: 'rn' is not a step; ...").
DemoScript parseDemoScript(std::string_view text);
DemoScript loadDemoScript(const std::filesystem::path& path);

} // namespace lmprof::ui
