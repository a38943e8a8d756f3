// lmprof-cli study (docs/STUDY.md): the seeds' whole study for the device and the budget at
// hand, run section by section into DIR/runs.jsonl (resumable: a finished run is never run
// again), then written up as DIR/report.md with each table as CSV beside it.
//   lmprof-cli study --out DIR [--device D] [--budget 20m] [--dry-run] [--resume]
//   lmprof-cli study --report DIR      (the write-up again, from the saved runs alone)
#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/file_io.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#ifdef LMPROF_STUDY_CHARTS
#include "lmprof/ui/study_charts.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

namespace lmprof::app {

using namespace engine;
namespace fs = std::filesystem;

namespace {

struct StudyOptions {
    std::string plan{kStudyPlanName};
    std::string device = "auto";
    std::string budget = "20m";
    std::string out;
    std::string report; // --report DIR
    bool dryRun = false;
    bool resume = false;
    bool quiet = false;
    int threads = 0;
    double rate = 0.0; // --rate: FLOP/s to plan with instead of a calibration run
    std::string connect;
    std::string tokenFile;
};

// Short training runs measure the device's rate at a size or two (nextCalibrationRun) for
// the estimates; false, the reason said, when one of them fails.
bool calibrate(SessionInterface& engine, StudyRequest& r, bool quiet) {
    while (const auto run = nextCalibrationRun(r)) {
        if (!quiet) {
            std::fprintf(stderr, "study: calibrating on %s (%s, %d steps)\n", r.device.c_str(),
                         run->model.preset.c_str(), run->warmupSteps + run->measureSteps);
        }
        const auto runs = runAll(engine, {*run}, true, false, {});
        std::string why = "the calibration run failed: interrupted";
        const auto point = runs.empty() ? std::nullopt : calibratedRate(runs.front(), why);
        if (!point) {
            std::cerr << "lmprof-cli study: " << why << "\n";
            return false;
        }
        r.rates.push_back(*point);
    }
    return true;
}

void printPlan(const StudyPlan& plan, const StudyRequest& r) {
    std::printf("study %s on %s: %zu runs%s, about %s of a %s budget\n",
                std::string(kStudyPlanName).c_str(), r.device.c_str(), plan.runs.size(),
                plan.lab ? " and the precision lab" : "", formatStudyTime(plan.estimateS()).c_str(),
                formatStudyTime(r.budgetS).c_str());
    for (StudySection s : kStudySections) {
        double total = 0.0;
        size_t n = 0;
        for (const auto& run : plan.runs) {
            if (run.section == s) {
                total += run.estimateS, ++n;
            }
        }
        std::printf("  %-14s %2zu run(s)  %8s\n", std::string(toString(s)).c_str(), n,
                    formatStudyTime(total).c_str());
        for (const auto& run : plan.runs) {
            if (run.section == s) {
                std::printf("      %-52s %8s\n", run.id.c_str(),
                            formatStudyTime(run.estimateS).c_str());
            }
        }
    }
    if (plan.lab) {
        std::printf("  %-14s %8s\n", "precision lab", formatStudyTime(plan.labEstimateS).c_str());
    }
    for (const auto& c : plan.cuts) {
        std::printf("  cut: %s\n", c.c_str());
    }
    for (const auto& l : plan.leftOut) {
        std::printf("  left out: %s\n", l.c_str());
    }
}

// The write-up from DIR's saved runs, lab and plan: report.md and a CSV per table.
int writeReport(const fs::path& dir, const std::string& command) {
    try {
        // The report's files go into the folder alone: no link in it, no second writer.
        std::error_code ec;
        if (!fs::is_directory(fs::symlink_status(dir, ec))) {
            std::cerr << "lmprof-cli study: " << dir.string() << " is not a study's folder\n";
            return kExitUsage;
        }
        const auto held = openStudyFolder(dir);
#ifdef LMPROF_STUDY_CHARTS
        const StudyChartDrawer drawCharts = ui::drawStudyChartsHeadless;
#else
        const StudyChartDrawer drawCharts; // built without the chart renderer: the report says so
#endif
        const StudyReport report = writeStudyFolder(dir, command, drawCharts);
        std::fprintf(stderr, "study: wrote %s, %zu table(s) and %zu chart(s)\n",
                     (dir / "report.md").c_str(), report.tables.size(),
                     report.chartsMissing.empty() ? report.charts.size() : size_t{0});
        if (!report.chartsMissing.empty()) {
            std::fprintf(stderr, "study: charts not drawn: %s\n", report.chartsMissing.c_str());
        }
        return kExitOk;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli study: " << e.what() << "\n";
        return kExitUsage;
    }
}

// The study's request: the saved one with --resume, else one made for this engine, budget
// and device, with its rates calibrated (or --rate's). nullopt, with `code` set after saying
// why, when the saved plan cannot be read or the engine cannot run its device.
std::optional<StudyRequest> studyRequestOf(SessionInterface& engine, const StudyOptions& o,
                                           double budget, int& code) {
    const fs::path dir = o.out;
    std::optional<StudyRequest> saved;
    try {
        saved = o.resume ? loadStudyRequest(dir) : std::nullopt;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli study: " << e.what() << "\n";
        code = kExitUsage;
        return std::nullopt;
    }
    // The engine's bounds first (its devices, its cores), before anything is measured. A
    // saved plan is for its device: resumed where that device is missing, every run would
    // end as an error and the study's machine would be overwritten.
    RunConfig probe;
    probe.device = saved ? saved->device : o.device;
    probe.threads = saved ? saved->threads : o.threads;
    if (auto refusal = engine.checkRunnable(probe)) {
        if (saved) {
            std::cerr << "lmprof-cli study: --resume: " << dir.string() << " was planned for "
                      << saved->device << ", which this engine cannot run (" << refusal->message()
                      << "); resume it on that machine, or from here "
                      << "with --connect HOST:PORT to an lmprof-cli serve there\n";
        } else {
            std::cerr << "lmprof-cli study: --" << refusal->field << ": " << refusal->reason
                      << "\n";
        }
        code = kExitUsage;
        return std::nullopt;
    }
    if (saved) {
        return saved;
    }
    StudyRequest request = studyRequestFor(engine, o.device, budget, o.threads);
    if (o.rate > 0.0) {
        request.rates = {StudyRate::constant(o.rate)};
    } else if (!calibrate(engine, request, o.quiet)) {
        code = kExitFailure;
        return std::nullopt;
    }
    return request;
}

// The plan's runs not in runs.jsonl yet, one at a time, each appended as it ends (an OOM is
// data); stops at Ctrl+C.
void runPlannedRuns(SessionInterface& engine, const StudyPlan& plan, const fs::path& dir,
                    bool quiet) {
    // What is done already: every run in runs.jsonl, whatever its outcome (an OOM is data).
    std::set<std::string> done = finishedStudyRuns(dir);
    const auto start = std::chrono::steady_clock::now();
    double plannedLeft = 0.0;
    for (const auto& run : plan.runs) {
        plannedLeft += done.count(run.id) ? 0.0 : run.estimateS;
    }
    size_t index = 0;
    for (const auto& run : plan.runs) {
        ++index;
        if (done.count(run.id)) {
            continue;
        }
        if (interrupted()) {
            break;
        }
        if (!quiet) {
            size_t inSection = 0, ofSection = 0;
            for (const auto& r : plan.runs) {
                if (r.section == run.section) {
                    ++ofSection;
                    inSection += &r <= &run ? 1 : 0;
                }
            }
            const double spent =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::fprintf(stderr, "study [%zu/%zu, %s %zu/%zu, about %s left] %s\n", index,
                         plan.runs.size(), std::string(toString(run.section)).c_str(), inSection,
                         ofSection, formatStudyTime(std::max(0.0, plannedLeft - spent)).c_str(),
                         run.id.c_str());
        }
        auto results = runAll(engine, {run.config}, true, false, {});
        if (results.empty()) {
            break; // interrupted before it started
        }
        RunResult& result = results.front();
        result.id = run.id;
        appendRunJsonl(dir / "runs.jsonl", result);
        done.insert(run.id);
        if (!quiet && result.status != RunStatus::Ok) {
            std::fprintf(stderr, "study: %s ended %s: %s (kept as data)\n", run.id.c_str(),
                         std::string(toString(result.status)).c_str(),
                         result.error.value_or("").c_str());
        }
    }
}

// The precision lab of the study (the accumulation experiment, and the ToyModel's dtypes in
// fp16 and bf16) into lab.json, unless it is there already or Ctrl+C was pressed.
void runStudyLab(SessionInterface& engine, const std::string& device, const Environment& env,
                 const fs::path& dir, bool quiet) {
    if (interrupted() || fs::exists(dir / "lab.json")) {
        return;
    }
    if (!quiet) {
        std::fprintf(stderr, "study: the precision lab\n");
    }
    PrecisionLab lab;
    AccumulationRequest accumulate;
    accumulate.device = device;
    lab.accumulation = std::get<AccumulationReport>(runOnEngine(engine, accumulate));
    for (Precision p : {Precision::Fp16, Precision::Bf16}) {
        DtypeRequest dtypes;
        dtypes.device = device;
        dtypes.precision = p;
        lab.dtypes.push_back(std::get<DtypeReport>(runOnEngine(engine, dtypes)));
    }
    if (!interrupted()) {
        ResultSet set = makeSet({}, device, &env);
        set.precisionLab = std::move(lab);
        saveResultSetAtomic(set, dir / "lab.json");
    }
}

int studyCommand(const StudyOptions& o) {
    if (!o.report.empty()) {
        return writeReport(o.report, "lmprof-cli study --report " + o.report);
    }
    if (o.plan != kStudyPlanName) {
        std::cerr << "lmprof-cli study: --plan: '" << o.plan << "' is not a plan (there is "
                  << kStudyPlanName << ")\n";
        return kExitUsage;
    }
    const auto budget = parseStudyBudget(o.budget);
    if (!budget) {
        std::cerr << "lmprof-cli study: --budget: '" << o.budget
                  << "' is not a time (e.g. 20m, 90s, 1h)\n";
        return kExitUsage;
    }
    if (o.out.empty() && !o.dryRun) {
        std::cerr << "lmprof-cli study: --out DIR is required (where the runs and report go)\n";
        return kExitUsage;
    }
    const fs::path dir = o.out;
    // The folder is checked and held before anything is measured: a path error is a usage
    // error (exit 2) with its reason, never an abort after the calibration run.
    std::unique_ptr<StudyFolderLock> held;
    if (!o.dryRun) {
        try {
            held = openStudyFolder(dir);
        } catch (const std::exception& e) {
            std::cerr << "lmprof-cli study: --out: " << e.what() << "\n";
            return kExitUsage;
        }
    }
    const bool started = !o.out.empty() && fs::exists(dir / "runs.jsonl");
    if (started && !o.resume && !o.dryRun) {
        std::cerr << "lmprof-cli study: " << dir.string()
                  << " holds a study already: --resume continues it (finished runs are kept), "
                     "or choose another --out\n";
        return kExitUsage;
    }
    const auto engine = openEngine(o.connect, o.tokenFile, o.quiet);
    if (!engine) {
        return kExitUsage;
    }
    int refused = kExitOk;
    const auto request = studyRequestOf(*engine, o, *budget, refused);
    if (!request) {
        return refused;
    }
    const StudyPlan plan = planStudy(*request);
    printPlan(plan, *request);
    if (o.dryRun) {
        return kExitOk;
    }
    const Environment env = engine->environment(request->device);
    saveStudyPlan(dir, *request, plan, env);

    runPlannedRuns(*engine, plan, dir, o.quiet);
    if (plan.lab) {
        runStudyLab(*engine, request->device, env, dir, o.quiet);
    }
    if (interrupted()) {
        std::fprintf(stderr,
                     "study: interrupted; the finished runs are in %s: --resume "
                     "continues\n",
                     (dir / "runs.jsonl").c_str());
        return kExitFailure;
    }
    held.reset(); // the report takes the folder in turn
    return writeReport(dir, "lmprof-cli study --report " + dir.string());
}

} // namespace

CliCommand studyEntry() {
    return {"study", "the seeds' whole study for this device and budget, and its write-up", true,
            [](CLI::App& cmd) {
                auto o = std::make_shared<StudyOptions>();
                addText(cmd, "--plan", o->plan, "the study to run [cs336-systems]");
                addText(cmd, "--device", o->device, "auto|cpu|cuda[:i]");
                addText(cmd, "--budget", o->budget, "the time to spend, e.g. 20m, 90s, 1h [20m]");
                addText(cmd, "--out", o->out, "the study's folder: runs.jsonl, report.md, CSV");
                addText(cmd, "--report", o->report,
                        "write DIR's report again from its saved runs, and run nothing");
                cmd.add_flag("--dry-run", o->dryRun, "print the plan and its cuts, run nothing");
                cmd.add_flag("--resume", o->resume,
                             "continue the study in --out, skipping "
                             "finished runs");
                addNumberIn(cmd, "--threads", o->threads, 0, 4096,
                            "CPU intra-op threads (0: LibTorch default; at most the engine's "
                            "CPU count)");
                addNumberIn(cmd, "--rate", o->rate, 1e6, 1e18,
                            "plan for this training rate in FLOP/s, every size alike, instead "
                            "of calibrating, so the same budget plans the same runs");
                cmd.add_flag("--quiet,-q", o->quiet, "no progress lines on stderr");
                addConnectOptions(cmd, o->connect, o->tokenFile);
                return std::function<int()>([o] {
                    try {
                        return studyCommand(*o);
                    } catch (const std::exception& e) { // a file that failed mid-study
                        std::cerr << "lmprof-cli study: " << e.what() << "\n";
                        return kExitFailure;
                    }
                });
            }};
}

} // namespace lmprof::app
