// A study's folder (study.h, docs/STUDY.md): its plan, its runs, its lab and its write-up.

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace lmprof::engine {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uintmax_t kMaxPlanBytes = 1 << 20;

json readPlan(const fs::path& dir) {
    try {
        return json::parse(readInputFile(dir / "plan.json", kMaxPlanBytes));
    } catch (const json::exception& e) {
        throw ResultFormatError((dir / "plan.json").string() + ": " + e.what());
    }
}

} // namespace

void saveStudyPlan(const fs::path& dir, const StudyRequest& r, const StudyPlan& plan,
                   const Environment& env) {
    fs::create_directories(dir);
    const json j = {{"plan", std::string(kStudyPlanName)},
                    {"request",
                     {{"device", r.device},
                      {"cuda", r.cuda},
                      {"gpus", r.gpus},
                      {"memory_bytes", r.memoryBytes},
                      {"flops_per_s", r.flopsPerS},
                      {"budget_s", r.budgetS},
                      {"threads", r.threads}}},
                    {"cuts", plan.cuts},
                    {"left_out", plan.leftOut},
                    {"device_name", env.device.name},
                    {"driver", env.driver.value_or("")},
                    {"torch", env.torch},
                    {"commit", toolInfo().git},
                    {"created", utcNow()}};
    writeFileAtomic(dir / "plan.json", j.dump(2) + "\n");
}

std::optional<StudyRequest> loadStudyRequest(const fs::path& dir) {
    if (!fs::exists(dir / "plan.json")) {
        return std::nullopt;
    }
    try {
        const json plan = readPlan(dir);
        const json& q = plan.at("request");
        StudyRequest r;
        r.device = q.at("device").get<std::string>();
        r.cuda = q.at("cuda").get<bool>();
        r.gpus = q.at("gpus").get<int>();
        r.memoryBytes = q.at("memory_bytes").get<int64_t>();
        r.flopsPerS = q.at("flops_per_s").get<double>();
        r.budgetS = q.at("budget_s").get<double>();
        r.threads = q.at("threads").get<int>();
        return r;
    } catch (const json::exception& e) {
        throw ResultFormatError((dir / "plan.json").string() + ": " + e.what());
    }
}

std::set<std::string> finishedStudyRuns(const fs::path& dir) {
    std::set<std::string> done;
    if (fs::exists(dir / "runs.jsonl")) {
        for (const auto& r : loadRunsJsonl(dir / "runs.jsonl").runs) {
            done.insert(r.id);
        }
    }
    return done;
}

StudyReport writeStudyFolder(const fs::path& dir, const std::string& command,
                             const StudyChartDrawer& drawCharts) {
    ResultSet set;
    set.runs = loadRunsJsonl(dir / "runs.jsonl").runs;
    StudyHeader header;
    if (fs::exists(dir / "lab.json")) {
        const ResultSet lab = loadResultSet(dir / "lab.json");
        set.precisionLab = lab.precisionLab;
        header.device = lab.environment.device.name;
        header.driver = lab.environment.driver.value_or("");
        header.torch = lab.environment.torch;
        header.commit = lab.tool.git;
    }
    if (fs::exists(dir / "plan.json")) {
        try {
            const json plan = readPlan(dir);
            header.budgetS = plan.at("request").at("budget_s").get<double>();
            header.cuts = plan.at("cuts").get<std::vector<std::string>>();
            header.leftOut = plan.at("left_out").get<std::vector<std::string>>();
            header.device = plan.value("device_name", header.device);
            header.driver = plan.value("driver", header.driver);
            header.torch = plan.value("torch", header.torch);
            header.commit = plan.value("commit", header.commit);
            header.date = plan.value("created", std::string());
        } catch (const json::exception& e) {
            throw ResultFormatError((dir / "plan.json").string() + ": " + e.what());
        }
    }
    header.command = command;
    StudyReport report = writeStudyReport(set, header);
    // The charts first: a report links them only once they are drawn.
    if (!drawCharts) {
        header.chartsMissing = "this build of lmprof has no chart renderer";
    } else if (!report.charts.empty()) {
        try {
            drawCharts(set, report.charts, dir);
        } catch (const std::exception& e) {
            header.chartsMissing = e.what();
        }
    }
    if (!header.chartsMissing.empty()) {
        report = writeStudyReport(set, header);
    }
    writeFileAtomic(dir / "report.md", report.markdown);
    for (const auto& table : report.tables) {
        std::ostringstream csv;
        Rows rows{table.header};
        rows.insert(rows.end(), table.rows.begin(), table.rows.end());
        writeRows(csv, rows, ReportFormat::Csv, 1);
        writeFileAtomic(dir / table.file, csv.str());
    }
    return report;
}

} // namespace lmprof::engine
