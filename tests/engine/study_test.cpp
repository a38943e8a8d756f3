// lmprof study without running it: the plan for a device and a budget (what is cut, what the
// memory leaves out), and the write-up's sentences from result sets whose answers are known.

#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#include "lmprof/engine/sweep.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

using namespace lmprof::engine;

namespace {

StudyRequest cpu(double budgetS) {
    StudyRequest r;
    r.device = "cpu";
    r.memoryBytes = int64_t{16} << 30;
    r.rates = {StudyRate::constant(50e9)};
    r.budgetS = budgetS;
    return r;
}

size_t count(const StudyPlan& plan, StudySection s) {
    return static_cast<size_t>(std::count_if(plan.runs.begin(), plan.runs.end(),
                                             [&](const StudyRun& r) { return r.section == s; }));
}

// A finished run of a study section with these measured step times (and a warmup step).
RunResult studyRun(StudySection section, const std::string& preset, Mode mode, Precision precision,
                   std::vector<double> stepMs) {
    RunResult r;
    r.config.model = *presetModel(preset);
    r.config.mode = mode;
    r.config.precision = precision;
    r.config.warmupSteps = 1;
    r.config.measureSteps = static_cast<int>(stepMs.size());
    r.parameterCount = parameterCount(r.config.model);
    r.id = std::string(toString(section)) + "-" + runLabel(r.config);
    stepMs.insert(stepMs.begin(), stepMs.front() * 3.0);
    for (size_t i = 0; i < stepMs.size(); ++i) {
        StepRecord s;
        s.index = static_cast<int>(i);
        s.warmup = i == 0;
        s.forwardMs = stepMs[i] / 3.0;
        s.backwardMs = mode == Mode::Forward ? 0.0 : 2.0 * stepMs[i] / 3.0;
        s.totalMs = stepMs[i];
        r.steps.push_back(s);
    }
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

// A study folder of a test's own, made empty and removed at the end.
struct StudyDir {
    std::filesystem::path path;
    explicit StudyDir(const std::string& name)
        : path(std::filesystem::temp_directory_path() /
               ("lmprof_study_" + name + "_" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~StudyDir() { std::filesystem::remove_all(path); }
};

} // namespace

// With time to spare every section is planned and nothing is cut; the estimate is the runs'.
TEST(Study, AGenerousBudgetPlansEverySectionAndCutsNothing) {
    const StudyPlan plan = planStudy(cpu(3600.0 * 24));
    EXPECT_TRUE(plan.cuts.empty());
    EXPECT_TRUE(plan.leftOut.empty());
    for (StudySection s : kStudySections) {
        EXPECT_GT(count(plan, s), 0u) << toString(s);
    }
    EXPECT_EQ(count(plan, StudySection::Warmup), 4u); // the seeds' 0, 1, 2, 5
    EXPECT_LE(plan.estimateS(), 3600.0 * 24);
    for (const auto& run : plan.runs) {
        EXPECT_TRUE(validate(run.config).empty())
            << run.id << ": " << describe(validate(run.config));
        EXPECT_EQ(sectionOf(RunResult{run.id}), run.section) << run.id;
    }
    // Ids are unique: they are what --resume skips by.
    for (size_t i = 0; i < plan.runs.size(); ++i) {
        for (size_t j = i + 1; j < plan.runs.size(); ++j) {
            EXPECT_NE(plan.runs[i].id, plan.runs[j].id);
        }
    }
}

// A tight budget scales the plan down and names every cut; the estimate then fits, or the
// last cut says by how much the smallest plan is over.
TEST(Study, ATightBudgetIsMetByNamedCuts) {
    const StudyPlan full = planStudy(cpu(3600.0 * 24));
    for (double budget : {600.0, 120.0, 30.0, 1.0}) {
        const StudyPlan plan = planStudy(cpu(budget));
        if (full.estimateS() > budget) {
            EXPECT_FALSE(plan.cuts.empty()) << budget;
        }
        if (plan.estimateS() > budget) {
            ASSERT_FALSE(plan.cuts.empty());
            EXPECT_NE(plan.cuts.back().find("over the budget"), std::string::npos)
                << plan.cuts.back();
        }
        EXPECT_LE(plan.runs.size(), full.runs.size());
    }
}

// On a GPU the seeds' five sizes; what the device's memory cannot hold is left out, each
// with the memory model's figure, never silently.
TEST(Study, TheMemoryModelLeavesOutWhatTheDeviceCannotHold) {
    StudyRequest gpu;
    gpu.device = "cuda:0";
    gpu.cuda = true;
    gpu.gpus = 1;
    gpu.memoryBytes = int64_t{16} << 30;
    gpu.rates = {StudyRate::constant(100e12)};
    gpu.budgetS = 3600.0 * 24;
    const StudyPlan plan = planStudy(gpu);
    ASSERT_FALSE(plan.leftOut.empty());
    EXPECT_NE(plan.leftOut.front().find("the memory model predicts"), std::string::npos);
    for (const auto& run : plan.runs) {
        EXPECT_NE(run.config.model.preset, "2.7B") << run.id << " would not fit in 16 GiB";
    }
    gpu.memoryBytes = int64_t{80} << 30;
    const StudyPlan big = planStudy(gpu);
    EXPECT_LT(big.leftOut.size(), plan.leftOut.size());
    EXPECT_EQ(count(big, StudySection::Variants), 4u); // naive/sdpa × eager/graphs
}

// Sentences come from the data: where bf16 is slower the write-up says slower, where it is
// faster it says faster, and an interval that straddles 1 is "cannot be told apart".
TEST(Study, TheWriteUpSaysWhatTheNumbersSay) {
    ResultSet set;
    set.runs = {
        studyRun(StudySection::Sizes, "tiny", Mode::ForwardBackward, Precision::Fp32,
                 {10.0, 10.2, 9.9, 10.1, 10.0}),
        studyRun(StudySection::Precision, "tiny", Mode::ForwardBackward, Precision::Bf16,
                 {14.0, 14.3, 13.8, 14.1, 14.0}),
        studyRun(StudySection::Sizes, "small", Mode::ForwardBackward, Precision::Fp32,
                 {40.0, 40.5, 39.6, 40.2, 40.0}),
        studyRun(StudySection::Precision, "small", Mode::ForwardBackward, Precision::Bf16,
                 {20.0, 20.1, 19.9, 20.2, 20.0}),
    };
    StudyHeader header;
    header.device = "a test machine";
    header.driver = "580.65.06";
    const StudyReport report = writeStudyReport(set, header);
    const std::string& md = report.markdown;
    EXPECT_NE(md.find("- Device: a test machine, driver 580.65.06"), std::string::npos) << md;
    EXPECT_NE(md.find("For tiny a bf16 forward-backward step takes 1.40"), std::string::npos) << md;
    EXPECT_NE(md.find("bf16 is slower"), std::string::npos) << md;
    EXPECT_NE(md.find("bf16 is faster"), std::string::npos) << md;
    EXPECT_NE(md.find("faster for 1, slower for 1"), std::string::npos) << md;
    // Every section is there, a missing one says so.
    for (StudySection s : kStudySections) {
        EXPECT_NE(md.find(std::string("## ") + std::string(sectionTitle(s))), std::string::npos)
            << toString(s);
    }
    EXPECT_NE(md.find("No runs of this section"), std::string::npos);
    // The precision table's cells are the runs' figures.
    const auto table = std::find_if(report.tables.begin(), report.tables.end(),
                                    [](const StudyTable& t) { return t.file == "precision.csv"; });
    ASSERT_NE(table, report.tables.end());
    ASSERT_EQ(table->rows.size(), 2u);
    EXPECT_EQ(table->rows[0][0], "tiny");
    EXPECT_EQ(table->rows[0][4], "slower");
    EXPECT_EQ(table->rows[1][4], "faster");
    // Byte-identical for the same data.
    EXPECT_EQ(writeStudyReport(set, header).markdown, md);

    // Each section with runs has its chart, of its runs in the table's order, linked.
    const auto chart = [&](const StudyReport& r, const std::string& file) {
        const auto it = std::find_if(r.charts.begin(), r.charts.end(),
                                     [&](const StudyChart& c) { return c.file == file; });
        return it == r.charts.end() ? nullptr : &*it;
    };
    ASSERT_EQ(report.charts.size(), 2u);
    ASSERT_NE(chart(report, "sizes.png"), nullptr);
    EXPECT_EQ(chart(report, "sizes.png")->chart, "step-times");
    EXPECT_EQ(chart(report, "sizes.png")->runs,
              (std::vector<std::string>{set.runs[0].id, set.runs[2].id}));
    ASSERT_NE(chart(report, "precision.png"), nullptr);
    EXPECT_EQ(
        chart(report, "precision.png")->runs,
        (std::vector<std::string>{set.runs[0].id, set.runs[1].id, set.runs[2].id, set.runs[3].id}));
    EXPECT_NE(md.find("](sizes.png)"), std::string::npos) << md;
    // Charts that could not be drawn are not linked, and the header says why.
    header.chartsMissing = "no OpenGL here";
    const StudyReport undrawn = writeStudyReport(set, header);
    EXPECT_NE(undrawn.markdown.find("- Charts: not drawn (no OpenGL here)"), std::string::npos);
    EXPECT_EQ(undrawn.markdown.find(".png)"), std::string::npos) << undrawn.markdown;
    EXPECT_EQ(undrawn.charts.size(), 2u);
    header.chartsMissing.clear();

    // Within noise: the same times give no verdict either way.
    set.runs[1] = studyRun(StudySection::Precision, "tiny", Mode::ForwardBackward, Precision::Bf16,
                           {10.1, 9.8, 10.2, 10.0, 9.9});
    const std::string same = writeStudyReport(set, header).markdown;
    EXPECT_NE(same.find("the two cannot be told apart"), std::string::npos) << same;
    EXPECT_EQ(same.find("bf16 is slower"), std::string::npos) << same;
}

// A folder's runs are data, whatever they hold: a sizes run in a mode the section does not
// read, a data-parallel run without its ddp block. The report says so; it does not crash
// or make figures up (it once dereferenced a null run and an empty ddp block).
TEST(Study, RunsThatContradictTheirSectionAreSaidNotTrusted) {
    ResultSet set;
    set.runs = {
        studyRun(StudySection::Sizes, "tiny", Mode::Train, Precision::Fp32, {10, 11}),
        studyRun(StudySection::DataParallel, "tiny", Mode::Train, Precision::Fp32, {12, 13})};
    set.runs[1].id = "data-parallel-naive-2";
    ASSERT_FALSE(set.runs[1].config.ddp);
    const StudyReport report = writeStudyReport(set, StudyHeader{});
    const std::string& md = report.markdown;
    EXPECT_NE(md.find("tiny: no forward or forward-backward run in this folder."),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("data-parallel-naive-2: not a data-parallel run (no ddp block)"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("0 ranks"), std::string::npos) << md;
}

// Many times slower reads as a factor, not as "by 1437.5%".
TEST(Study, ALargeSlowdownReadsAsAFactor) {
    ResultSet set;
    set.runs = {studyRun(StudySection::Sizes, "tiny", Mode::ForwardBackward, Precision::Fp32,
                         {10.0, 10.2, 9.9, 10.1}),
                studyRun(StudySection::Precision, "tiny", Mode::ForwardBackward, Precision::Bf16,
                         {153.0, 154.0, 153.5, 153.8})};
    const std::string md = writeStudyReport(set, StudyHeader{}).markdown;
    EXPECT_NE(md.find("bf16 is slower, taking 15.3\u00D7 the time."), std::string::npos) << md;
}

// A run cut short by Ctrl+C, or one that found no device (a resume on another machine), is
// not a finished run: --resume runs it again, and the report reads the run that replaced it.
TEST(Study, ACancelledRunIsRunAgainAndItsReplacementIsReported) {
    const StudyDir folder("resume");
    const std::filesystem::path& dir = folder.path;
    RunResult kept =
        studyRun(StudySection::Sizes, "tiny", Mode::Forward, Precision::Fp32, {5, 5.1, 4.9});
    RunResult oom = studyRun(StudySection::Sizes, "small", Mode::Forward, Precision::Fp32, {1});
    oom.status = RunStatus::Oom;
    oom.steps.clear();
    RunResult cut =
        studyRun(StudySection::Sizes, "tiny", Mode::ForwardBackward, Precision::Fp32, {9, 9.2});
    cut.status = RunStatus::Cancelled;
    RunResult nowhere =
        studyRun(StudySection::Sizes, "small", Mode::ForwardBackward, Precision::Fp32, {1});
    nowhere.steps.clear();
    nowhere.status = RunStatus::Error;
    nowhere.error = "device: 'cuda:0' requested but 0 CUDA device(s) are available";
    for (const RunResult& r : {kept, oom, cut, nowhere}) {
        appendRunJsonl(dir / "runs.jsonl", r);
    }
    EXPECT_EQ(finishedStudyRuns(dir), (std::set<std::string>{kept.id, oom.id}));
    RunResult again = studyRun(StudySection::Sizes, "tiny", Mode::ForwardBackward, Precision::Fp32,
                               {12, 12.3, 12.0});
    appendRunJsonl(dir / "runs.jsonl", again);
    EXPECT_TRUE(finishedStudyRuns(dir).count(again.id));
    const std::string md = writeStudyFolder(dir, "test", {}).markdown;
    EXPECT_EQ(md.find("cancelled"), std::string::npos) << md;
    EXPECT_NE(md.find("4.03 ±"), std::string::npos) << md; // the replacement's forward
}

// A finished calibration run: its training steps took `totalMs`, their forward passes
// `forwardMs`.
static RunResult calibrated(const RunConfig& config, double forwardMs, double totalMs) {
    RunResult r;
    r.config = config;
    for (int i = 0; i < config.warmupSteps + config.measureSteps; ++i) {
        StepRecord s;
        s.index = i;
        s.warmup = i < config.warmupSteps;
        s.forwardMs = forwardMs;
        s.backwardMs = totalMs - forwardMs - 1.0;
        s.optimizerMs = 1.0;
        s.totalMs = totalMs;
        r.steps.push_back(s);
    }
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

// The calibration measures the smallest size, then a larger one where that is worth its
// time; each run is estimated at the rate of its own size (between the points on log-log
// axes, beyond them the nearest point's), and forward-only runs at the forward rate.
TEST(Study, EachSizeIsEstimatedAtTheRateCalibratedForIt) {
    StudyRequest r = cpu(180.0);
    r.rates.clear();
    const auto first = nextCalibrationRun(r);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->model.preset, "tiny");
    EXPECT_EQ(first->mode, Mode::Train);
    EXPECT_EQ(first->measureSteps, 3);
    EXPECT_EQ(first->sampleHz, 0.0);
    std::string why;
    const auto tiny = calibratedRate(calibrated(*first, 20.0, 60.0), why);
    ASSERT_TRUE(tiny) << why;
    EXPECT_DOUBLE_EQ(tiny->stepFlops, stepFlops(*first));
    EXPECT_NEAR(tiny->trainPerS, stepFlops(*first) / 0.060, 1.0);
    EXPECT_NEAR(tiny->forwardPerS, forwardFlops(*first) / 0.020, 1.0);
    r.rates.push_back(*tiny);

    StudyRequest tight = r;
    tight.budgetS = 20.0; // small's steps would cost more than a tenth of it
    EXPECT_FALSE(nextCalibrationRun(tight));
    const auto second = nextCalibrationRun(r);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->model.preset, "small");
    EXPECT_EQ(second->measureSteps, 2);
    // small runs its matrices twice as fast per FLOP as tiny, its forward passes 3x.
    const double smallStep = stepFlops(*second);
    const auto small = calibratedRate(
        calibrated(*second, 1000.0 * forwardFlops(*second) / (3.0 * tiny->forwardPerS),
                   1000.0 * smallStep / (2.0 * tiny->trainPerS)),
        why);
    ASSERT_TRUE(small) << why;
    EXPECT_NEAR(small->trainPerS / tiny->trainPerS, 2.0, 1e-9);
    EXPECT_NEAR(small->forwardPerS / tiny->forwardPerS, 3.0, 1e-9);
    r.rates.push_back(*small);
    EXPECT_FALSE(nextCalibrationRun(r)) << "two points are the calibration";

    EXPECT_DOUBLE_EQ(studyRateAt(r.rates, tiny->stepFlops / 10.0).trainPerS, tiny->trainPerS);
    EXPECT_DOUBLE_EQ(studyRateAt(r.rates, smallStep * 10.0).trainPerS, small->trainPerS);
    const double middle = std::sqrt(tiny->stepFlops * smallStep); // halfway on a log axis
    EXPECT_NEAR(studyRateAt(r.rates, middle).trainPerS / tiny->trainPerS, std::sqrt(2.0), 1e-9);
    EXPECT_NEAR(studyRateAt(r.rates, middle).forwardPerS / tiny->forwardPerS, std::sqrt(3.0), 1e-9);

    // A plan's runs of small at small's rates: ten forward-only steps (five warmup).
    RunConfig forward = *second;
    forward.mode = Mode::Forward;
    forward.warmupSteps = 5;
    forward.measureSteps = 10;
    const double fixedS =
        estimateRunSeconds(forward, r.rates) - runFlops(forward) / small->forwardPerS;
    EXPECT_GT(fixedS, 0.5);
    EXPECT_LT(fixedS, 10.0) << "the model's construction and the start";
    RunConfig train = forward;
    train.mode = Mode::Train;
    EXPECT_NEAR(estimateRunSeconds(train, r.rates) - fixedS, runFlops(train) / small->trainPerS,
                1e-6);
    const StudyPlan plan = planStudy(r);
    for (const StudyRun& run : plan.runs) {
        if (run.config.model.preset == "small" && !run.config.ddp && !run.config.opProfile) {
            EXPECT_NEAR(run.estimateS, estimateRunSeconds(run.config, r.rates), 1e-9) << run.id;
        }
    }

    EXPECT_FALSE(nextCalibrationRun([] {
        StudyRequest given = cpu(180.0); // --rate: no calibration
        return given;
    }()));
}

// A request calibrated at two points, as the test above makes it: tiny, then small at twice
// tiny's training rate and three times its forward rate.
static StudyRequest calibratedAtTwoSizes() {
    StudyRequest r = cpu(180.0);
    r.rates.clear();
    std::string why;
    const RunConfig first = *nextCalibrationRun(r);
    r.rates.push_back(*calibratedRate(calibrated(first, 20.0, 60.0), why));
    const RunConfig second = *nextCalibrationRun(r);
    r.rates.push_back(*calibratedRate(
        calibrated(second, 1000.0 * forwardFlops(second) / (3.0 * r.rates[0].forwardPerS),
                   1000.0 * stepFlops(second) / (2.0 * r.rates[0].trainPerS)),
        why));
    return r;
}

// The calibration's points survive plan.json, so a resume plans the same; a plan.json from
// before them still reads as one rate, and a rate out of range is refused by its path.
TEST(Study, TheCalibratedRatesSurvivePlanJson) {
    const StudyRequest r = calibratedAtTwoSizes();
    const StudyPlan plan = planStudy(r);
    const StudyDir folder("rates");
    saveStudyPlan(folder.path, r, plan, Environment{});
    const auto loaded = loadStudyRequest(folder.path);
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->rates.size(), 2u);
    EXPECT_DOUBLE_EQ(loaded->rates[1].forwardPerS, r.rates[1].forwardPerS);
    EXPECT_EQ(planStudy(*loaded).estimateS(), plan.estimateS()) << "a resume plans the same";
    std::ofstream(folder.path / "plan.json")
        << R"({"plan": "cs336-systems", "request": {"device": "cpu", "cuda": false, "gpus": 0,
               "memory_bytes": 1000000000, "flops_per_s": 1.2e11, "budget_s": 60,
               "threads": 0}, "cuts": [], "left_out": []})";
    const auto older = loadStudyRequest(folder.path);
    ASSERT_TRUE(older);
    ASSERT_EQ(older->rates.size(), 1u);
    EXPECT_DOUBLE_EQ(older->rates[0].trainPerS, 1.2e11);
    EXPECT_DOUBLE_EQ(older->rates[0].forwardPerS, 1.2e11 / 1.5);
    std::ofstream(folder.path / "plan.json")
        << R"({"plan": "cs336-systems", "request": {"device": "cpu", "cuda": false, "gpus": 0,
               "memory_bytes": 1000000000, "budget_s": 60, "threads": 0, "rates":
               [{"step_flops": 1e9, "train_flops_per_s": 1e11, "forward_flops_per_s": -1}]},
               "cuts": [], "left_out": []})";
    try {
        loadStudyRequest(folder.path);
        ADD_FAILURE() << "a negative forward rate was taken";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("request.rates[0].forward_flops_per_s"),
                  std::string::npos)
            << e.what();
    }
}

