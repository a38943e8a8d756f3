// Settings kept between launches (theme, recent files, last save path) in
// <config dir>/settings.json. ImGui's own imgui.ini beside it keeps the window layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmprof::ui {

struct Settings {
    bool darkTheme = true;
    // View > Lock the layout: tabs cannot be dragged out of their places by accident (the
    // splitters still move).
    bool lockLayout = true;
    std::vector<std::string> recentFiles; // most recent first, at most kMaxRecent
    std::string savePath = "lmprof-results.json";
    // The window's size when it last closed, which the saved layout (imgui.ini) was made
    // for; 0 x 0 when unknown. The next launch opens at that size.
    int windowWidth = 0, windowHeight = 0;
    // The Configure and Sweep forms as they were last left, each a JSON object as compact
    // text ("" when never saved): the configuration in the result schema's names
    // (engine::configToJsonLine), and SweepView's own form. Checked where they are used, so a
    // value that no longer reads costs that form alone.
    std::string configure, sweep;

    static constexpr size_t kMaxRecent = 8;
    bool operator==(const Settings&) const = default;
    void addRecent(const std::string& path);

    // What load() could not read (and where it kept the damaged file); empty when all read.
    std::string loadProblem;

    // A missing file gives defaults. A damaged one keeps every field that reads, copies the
    // file to settings.json.bad and says so in loadProblem; errors never stop the app.
    static Settings load(const std::filesystem::path& file);
    // The window size of `file` without load()'s side effects (nothing is moved or copied
    // aside; App's own load reports a damaged file). 0 x 0 when unknown or unreadable.
    static std::pair<int, int> peekWindowSize(const std::filesystem::path& file);
    // The fields of a settings document; the name of each one that did not read (or why
    // the whole text did not) goes to `damaged`. Never throws.
    static Settings parse(std::string_view text, std::vector<std::string>& damaged);
    void save(const std::filesystem::path& file) const;
};

// imgui.ini holds the window layout, a few KiB. One far larger was not written by lmprof
// (ImGui takes seconds over 200,000 windows): it is moved to imgui.ini.bad before ImGui
// reads it, so the default layout is used. Returns what was done, or "".
inline constexpr std::uintmax_t kMaxLayoutBytes = 256 * 1024;
std::string setAsideOversizedLayout(const std::filesystem::path& ini);

} // namespace lmprof::ui
