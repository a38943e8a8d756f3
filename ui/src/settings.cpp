// Settings persistence as a small JSON file.

#include "settings.h"

#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

void Settings::addRecent(const std::string& path) {
    recentFiles.erase(std::remove(recentFiles.begin(), recentFiles.end(), path), recentFiles.end());
    recentFiles.insert(recentFiles.begin(), path);
    if (recentFiles.size() > kMaxRecent) {
        recentFiles.resize(kMaxRecent);
    }
}

Settings Settings::load(const std::filesystem::path& file) {
    Settings s;
    std::ifstream in(file);
    if (!in) {
        return s;
    }
    try {
        const auto j = nlohmann::json::parse(in);
        s.darkTheme = j.value("dark_theme", s.darkTheme);
        s.recentFiles = j.value("recent_files", s.recentFiles);
        s.savePath = j.value("save_path", s.savePath);
    } catch (const std::exception&) {
        return Settings{}; // a damaged settings file falls back to defaults
    }
    return s;
}

void Settings::save(const std::filesystem::path& file) const {
    const nlohmann::json j = {
        {"dark_theme", darkTheme}, {"recent_files", recentFiles}, {"save_path", savePath}};
    try {
        std::filesystem::create_directories(file.parent_path());
        engine::writeFileAtomic(file, j.dump(2) + "\n");
    } catch (const std::exception&) {
        // Settings are a convenience: failing to save them is not worth interrupting for.
    }
}

} // namespace lmprof::ui
