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
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#include "lmprof/engine/study_driver.h"
#ifdef LMPROF_STUDY_CHARTS
#include "lmprof/ui/study_charts.h"
#endif

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

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

// What a study says on stderr as it goes (unless --quiet): each calibration run, each run
// with its place in the plan and the time left, a run that did not end ok, the lab.
StudyDriver::Listener progressLines(bool quiet) {
    if (quiet) {
        return {};
    }
    return [](StudyDriver::Change change, const StudyDriver& study) {
        switch (change) {
        case StudyDriver::Change::Calibrating: {
            const RunConfig& run = study.calibrating();
            std::fprintf(stderr, "study: calibrating on %s (%s, %d steps)\n",
                         study.request().device.c_str(), run.model.preset.c_str(),
                         run.warmupSteps + run.measureSteps);
            break;
        }
        case StudyDriver::Change::RunStarted: {
            const auto& runs = study.studyPlan().runs;
            const StudyRun& run = *study.current();
            const size_t index = static_cast<size_t>(&run - runs.data()) + 1;
            size_t inSection = 0, ofSection = 0;
            for (const auto& r : runs) {
                if (r.section == run.section) {
                    ++ofSection;
                    inSection += &r <= &run ? 1 : 0;
                }
            }
            std::fprintf(stderr, "study [%zu/%zu, %s %zu/%zu, about %s left] %s\n", index,
                         runs.size(), std::string(toString(run.section)).c_str(), inSection,
                         ofSection, formatStudyTime(study.estimateLeftS()).c_str(), run.id.c_str());
            break;
        }
        case StudyDriver::Change::RunEnded:
            if (const RunResult& r = study.lastResult(); !studyRunDone(r)) {
                std::fprintf(stderr, "study: %s was %s; a resume runs it again\n", r.id.c_str(),
                             std::string(toString(r.status)).c_str());
            } else if (r.status != RunStatus::Ok) {
                std::fprintf(stderr, "study: %s ended %s: %s (kept as data)\n", r.id.c_str(),
                             std::string(toString(r.status)).c_str(), r.error.value_or("").c_str());
            }
            break;
        case StudyDriver::Change::LabStarted:
            std::fprintf(stderr, "study: the precision lab\n");
            break;
        default:
            break;
        }
    };
}

// Passes the engine's events to the study until it is no longer busy; Ctrl+C cancels the
// run in flight (kept, as cancelled) and stops the study where --resume continues it.
void drive(SessionInterface& engine, StudyDriver& study) {
    driveUntilIdle(
        engine, "the current run", [&] { return study.busy(); },
        [&](std::vector<SessionEvent>& events) { study.observe(engine, events); },
        [&] { study.cancel(); });
}

// Plans the study on the driver: the saved one with --resume (when DIR has a plan), else one
// made for this engine, budget and device, with its rates calibrated (or --rate's). false,
// with `code` set after saying why, when the saved plan cannot be read, the engine cannot
// run its device, or the calibration failed.
bool planOn(SessionInterface& engine, StudyDriver& study, const StudyOptions& o, double budget,
            int& code) {
    const fs::path dir = o.out;
    code = kExitUsage;
    if (o.resume && fs::exists(dir / "plan.json")) {
        std::optional<ConfigError> refusal;
        if (!study.resume(engine, dir, &refusal)) {
            std::cerr << "lmprof-cli study: " << (refusal ? "--resume: " : "") << study.message()
                      << (refusal ? "; resume it on that machine, or from here with --connect "
                                    "HOST:PORT to an lmprof-cli serve there"
                                  : "")
                      << "\n";
            return false;
        }
        return true;
    }
    // The engine's bounds first (its devices, its cores), before anything is measured.
    RunConfig probe;
    probe.device = o.device;
    probe.threads = o.threads;
    if (auto refusal = engine.checkRunnable(probe)) {
        std::cerr << "lmprof-cli study: --" << refusal->field << ": " << refusal->reason << "\n";
        return false;
    }
    StudyRequest request = studyRequestFor(engine, o.device, budget, o.threads);
    if (o.rate > 0.0) {
        request.rates = {StudyRate::constant(o.rate)};
    }
    study.plan(engine, std::move(request), o.dryRun ? fs::path() : dir);
    drive(engine, study);
    if (study.phase() != StudyDriver::Phase::Planned) {
        std::cerr << "lmprof-cli study: " << study.message() << "\n";
        code = kExitFailure;
        return false;
    }
    return true;
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
        return kExitFailure; // said why: no engine here, or a server that did not answer
    }
    StudyDriver study(progressLines(o.quiet));
    int refused = kExitOk;
    if (!planOn(*engine, study, o, *budget, refused)) {
        return refused;
    }
    printPlan(study.studyPlan(), study.request());
    if (o.dryRun) {
        return kExitOk;
    }
    if (!interrupted()) { // Ctrl+C as the plan was made: nothing runs
        study.run(*engine);
    }
    drive(*engine, study);
    if (interrupted()) {
        std::fprintf(stderr,
                     "study: interrupted; the finished runs are in %s: --resume "
                     "continues\n",
                     (dir / "runs.jsonl").c_str());
        return kExitFailure;
    }
    if (!study.message().empty()) {
        std::cerr << "lmprof-cli study: " << study.message() << "\n";
        return kExitFailure;
    }
    held.reset(); // the report takes the folder in turn
    return writeReport(dir, "lmprof-cli study --report " + dir.string());
}

} // namespace

CliCommand studyEntry() {
    return {"study", "the whole CS336 systems study for this device and budget, and its write-up",
            true, [](CLI::App& cmd) {
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
