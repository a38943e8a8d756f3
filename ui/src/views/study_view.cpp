// The Study window (study_view.h, docs/STUDY.md): planning, running and resuming through
// the engine, the progress bars, and each section's table and live chart.

#include "study_view.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#include "plot_helpers.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <imgui.h>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
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

// Plan: a calibration run first (its finish, in observe, makes the plan). Resume: the
// folder's saved request plans the same runs at once.
void StudyView::plan(ViewContext& ctx, bool resume) {
    m_message.clear();
    m_report.reset();
    m_cancelled = false;
    m_held.reset(); // a lock of this process's own would refuse the folder again
    if (resume) {
        try {
            m_held = openStudyFolder(m_dir); // refused with its reason: links, a second process
            if (auto saved = loadStudyRequest(m_dir)) {
                RunConfig probe; // a plan is for its device: not resumed where it is missing
                probe.device = saved->device;
                if (auto refusal = ctx.session.checkRunnable(probe)) {
                    m_message = "this study was planned for " + saved->device +
                                ", which this engine cannot run (" + refusal->message() +
                                "); resume it on that machine, or connect to it (File > "
                                "Connect)";
                    m_held.reset();
                    return;
                }
                m_request = *saved;
                m_plan = planStudy(m_request);
                m_done = finishedStudyRuns(m_dir);
                m_phase = Phase::Planned;
                refreshReport(ctx);
                return;
            }
            m_message = m_dir.string() + ": no study plan (plan.json) to resume";
            m_held.reset();
            return;
        } catch (const std::exception& e) {
            m_message = e.what();
            return;
        }
    }
    const auto budget = parseStudyBudget(m_budget);
    if (!budget) {
        m_message = "budget: '" + std::string(m_budget) + "' is not a time (20m, 90s, 1h)";
        return;
    }
    SessionInterface& engine = ctx.session;
    m_request = studyRequestFor(engine, m_device, *budget, 0);
    const RunConfig calibration = *nextCalibrationRun(m_request);
    if (auto refusal = engine.checkRunnable(calibration)) {
        m_message = refusal->message();
        return;
    }
    m_dir = ctx.studyDir / ("study-" + stamp());
    try {
        m_held = openStudyFolder(m_dir);
    } catch (const std::exception& e) {
        m_message = e.what();
        return;
    }
    m_done.clear();
    m_calibration = engine.submit(calibration);
    m_calibrating = calibration.model.preset;
    m_phase = Phase::Calibrating;
}

void StudyView::start(ViewContext& ctx, const std::string& device, const std::string& budget) {
    m_device = device;
    std::snprintf(m_budget, sizeof(m_budget), "%s", budget.c_str());
    plan(ctx, false);
    m_runWhenPlanned = m_phase == Phase::Calibrating;
}

void StudyView::openFolder(ViewContext& ctx, const fs::path& dir) {
    if (busy()) {
        ctx.report("the study in progress must end, or be cancelled, before another opens", true);
        return;
    }
    m_dir = dir;
    plan(ctx, true);
    if (!m_message.empty()) {
        m_phase = Phase::Idle;
        ctx.report("cannot open the study: " + m_message, true);
        return;
    }
    const bool allRun = std::all_of(m_plan.runs.begin(), m_plan.runs.end(),
                                    [&](const auto& run) { return m_done.count(run.id) > 0; });
    if (allRun && (!m_plan.lab || fs::exists(m_dir / "lab.json"))) {
        m_phase = Phase::Done;
        refreshReport(ctx, true); // its report with its charts, as the study's end wrote it
    }
    ctx.report("opened the study in " + dir.string() + " (" + std::to_string(m_done.size()) +
                   " of " + std::to_string(m_plan.runs.size()) + " runs done)",
               false);
}

bool StudyView::busy() const {
    return m_phase == Phase::Calibrating || m_phase == Phase::Running || m_phase == Phase::Lab;
}

