// The Study window (study_view.h, docs/STUDY.md): planning, running and resuming through
// the engine, the progress bars, and each section's table and live chart.

#include "study_view.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#include "markdown_text.h"
#include "plot_helpers.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <imgui.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmprof::ui {

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

std::string stamp() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &tm);
    return text;
}

} // namespace

StudyView::StudyView()
    : m_study([this](StudyDriver::Change change, const StudyDriver& study) {
          if (change == StudyDriver::Change::Failed) {
              m_message = study.message();
          }
          // The tables again after each run, and the charts' files once it is all done.
          m_refresh = change == StudyDriver::Change::RunEnded || m_refresh;
          m_refreshFinal = change == StudyDriver::Change::Done || m_refreshFinal;
      }) {}

// Plan: the driver's calibration runs first (their finish, in observe, makes the plan).
// Resume: the folder's saved request plans the same runs at once.
void StudyView::plan(ViewContext& ctx, bool resume) {
    m_message.clear();
    m_report.reset();
    m_scenes.clear();
    m_held.reset(); // a lock of this process's own would refuse the folder again
    SessionInterface& engine = ctx.session;
    if (resume) {
        try {
            m_held = openStudyFolder(m_dir); // refused with its reason: links, a second process
        } catch (const std::exception& e) {
            m_study.clear(); // the study shown before is not held any more: it cannot run
            m_message = e.what();
            return;
        }
        std::optional<ConfigError> refusal;
        if (!m_study.resume(engine, m_dir, &refusal)) {
            m_message = refusal ? m_study.message() + "; resume it on that machine, or connect "
                                                      "to it (File > Connect)"
                                : m_study.message();
            m_held.reset();
            return;
        }
        refreshReport(ctx);
        return;
    }
    const auto budget = parseStudyBudget(m_budget);
    if (!budget) {
        m_message = "budget: '" + std::string(m_budget) + "' is not a time (20m, 90s, 1h)";
        return;
    }
    StudyRequest request = studyRequestFor(engine, m_device, *budget, 0);
    // Refused before a folder is made for it: no empty study folder is left behind.
    if (auto refusal = StudyDriver::refusal(engine, request)) {
        m_message = refusal->message();
        return;
    }
    const fs::path dir = ctx.studyDir / ("study-" + stamp());
    try {
        m_held = openStudyFolder(dir);
    } catch (const std::exception& e) {
        m_study.clear();
        m_message = e.what();
        return;
    }
    m_dir = dir;
    if (!m_study.plan(engine, std::move(request), m_dir)) {
        m_held.reset();
    }
}

void StudyView::start(ViewContext& ctx, const std::string& device, const std::string& budget) {
    m_device = device;
    std::snprintf(m_budget, sizeof(m_budget), "%s", budget.c_str());
    plan(ctx, false);
    m_study.runWhenPlanned();
}

void StudyView::openFolder(ViewContext& ctx, const fs::path& dir) {
    if (busy()) {
        ctx.report("the study in progress must end, or be cancelled, before another opens", true);
        return;
    }
    m_dir = dir;
    plan(ctx, true);
    if (!m_message.empty()) {
        ctx.report("cannot open the study: " + m_message, true);
        return;
    }
    if (m_study.phase() == StudyDriver::Phase::Done) {
        refreshReport(ctx, true); // its report with its charts, as the study's end wrote it
    }
    ctx.report("opened the study in " + dir.string() + " (" +
                   std::to_string(m_study.done().size()) + " of " +
                   std::to_string(m_study.studyPlan().runs.size()) + " runs done)",
               false);
}

bool StudyView::busy() const {
    return m_study.busy();
}

void StudyView::refreshReport(ViewContext& ctx, bool final) {
    const StudyChartDrawer later = [](const ResultSet&, const std::vector<StudyChart>&,
                                      const fs::path&) {
        throw std::runtime_error("drawn when the study ends; the Study window shows them live");
    };
    try {
        if (fs::exists(m_dir / "runs.jsonl")) {
            m_report = writeStudyFolder(m_dir, "lmprof-cli study --report " + m_dir.string(),
                                        final ? ctx.drawStudyCharts : later);
            ResultSet set;
            set.runs = loadRunsJsonl(m_dir / "runs.jsonl").runs;
            if (fs::exists(m_dir / "lab.json")) {
                set.precisionLab = loadResultSet(m_dir / "lab.json").precisionLab;
            }
            m_scenes.clear();
            for (const StudyChart& chart : m_report->charts) {
                m_scenes.push_back(std::make_unique<StudyChartScene>(set, chart));
            }
        }
    } catch (const std::exception& e) {
        m_message = e.what();
    }
}

void StudyView::observe(ViewContext& ctx, const std::vector<SessionEvent>& events) {
    m_study.observe(ctx.session, events);
    if (m_refresh || m_refreshFinal) {
        refreshReport(ctx, m_refreshFinal);
        m_refresh = m_refreshFinal = false;
    }
}

