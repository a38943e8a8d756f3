// Settings kept between launches (theme, recent files, last save path) in
// <config dir>/settings.json. ImGui's own imgui.ini beside it keeps the window layout.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lmprof::ui {

struct Settings {
    bool darkTheme = true;
    std::vector<std::string> recentFiles; // most recent first, at most kMaxRecent
    std::string savePath = "lmprof-results.json";

    static constexpr size_t kMaxRecent = 8;
    void addRecent(const std::string& path);

    // What load() could not read (and where it kept the damaged file); empty when all read.
    std::string loadProblem;

    // A missing file gives defaults. A damaged one keeps every field that reads, copies the
    // file to settings.json.bad and says so in loadProblem; errors never stop the app.
    static Settings load(const std::filesystem::path& file);
    void save(const std::filesystem::path& file) const;
};

} // namespace lmprof::ui