void StudyView::submitNext(ViewContext& ctx) {
    if (m_cancelled) {
        m_phase = Phase::Planned;
        return;
    }
    for (const auto& run : m_plan.runs) {
        if (!m_done.count(run.id)) {
            m_running[ctx.session.submit(run.config)] = run.id;
            m_phase = Phase::Running;
            return;
        }
    }
    if (m_plan.lab && !fs::exists(m_dir / "lab.json")) {
        m_lab = PrecisionLab{};
        m_lab.dtypes.resize(2);
        AccumulationRequest accumulate;
        accumulate.device = m_request.device;
        m_labs[ctx.session.submitLab(accumulate)] = 0;
        size_t slot = 1;
        for (Precision p : {Precision::Fp16, Precision::Bf16}) {
            DtypeRequest dtypes;
            dtypes.device = m_request.device;
            dtypes.precision = p;
            m_labs[ctx.session.submitLab(dtypes)] = slot++;
        }
        m_labPending = 3;
        m_phase = Phase::Lab;
        return;
    }
    refreshReport(ctx, true);
    m_phase = Phase::Done;
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
    for (const auto& event : events) {
        if (const auto* fin = std::get_if<RunFinished>(&event)) {
            if (fin->runIndex == m_calibration) {
                m_calibration = -1;
                const auto point = calibratedRate(fin->result, m_message);
                if (!point) {
                    m_phase = Phase::Idle;
                    m_runWhenPlanned = false;
                    continue;
                }
                m_request.rates.push_back(*point);
                if (const auto next = nextCalibrationRun(m_request)) { // a larger size's point
                    m_calibration = ctx.session.submit(*next);
                    m_calibrating = next->model.preset;
                    continue;
                }
                m_plan = planStudy(m_request);
                try {
                    saveStudyPlan(m_dir, m_request, m_plan,
                                  ctx.session.environment(m_request.device));
                } catch (const std::exception& e) { // a full disk: nothing runs unrecorded
                    m_message = e.what();
                    m_phase = Phase::Idle;
                    m_runWhenPlanned = false;
                    continue;
                }
                m_phase = Phase::Planned;
                if (std::exchange(m_runWhenPlanned, false)) {
                    submitNext(ctx);
                }
            } else if (auto it = m_running.find(fin->runIndex); it != m_running.end()) {
                RunResult result = fin->result;
                result.id = it->second;
                m_running.erase(it);
                try {
                    appendRunJsonl(m_dir / "runs.jsonl", result);
                } catch (const std::exception& e) {
                    m_message = e.what();
                }
                m_done.insert(result.id);
                m_cancelled = m_cancelled || result.status == RunStatus::Cancelled;
                refreshReport(ctx);
                submitNext(ctx);
            }
        } else if (const auto* lab = std::get_if<LabFinished>(&event)) {
            if (auto it = m_labs.find(lab->labIndex); it != m_labs.end()) {
                if (it->second == 0) {
                    m_lab.accumulation = std::get<AccumulationReport>(lab->report);
                } else {
                    m_lab.dtypes[it->second - 1] = std::get<DtypeReport>(lab->report);
                }
                m_labs.erase(it);
                if (--m_labPending == 0) {
                    ResultSet set;
                    set.environment = ctx.session.environment(m_request.device);
                    set.tool = toolInfo();
                    set.precisionLab = m_lab;
                    try {
                        saveResultSetAtomic(set, m_dir / "lab.json");
                    } catch (const std::exception& e) {
                        m_message = e.what();
                    }
                    refreshReport(ctx, true);
                    m_phase = Phase::Done;
                }
            }
        }
    }
}

void StudyView::drawPlan() {
    ImGui::Text("%zu runs%s, about %s of a %s budget", m_plan.runs.size(),
                m_plan.lab ? " and the precision lab" : "",
                formatStudyTime(m_plan.estimateS()).c_str(),
                formatStudyTime(m_request.budgetS).c_str());
    const size_t done = m_done.size();
    ImGui::ProgressBar(
        m_plan.runs.empty() ? 0.0f
                            : static_cast<float>(done) / static_cast<float>(m_plan.runs.size()),
        ImVec2(-1, 0),
        (std::to_string(done) + " of " + std::to_string(m_plan.runs.size()) + " runs").c_str());
    for (StudySection s : kStudySections) {
        size_t n = 0, finished = 0;
        for (const auto& run : m_plan.runs) {
            if (run.section == s) {
                ++n;
                finished += m_done.count(run.id);
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
    for (const auto& c : m_plan.cuts) {
        ImGui::TextDisabled("cut: %s", c.c_str());
    }
    for (const auto& l : m_plan.leftOut) {
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
    ImGui::BeginDisabled(m_phase != Phase::Planned || ctx.session.busy());
    const bool started = !m_done.empty() && m_done.size() < m_plan.runs.size();
    if (ImGui::Button(started ? "Resume" : "Run")) {
        m_cancelled = false;
        submitNext(ctx);
    }
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!busy);
    if (ImGui::Button("Cancel")) {
        m_cancelled = true;
        ctx.session.cancel();
    }
    ImGui::EndDisabled();
    if (!m_dir.empty()) {
        ImGui::TextDisabled("folder: %s", m_dir.c_str());
    }
    if (!m_message.empty()) {
        ImGui::TextColored(ImVec4(0.9f, 0.4f, 0.3f, 1.0f), "%s", m_message.c_str());
    }
    switch (m_phase) {
    case Phase::Idle:
        ImGui::TextDisabled("Plan the study for a device and a budget; it runs through the "
                            "engine, local or connected.");
        break;
    case Phase::Calibrating:
        ImGui::Text("calibrating on %s: a few training steps of %s ...", m_request.device.c_str(),
                    m_calibrating.c_str());
        break;
    case Phase::Lab:
        ImGui::Text("the precision lab ...");
        [[fallthrough]];
    default:
        drawPlan();
    }
    if (m_phase == Phase::Done && m_report) {
        ImGui::Checkbox("Show report", &m_showReport);
        ImGui::SameLine();
        ImGui::TextDisabled("%s", (m_dir / "report.md").c_str());
        if (m_showReport) {
            if (ImGui::BeginChild("##report", ImVec2(0, ImGui::GetFontSize() * 20),
                                  ImGuiChildFlags_Borders)) {
                ImGui::TextUnformatted(m_report->markdown.c_str());
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