// A study folder is read like any input: its damaged lines are named in the report's
// header, its plan.json is checked field by field, and what it says is shown as text,
// never as Markdown of its own (a run id cannot add a heading or an image).
TEST(Study, AFoldersFilesAreCheckedNamedAndEscaped) {
    const StudyDir folder("hostile");
    const std::filesystem::path& dir = folder.path;
    RunResult odd =
        studyRun(StudySection::DataParallel, "tiny", Mode::Train, Precision::Fp32, {3, 3.1});
    odd.id = "data-parallel-x\n# Owned ![pixel](http://example.invalid/p.png)";
    appendRunJsonl(dir / "runs.jsonl", odd);
    { std::ofstream(dir / "runs.jsonl", std::ios::app) << "{\"not\": \"a run\"}\n"; }
    const std::string md = writeStudyFolder(dir, "test", {}).markdown;
    EXPECT_NE(md.find("- Damaged, skipped"), std::string::npos) << md;
    EXPECT_NE(md.find("runs.jsonl line 2"), std::string::npos) << md;
    EXPECT_EQ(md.find("\n# Owned"), std::string::npos) << md;
    EXPECT_EQ(md.find("![pixel]"), std::string::npos) << md;
    EXPECT_NE(md.find("\\# Owned \\!\\[pixel\\]"), std::string::npos) << md;

    std::ofstream(dir / "plan.json")
        << R"({"plan": "cs336-systems", "request": {"device": "cpu", "cuda": false, "gpus": 0,
               "memory_bytes": 1000000, "flops_per_s": 1e11, "budget_s": -1e308,
               "threads": 0}, "cuts": [], "left_out": []})";
    try {
        writeStudyFolder(dir, "test", {});
        ADD_FAILURE() << "a budget of -1e308 s was taken";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("plan.json: request.budget_s:"), std::string::npos)
            << e.what();
    }
}

