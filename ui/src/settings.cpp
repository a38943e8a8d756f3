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
    // Keep every field that reads; name the rest, and keep the damaged file aside so that
    // the save at exit (which writes what was kept) loses nothing for good.
    std::vector<std::string> damaged;
    try {
        const auto j = nlohmann::json::parse(in);
        if (!j.is_object()) {
            damaged.push_back("not a JSON object");
        } else {
            auto field = [&](const char* key, auto& out, auto isType) {
                const auto it = j.find(key);
                if (it == j.end()) {
                    return;
                }
                if (isType(*it)) {
                    it->get_to(out);
                } else {
                    damaged.push_back(key);
                }
            };
            field("dark_theme", s.darkTheme, [](const auto& v) { return v.is_boolean(); });
            field("save_path", s.savePath, [](const auto& v) { return v.is_string(); });
            if (const auto it = j.find("recent_files"); it != j.end()) {
                if (!it->is_array()) {
                    damaged.push_back("recent_files");
                } else {
                    s.recentFiles.clear();
                    for (const auto& v : *it) {
                        if (v.is_string() && s.recentFiles.size() < kMaxRecent) {
                            s.recentFiles.push_back(v.get<std::string>());
                        } else if (!v.is_string()) {
                            damaged.push_back("an entry of recent_files");
                        }
                    }
                }
            }
        }
    } catch (const std::exception&) {
        damaged.push_back("not valid JSON");
    }
    if (!damaged.empty()) {
        std::string what;
        for (const auto& d : damaged) {
            what += (what.empty() ? "" : ", ") + d;
        }
        std::filesystem::path aside = file;
        aside += ".bad";
        std::error_code ec;
        std::filesystem::copy_file(file, aside, std::filesystem::copy_options::overwrite_existing,
                                   ec);
        s.loadProblem =
            file.string() + ": " + what + " could not be read; " +
            (ec ? "the rest was kept" : "the rest was kept, the file copied to " + aside.string());
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