void StudyView::drawPlan() {
    const StudyPlan& plan = m_study.studyPlan();
    ImGui::Text("%zu runs%s, about %s of a %s budget", plan.runs.size(),
                plan.lab ? " and the precision lab" : "", formatStudyTime(plan.estimateS()).c_str(),
                formatStudyTime(m_study.request().budgetS).c_str());
    const size_t done = m_study.done().size();
    ImGui::ProgressBar(
        plan.runs.empty() ? 0.0f : static_cast<float>(done) / static_cast<float>(plan.runs.size()),
        ImVec2(-1, 0),
        (std::to_string(done) + " of " + std::to_string(plan.runs.size()) + " runs").c_str());
    for (StudySection s : kStudySections) {
        size_t n = 0, finished = 0;
        for (const auto& run : plan.runs) {
            if (run.section == s) {
                ++n;
                finished += m_study.done().count(run.id);
            }
        }
        ImGui::TextUnformatted(std::string(toString(s)).c_str());
        ImGui::SameLine(ImGui::GetFontSize() * 7.0f);
        ImGui::Text("%zu/%zu", finished, n);
        ImGui::SameLine(ImGui::GetFontSize() * 10.0f);
        if (n == 0) {
            ImGui::TextDisabled("not in the plan (see its cuts)");
            continue;
        }
        ImGui::ProgressBar(static_cast<float>(finished) / static_cast<float>(n),
                           ImVec2(-1, ImGui::GetTextLineHeight()), "");
    }
    for (const auto& c : plan.cuts) {
        ImGui::TextDisabled("cut: %s", c.c_str());
    }
    for (const auto& l : plan.leftOut) {
        ImGui::TextDisabled("left out: %s", l.c_str());
    }
}

// Each section's table as the write-up has it, filled in as its runs finish.
void StudyView::drawSections() {
    if (!m_report) {
        return;
    }
    for (const StudyTable& table : m_report->tables) {
        // "sizes.csv" is the sizes section's table: headed by its question.
        const auto section = parseStudySection(fs::path(table.file).stem().string());
        const std::string title =
            section ? std::string(sectionTitle(*section)) + "##" + table.file : table.file;
        if (!ImGui::CollapsingHeader(title.c_str(), ImGuiTreeNodeFlags_DefaultOpen)) {
            continue;
        }
        const int columns = static_cast<int>(table.header.size());
        if (columns == 0 || !ImGui::BeginTable(table.file.c_str(), columns,
                                               ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                                   ImGuiTableFlags_SizingFixedFit)) {
            continue;
        }
        for (const auto& h : table.header) {
            ImGui::TableSetupColumn(h.c_str());
        }
        ImGui::TableHeadersRow();
        for (const auto& row : table.rows) {
            ImGui::TableNextRow();
            for (const auto& cell : row) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(cell.c_str());
            }
        }
        ImGui::EndTable();
        drawChart(fs::path(table.file).stem().string() + ".png");
    }
    // Charts of no table: the precision lab's.
    for (const auto& scene : m_scenes) {
        if (!std::any_of(m_report->tables.begin(), m_report->tables.end(),
                         [&](const auto& t) {
                             return fs::path(t.file).stem() == fs::path(scene->chart().file).stem();
                         }) &&
            ImGui::CollapsingHeader("Mixed-precision accumulation",
                                    ImGuiTreeNodeFlags_DefaultOpen)) {
            drawChart(scene->chart().file);
        }
    }
}

// A section's chart (by its file name), live: the window's chart of the section's runs.
void StudyView::drawChart(const std::string& file) {
    for (const auto& scene : m_scenes) {
        if (scene->chart().file == file) {
            ImGui::PushID(file.c_str());
            ImGui::TextDisabled("%s", scene->chart().title.c_str());
            scene->draw(ImVec2(-1, ImGui::GetFontSize() * 18.0f));
            ImGui::PopID();
        }
    }
}

void StudyView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const bool busy = this->busy();
    ImGui::BeginDisabled(busy);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    deviceCombo("device", ctx.session.devices(), m_device);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.0f);
    ImGui::InputText("budget", m_budget, sizeof(m_budget));
    ImGui::SameLine();
    if (ImGui::Button("Plan")) {
        plan(ctx, false);
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Short calibration runs measure the device's rate at a size or two; "
                          "the plan is then cut to the budget (docs/STUDY.md).");
    }
    ImGui::SameLine();
    using Phase = StudyDriver::Phase;
    const Phase phase = m_study.phase();
    ImGui::BeginDisabled(phase != Phase::Planned || ctx.session.busy());
    const size_t done = m_study.done().size();
    if (ImGui::Button(done > 0 && done < m_study.studyPlan().runs.size() ? "Resume" : "Run")) {
        m_study.run(ctx.session);
    }
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!busy);
    if (ImGui::Button("Cancel")) {
        m_study.cancel();
        ctx.session.cancel();
    }
    ImGui::EndDisabled();
    if (!m_dir.empty()) {
        ImGui::TextDisabled("folder: %s", m_dir.c_str());
    }
    if (!m_message.empty()) {
        ImGui::TextColored(ImVec4(0.9f, 0.4f, 0.3f, 1.0f), "%s", m_message.c_str());
    }
    switch (phase) {
    case Phase::Idle:
        ImGui::TextDisabled("Plan the study for a device and a budget; it runs through the "
                            "engine, local or connected.");
        break;
    case Phase::Calibrating:
        ImGui::Text("calibrating on %s: a few training steps of %s ...",
                    m_study.request().device.c_str(), m_study.calibrating().model.preset.c_str());
        break;
    case Phase::Lab:
        ImGui::Text("the precision lab ...");
        [[fallthrough]];
    default:
        drawPlan();
    }
    if (phase == Phase::Done && m_report) {
        ImGui::Checkbox("Show report", &m_showReport);
        ImGui::SameLine();
        ImGui::TextDisabled("%s", (m_dir / "report.md").c_str());
        if (m_showReport) {
            if (ImGui::BeginChild("##report", ImVec2(0, ImGui::GetFontSize() * 20),
                                  ImGuiChildFlags_Borders)) {
                drawMarkdown(m_report->markdown);
            }
            ImGui::EndChild();
        }
    }
    drawSections();
    ImGui::End();
}

// The window's place in the registry (registry.cpp).
WindowEntry studyWindow() {
    return windowOf<StudyView>(DockSlot::Bottom, {}, 0.6f);
}

} // namespace lmprof::ui