TEST(Study, ABudgetIsDigitsAndAUnit) {
    EXPECT_EQ(parseStudyBudget("20m"), 1200.0);
    EXPECT_EQ(parseStudyBudget("1.5h"), 5400.0);
    EXPECT_EQ(parseStudyBudget("90"), 90.0);
    for (const char* bad : {" 5m", "5m ", "0x10m", "1e3s", "-5m", "1..5m", "m", ""}) {
        EXPECT_FALSE(parseStudyBudget(bad)) << "'" << bad << "'";
    }
}

// A run whose summary contradicts its steps is reported from its steps.
TEST(Study, TheReportBelievesTheStepsOverTheSummary) {
    const StudyDir folder("summary");
    const std::filesystem::path& dir = folder.path;
    RunResult r =
        studyRun(StudySection::Sizes, "tiny", Mode::Forward, Precision::Fp32, {6.0, 6.3, 6.0});
    r.summary.forwardMs.mean = 0.001; // "the forward pass takes 1 µs"
    appendRunJsonl(dir / "runs.jsonl", r);
    const std::string md = writeStudyFolder(dir, "test", {}).markdown;
    EXPECT_NE(md.find("2.03 ±"), std::string::npos) << md; // 6.1 / 3 from the steps
    EXPECT_EQ(md.find("0.00 ±"), std::string::npos) << md;
}

