// The Study window (docs/STUDY.md); the app also drives it from demo scripts (a "study"
// step plans and runs one, a "wait" for "study" waits for it).
#pragma once

#include "lmprof/engine/study.h"
#include "lmprof/engine/study_driver.h"
#include "study_scene.h"
#include "view.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

// Study: lmprof study in the window. Pick the device and the budget, Plan (a calibration
// run measures the device's rate, then the plan and its cuts show), Run, Cancel or Resume;
// each section's table and chart fill in as its runs finish (the same write-up as the CLI's,
// from the study folder), and Show report when it is done. The runs go through the engine
// like any other, so a study runs on a remote engine's GPU when one is connected. The study
// itself is the engine's StudyDriver, which lmprof-cli study drives too: this view starts it,
// passes it the engine's events and draws the folder it writes.
class StudyView final : public View {
public:
    static constexpr const char* kTitle = "Study";
    StudyView();
    // The driver's listener holds `this`.
    StudyView(const StudyView&) = delete;
    StudyView& operator=(const StudyView&) = delete;
    void draw(ViewContext& ctx) override;
    void observe(ViewContext& ctx, const std::vector<engine::SessionEvent>& events) override;
    // Plans for `device` and `budget` ("20s", "20m"), then runs the study, as Plan and then
    // Run do (a demo's "study" step). A refusal (a bad budget, a device the engine cannot
    // run) is left in message().
    void start(ViewContext& ctx, const std::string& device, const std::string& budget);
    // Opens a study folder of an earlier session (File > Studies): its plan, its finished
    // runs and their sections; Resume runs the rest, and a finished one shows its report.
    void openFolder(ViewContext& ctx, const std::filesystem::path& dir);
    // Calibrating, running or in the lab.
    bool busy() const;
    // A plan or a write-up to show: then the Study tab grows as it comes to the front.
    bool wantsRoom() const override {
        return m_study.phase() != engine::StudyDriver::Phase::Idle || m_report.has_value();
    }
    bool plotsScroll() const override { return true; }
    const std::string& message() const { return m_message; }
    const std::filesystem::path& folder() const { return m_dir; }

private:
    void plan(ViewContext& ctx, bool resume);
    // The write-up again from the folder, and the live charts; the PNG files only when the
    // study has ended (`final`), so a finished run does not stall the window drawing them.
    void refreshReport(ViewContext& ctx, bool final = false);
    void drawPlan();
    void drawSections();
    void drawChart(const std::string& file);

    // The study's calibration, runs and lab on the engine; its listener sets m_message on a
    // failure and asks for the write-up again (m_refresh) as runs end.
    engine::StudyDriver m_study;
    bool m_refresh = false;
    bool m_refreshFinal = false;
    std::string m_device = "auto";
    char m_budget[32] = "20m";
    std::filesystem::path m_dir;
    std::unique_ptr<engine::StudyFolderLock> m_held; // the folder, checked and held while used
    std::optional<engine::StudyReport> m_report;
    // The report's charts drawn live under their sections, over the folder's runs; they need
    // no engine (StudyChartScene), so a connect that replaces the window's leaves them be.
    std::vector<std::unique_ptr<StudyChartScene>> m_scenes;
    bool m_showReport = false;
    std::string m_message;
};

} // namespace lmprof::ui
