// The window's settings file and its layout file: what they keep, and how a damaged or
// hostile one is set aside with a message instead of stopping the window.

#include "lmprof/engine/result_io.h"
#include "settings.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace lmprof;
using namespace lmprof::ui;

TEST(Settings, RoundTripAndDamagedFileFallsBack) {
    const auto file = std::filesystem::temp_directory_path() / "lmprof_settings_test" / "s.json";
    Settings s;
    s.darkTheme = false;
    EXPECT_TRUE(s.lockLayout); // tabs stay put unless the user unlocks them
    s.lockLayout = false;
    for (int i = 0; i < 12; ++i) {
        s.addRecent("f" + std::to_string(i));
    }
    s.addRecent("f3");
    EXPECT_EQ(s.recentFiles.size(), Settings::kMaxRecent);
    EXPECT_EQ(s.recentFiles.front(), "f3");
    s.windowWidth = 1280;
    s.windowHeight = 720;
    s.save(file);
    const Settings back = Settings::load(file);
    EXPECT_FALSE(back.darkTheme);
    EXPECT_FALSE(back.lockLayout);
    EXPECT_EQ(back.recentFiles, s.recentFiles);
    EXPECT_EQ(back.windowWidth, 1280); // the next launch opens at the layout's size
    EXPECT_EQ(back.windowHeight, 720);
    EXPECT_TRUE(back.loadProblem.empty());
    // A window size that no screen has is a damaged field, not a 100000-pixel window.
    std::vector<std::string> damaged;
    const Settings huge = Settings::parse(R"({"window_size": [100000, 720]})", damaged);
    EXPECT_EQ(huge.windowWidth, 0);
    EXPECT_EQ(damaged, std::vector<std::string>{"window_size"});
    // The forms are kept as the objects they are; one of another type is a damaged field.
    damaged.clear();
    const Settings forms =
        Settings::parse(R"({"configure": 3, "sweep": {"contexts": "32"}})", damaged);
    EXPECT_EQ(damaged, std::vector<std::string>{"configure"});
    EXPECT_TRUE(forms.configure.empty());
    EXPECT_EQ(forms.sweep, R"({"contexts":"32"})");
    engine::RunConfig edited;
    edited.contextLength = 96;
    edited.model.preset = "custom";
    s.configure = engine::configToJsonLine(edited);
    s.sweep = forms.sweep;
    s.save(file);
    const Settings resumed = Settings::load(file);
    EXPECT_EQ(engine::parseConfig(resumed.configure).contextLength, 96);
    EXPECT_EQ(engine::parseConfig(resumed.configure).model.preset, "custom");
    EXPECT_EQ(resumed.sweep, forms.sweep);
    std::ofstream(file) << "{ not json";
    const Settings broken = Settings::load(file);
    EXPECT_TRUE(broken.darkTheme);
    EXPECT_NE(broken.loadProblem.find("not valid JSON"), std::string::npos);
    std::filesystem::remove_all(file.parent_path());
}

TEST(Settings, ADamagedFieldLosesOnlyItselfAndTheFileIsKeptAside) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_settings_damaged";
    std::filesystem::create_directories(dir);
    const auto file = dir / "settings.json";
    std::ofstream(file) << R"({"dark_theme": false, "save_path": 7,
                               "recent_files": ["a.json", 3, "b.json"]})";
    const Settings s = Settings::load(file);
    EXPECT_FALSE(s.darkTheme);
    EXPECT_EQ(s.savePath, Settings{}.savePath);
    EXPECT_EQ(s.recentFiles, (std::vector<std::string>{"a.json", "b.json"}));
    EXPECT_NE(s.loadProblem.find("save_path, an entry of recent_files"), std::string::npos)
        << s.loadProblem;
    EXPECT_NE(s.loadProblem.find("settings.json.bad"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir / "settings.json.bad"));
    std::filesystem::remove_all(dir);
}

// Files no lmprof wrote: nested too deep, or far too large, are set aside with a message and
// defaults used (never parsed, never a crash or a 40 s start).
TEST(Settings, HostileSettingsAndLayoutFilesAreSetAside) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_settings_hostile";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto file = dir / "settings.json";
    std::ofstream(file) << std::string(100000, '[') << std::string(100000, ']');
    const Settings deep = Settings::load(file);
    EXPECT_TRUE(deep.darkTheme);
    EXPECT_NE(deep.loadProblem.find("nested deeper than"), std::string::npos) << deep.loadProblem;
    EXPECT_TRUE(std::filesystem::exists(dir / "settings.json.bad"));

    const auto ini = dir / "imgui.ini";
    {
        std::ofstream out(ini);
        for (int i = 0; out.tellp() <= static_cast<std::streamoff>(kMaxLayoutBytes); ++i) {
            out << "[Window][w" << i << "]\nPos=0,0\nSize=10,10\n\n";
        }
    }
    const std::string problem = setAsideOversizedLayout(ini);
    EXPECT_NE(problem.find("more than any window layout"), std::string::npos) << problem;
    EXPECT_NE(problem.find("imgui.ini.bad"), std::string::npos) << problem;
    EXPECT_FALSE(std::filesystem::exists(ini));
    std::ofstream(ini) << "[Window][Summary]\nPos=0,0\n";
    EXPECT_EQ(setAsideOversizedLayout(ini), ""); // a real layout stays
    EXPECT_TRUE(std::filesystem::exists(ini));
    std::filesystem::remove_all(dir);
}