// Data-parallel overhead has one definition, the Distributed window's and its chart's
// (summarizeDdp: mean exposed over mean step, every rank's measured steps): the table and
// the sentence give it, with each rank's own share beside it, not rank 0's alone.
TEST(Study, DataParallelOverheadIsTheMeanOverRanksWithEachRanksShare) {
    RunResult r =
        studyRun(StudySection::DataParallel, "tiny", Mode::Train, Precision::Fp32, {100, 100});
    r.config.ddp = DdpRequest{};
    r.ddp = DdpReport{};
    const auto rank = [](int index, double exposedMs) {
        DdpRank out;
        out.rank = index;
        for (int i = 0; i < 3; ++i) {
            DdpStepRecord s;
            s.warmup = i == 0;
            s.stepMs = 100.0;
            s.commMs = 30.0;
            s.exposedCommMs = s.warmup ? 90.0 : exposedMs;
            out.steps.push_back(s);
        }
        return out;
    };
    r.ddp->ranks = {rank(0, 20.0), rank(1, 5.0)};
    ResultSet set;
    set.runs = {r};
    const StudyReport report = writeStudyReport(set, StudyHeader{});
    const auto chartFigure = summarizeDdp(*r.ddp, 2)->overhead; // what the chart draws
    EXPECT_DOUBLE_EQ(chartFigure, 0.125);
    const auto table = std::find_if(report.tables.begin(), report.tables.end(),
                                    [](const auto& t) { return t.file == "data-parallel.csv"; });
    ASSERT_NE(table, report.tables.end());
    ASSERT_EQ(table->rows.size(), 1u);
    const auto& header = table->header;
    const auto cell = [&](const std::string& name) {
        const auto at = std::find(header.begin(), header.end(), name);
        return at == header.end() ? std::string("?") : table->rows[0][at - header.begin()];
    };
    EXPECT_EQ(cell("Overhead"), "12.5%");
    EXPECT_EQ(cell("Exposed communication, ms"), "12.50");
    EXPECT_EQ(cell("Overhead by rank"), "0: 20.0%, 1: 5.0%");
    EXPECT_NE(report.markdown.find("takes 12.5% of each measured step (the mean over the ranks)"),
              std::string::npos)
        << report.markdown;
}

