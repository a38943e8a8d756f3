// Settings persistence as a small JSON file.

#include "settings.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/ui/app.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

void Settings::addRecent(const std::string& path) {
    recentFiles.erase(std::remove(recentFiles.begin(), recentFiles.end(), path), recentFiles.end());
    recentFiles.insert(recentFiles.begin(), path);
    if (recentFiles.size() > kMaxRecent) {
        recentFiles.resize(kMaxRecent);
    }
}

namespace {
// A settings file is a few hundred bytes.
constexpr std::uintmax_t kMaxSettingsBytes = 1 << 20;

// Moves a file lmprof will not read to <file>.bad (replacing an older one); the reason, or
// "" if there is no such file.
std::string moveAside(const std::filesystem::path& file, const std::string& why) {
    std::filesystem::path aside = file;
    aside += ".bad";
    std::error_code ec;
    std::filesystem::rename(file, aside, ec);
    return why + (ec ? "; it is left as it is (" + ec.message() + ")"
                     : "; it was moved to " + aside.string() + " and defaults are used");
}
} // namespace

std::string setAsideOversizedLayout(const std::filesystem::path& ini) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(ini, ec);
    if (ec || size <= kMaxLayoutBytes) {
        return {};
    }
    return moveAside(ini, ini.string() + " holds " + std::to_string(size) +
                              " bytes, more than any window layout (" +
                              std::to_string(kMaxLayoutBytes) + ")");
}

Settings Settings::parse(std::string_view text, std::vector<std::string>& damaged) {
    Settings s;
    try {
        engine::checkJsonDepth(text);
        const auto j = nlohmann::json::parse(text);
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
            field("lock_layout", s.lockLayout, [](const auto& v) { return v.is_boolean(); });
            field("save_path", s.savePath, [](const auto& v) { return v.is_string(); });
            if (const auto it = j.find("window_size"); it != j.end()) {
                const auto side = [](const nlohmann::json& v) {
                    return v.is_number_integer() && v.get<int64_t>() >= kMinWindowSide &&
                           v.get<int64_t>() <= kMaxWindowSide;
                };
                if (it->is_array() && it->size() == 2 && side((*it)[0]) && side((*it)[1])) {
                    s.windowWidth = (*it)[0].get<int>();
                    s.windowHeight = (*it)[1].get<int>();
                } else {
                    damaged.push_back("window_size");
                }
            }
            for (auto [key, out] :
                 {std::pair{"configure", &s.configure}, std::pair{"sweep", &s.sweep}}) {
                if (const auto it = j.find(key); it != j.end()) {
                    if (it->is_object()) {
                        *out = it->dump();
                    } else {
                        damaged.push_back(key);
                    }
                }
            }
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
    } catch (const engine::ResultFormatError& e) {
        damaged.push_back(e.what()); // nested too deep to parse safely
    } catch (const std::exception&) {
        damaged.push_back("not valid JSON");
    }
    return s;
}

std::pair<int, int> Settings::peekWindowSize(const std::filesystem::path& file) {
    try {
        std::vector<std::string> damaged;
        const Settings s = parse(engine::readInputFile(file, kMaxSettingsBytes), damaged);
        return {s.windowWidth, s.windowHeight};
    } catch (const std::exception&) {
        return {0, 0}; // missing or unreadable: load() says why
    }
}

Settings Settings::load(const std::filesystem::path& file) {
    Settings s;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return s;
    }
    std::string text;
    try {
        text = engine::readInputFile(file, kMaxSettingsBytes);
    } catch (const engine::ResultFormatError& e) {
        s.loadProblem = std::filesystem::is_regular_file(file, ec)
                            ? moveAside(file, e.what())
                            : std::string(e.what()) + "; defaults are used";
        return s;
    }
    // Keep every field that reads; name the rest, and keep the damaged file aside so that
    // the save at exit (which writes what was kept) loses nothing for good.
    std::vector<std::string> damaged;
    s = parse(text, damaged);
    if (!damaged.empty()) {
        std::string what;
        for (const auto& d : damaged) {
            what += (what.empty() ? "" : ", ") + d;
        }
        std::filesystem::path aside = file;
        aside += ".bad";
        std::filesystem::copy_file(file, aside, std::filesystem::copy_options::overwrite_existing,
                                   ec);
        s.loadProblem =
            file.string() + ": " + what + " could not be read; " +
            (ec ? "the rest was kept" : "the rest was kept, the file copied to " + aside.string());
    }
    return s;
}

void Settings::save(const std::filesystem::path& file) const {
    nlohmann::json j = {{"dark_theme", darkTheme},
                        {"lock_layout", lockLayout},
                        {"recent_files", recentFiles},
                        {"save_path", savePath}};
    if (windowWidth > 0 && windowHeight > 0) {
        j["window_size"] = {windowWidth, windowHeight};
    }
    for (const auto& [key, text] :
         {std::pair{"configure", &configure}, std::pair{"sweep", &sweep}}) {
        if (auto form = nlohmann::json::parse(*text, nullptr, false); form.is_object()) {
            j[key] = std::move(form);
        }
    }
    try {
        std::filesystem::create_directories(file.parent_path());
        engine::writeFileAtomic(
            file, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } catch (const std::exception&) {
        // Settings are a convenience: failing to save them is not worth interrupting for.
    }
}

} // namespace lmprof::ui
