// The window's model: the engine it drives, the runs, the Configure form, the settings and
// the status line. Every part of the app (app_parts.h) and every view (ViewContext) works
// on this one object; what else a part uses it is given by reference (app_parts.h).
#pragma once

#include "lmprof/engine/session_interface.h"
#include "lmprof/ui/config_form.h"
#include "lmprof/ui/run_store.h"
#include "settings.h"
#include "verdict_cache.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmprof::ui {

struct Workspace {
    Workspace(std::shared_ptr<engine::SessionInterface> engine, engine::RunConfig initial,
              std::filesystem::path settingsPath)
        : activeEngine(std::move(engine)), form(std::move(initial)),
          settingsFile(std::move(settingsPath)), settings(Settings::load(settingsFile)) {}

    // The engine the window drives: a Session in this process, or a RemoteSession after
    // File > Connect... (or --connect).
    std::shared_ptr<engine::SessionInterface> activeEngine;
    engine::SessionInterface& session() const { return *activeEngine; }
    // The last engine's events after a switch: they go through the next frame.
    std::vector<engine::SessionEvent> retiredEvents;
    RunStore store;
    ConfigForm form;
    std::filesystem::path settingsFile;
    Settings settings;
    Settings savedSettings = settings; // what settings.json holds: saved again on change
    std::string status;
    bool statusIsError = false;
    std::optional<bool> themeOverride; // --theme or a demo's theme step: not saved
    // The verdict a person clicked in the strip: its chart marks its steps.
    std::optional<VerdictMark> verdictMark;

    bool darkTheme() const { return themeOverride.value_or(settings.darkTheme); }
    void report(std::string message, bool isError) {
        status = std::move(message);
        statusIsError = isError;
    }
    // The events since the last frame: the retired engine's first, then the engine's.
    std::vector<engine::SessionEvent> drain();
    // Settings are written when they change, not only at a clean exit (a killed window
    // keeps its theme and recent files); the form is kept as last left.
    void saveSettingsWhenChanged();
};

} // namespace lmprof::ui