// The warmup table's Noisy column is the tables' noise rule, stated under it, and its
// verdict follows the mark, not a CV threshold of its own.
TEST(Study, TheWarmupTableSaysItsNoiseRule) {
    // One slow step: a high CV, a small IQR, not noisy.
    RunResult outlier = studyRun(StudySection::Warmup, "tiny", Mode::Train, Precision::Fp32,
                                 {10, 10, 10, 10, 10, 10, 10, 40});
    outlier.config.warmupSteps = 0;
    RunResult spread = studyRun(StudySection::Warmup, "tiny", Mode::Train, Precision::Fp32,
                                {10, 14, 10, 14, 10, 14});
    spread.config.warmupSteps = 1;
    ASSERT_FALSE(outlier.summary.totalMs.noisy);
    ASSERT_GT(outlier.summary.totalMs.cv, 0.3);
    ASSERT_TRUE(spread.summary.totalMs.noisy);
    ResultSet set;
    set.runs = {outlier, spread};
    const StudyReport report = writeStudyReport(set, StudyHeader{});
    EXPECT_NE(report.markdown.find("A run is " + noiseRule()), std::string::npos)
        << report.markdown;
    EXPECT_NE(report.markdown.find("Even without warmup the steps are not noisy."),
              std::string::npos)
        << report.markdown;
    const auto table = std::find_if(report.tables.begin(), report.tables.end(),
                                    [](const auto& t) { return t.file == "warmup.csv"; });
    ASSERT_NE(table, report.tables.end());
    ASSERT_EQ(table->rows.size(), 2u);
    EXPECT_EQ(table->rows[0].back(), "no");
    EXPECT_EQ(table->rows[1].back(), "yes");
}

// The cuts are made in a fixed order, and a later cut can free the time an earlier one was
// made for: what fits again is put back, so that a plan that had to be cut uses at least
// 70% of its budget, on a CPU and on a GPU, and still fits it; on the CPU short of that only
// where the next size alone would not fit.
TEST(Study, ACutPlanPutsBackWhatFitsAndUsesMostOfItsBudget) {
    StudyRequest gpu = cpu(0.0);
    gpu.device = "cuda:0";
    gpu.cuda = true;
    gpu.gpus = 2;
    gpu.memoryBytes = int64_t{80} << 30;
    gpu.rates = {StudyRate::constant(2e14)};
    for (StudyRequest request : {cpu(0.0), gpu}) {
        request.budgetS = 3600.0 * 24 * 30;
        const double fullS = planStudy(request).estimateS();
        for (double budget = 10.0; budget < fullS * 1.2; budget *= 1.15) {
            request.budgetS = budget;
            const StudyPlan plan = planStudy(request);
            if (plan.estimateS() > budget) { // even the smallest plan does not fit
                EXPECT_NE(plan.cuts.back().find("over the budget"), std::string::npos);
                continue;
            }
            // On this CPU `small` alone costs more than tiny's whole plan at its fullest:
            // between the two no plan of these sections fills 70%, and tiny's whole plan
            // (every section, 10 steps) is what the budget gets.
            const bool sizeGap =
                request.device == "cpu" &&
                std::find(plan.cuts.begin(), plan.cuts.end(),
                          "sizes and precision: small left out") != plan.cuts.end() &&
                plan.cuts.size() == 1;
            if (fullS > budget) {
                EXPECT_TRUE(sizeGap || plan.estimateS() >= 0.7 * budget)
                    << request.device << " budget " << budget << " s plans " << plan.estimateS()
                    << " s; " << plan.cuts.size() << " cut(s)";
                EXPECT_FALSE(plan.cuts.empty()) << budget;
            } else {
                EXPECT_TRUE(plan.cuts.empty()) << budget;
            }
        }
    }
}

// Each section ends with what bounds its runs (docs/VERDICTS.md), or says nothing does.
TEST(Study, EachSectionSaysWhatBoundsItsRuns) {
    ResultSet set;
    set.runs = {studyRun(StudySection::Sizes, "tiny", Mode::ForwardBackward, Precision::Fp32,
                         std::vector<double>(12, 10.0)),
                studyRun(StudySection::Precision, "tiny", Mode::ForwardBackward, Precision::Bf16,
                         std::vector<double>(12, 10.0))};
    set.runs[1].resolvedDevice = "cuda:0";
    for (auto& s : set.runs[1].steps) {
        s.kernelMs = 0.3 * s.totalMs; // the GPU idles 70% of each step
    }
    const std::string md = writeStudyReport(set, StudyHeader{}).markdown;
    const size_t precision = md.find("What bounds these runs (docs/VERDICTS.md):\n\n- `" +
                                     set.runs[1].id + "`: critical host-bound: 70.0%");
    EXPECT_NE(precision, std::string::npos) << md;
    EXPECT_LT(md.find("no run of this section has a warning"), precision) << md;
    EXPECT_NE(md.find("Next: the host cannot launch kernels", precision), std::string::npos);
}
