// The study's one driver (study_driver.h) on an engine that runs nothing: it records what was
// submitted, and the test answers with the events a real engine would publish, in its own
// order. What is checked is the folder the study leaves: its plan, its runs and its lab.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study_driver.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

// An engine of a CPU with 16 GiB that queues and runs nothing: submits are kept for the
// test to answer. "cuda:0" is refused, as on a machine without a GPU.
class RecordingEngine final : public SessionInterface {
public:
    std::vector<RunConfig> runs;
    std::vector<LabRequest> labs;
    int cancels = 0;

    int submit(const RunConfig& config) override {
        runs.push_back(config);
        return static_cast<int>(runs.size()) - 1;
    }
    int submitLab(const LabRequest& request) override {
        labs.push_back(request);
        return static_cast<int>(labs.size()) - 1;
    }
    void cancel() override { ++cancels; }
    std::vector<SessionEvent> drain() override { return {}; }
    bool waitForEvents(std::chrono::milliseconds) override { return false; }
    bool busy() const override { return false; }
    std::vector<std::string> devices() const override { return {"auto", "cpu"}; }
    bool isCuda(std::string_view device) const override { return device.rfind("cuda", 0) == 0; }
    int64_t deviceMemoryBytes(std::string_view) const override { return int64_t{16} << 30; }
    std::optional<ConfigError> checkRunnable(const RunConfig& config) const override {
        if (isCuda(config.device)) {
            return ConfigError{"device", "'" + config.device +
                                             "' requested but 0 CUDA "
                                             "device(s) are available"};
        }
        return std::nullopt;
    }
    Environment environment(std::string_view) const override {
        Environment e;
        e.host = "recording-engine";
        return e;
    }
    EngineInfo info() const override { return {}; }
};

// The engine's answer to the run it was given at `index`: ok, with its steps at these times.
RunFinished finished(const RecordingEngine& engine, int index, RunStatus status = RunStatus::Ok,
                     double totalMs = 30.0) {
    RunFinished f;
    f.runIndex = index;
    f.result.config = engine.runs.at(static_cast<size_t>(index));
    f.result.status = status;
    const RunConfig& c = f.result.config;
    for (int i = 0; status == RunStatus::Ok && i < c.warmupSteps + c.measureSteps; ++i) {
        StepRecord s;
        s.index = i;
        s.warmup = i < c.warmupSteps;
        s.forwardMs = totalMs / 3.0;
        s.backwardMs = c.mode == Mode::Forward ? 0.0 : totalMs / 2.0;
        s.totalMs = totalMs;
        f.result.steps.push_back(s);
    }
    f.result.summary = summarize(c, f.result.steps, std::nullopt);
    if (status != RunStatus::Ok) {
        f.result.error = "the test said so";
    }
    return f;
}

LabFinished labFinished(const RecordingEngine& engine, int index) {
    LabFinished f;
    f.labIndex = index;
    f.report = unstartedLab(engine.labs.at(static_cast<size_t>(index)), "not run in a test");
    return f;
}

// A request planned for the recording engine's CPU at a given rate: no calibration.
StudyRequest atRate(RecordingEngine& engine) {
    StudyRequest r = studyRequestFor(engine, "cpu", 20 * 60.0, 0);
    r.rates = {StudyRate::constant(50e9)};
    return r;
}

struct Folder {
    fs::path path;
    explicit Folder(const std::string& name)
        : path(fs::temp_directory_path() /
               ("lmprof_study_driver_" + name + "_" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~Folder() { fs::remove_all(path); }
};

std::vector<std::string> savedIds(const fs::path& dir) {
    std::vector<std::string> ids;
    for (const RunResult& r : loadRunsJsonl(dir / "runs.jsonl").runs) {
        ids.push_back(r.id);
    }
    return ids;
}

} // namespace

// Calibration first (two sizes on a CPU when the first is quick enough), then the plan is
// saved; each planned run is submitted only when the one before it has ended, and appended
// under its study id; then the lab's three experiments, answered in any order, make lab.json.
TEST(StudyDriver, CalibratesThenRunsEachPlannedRunOneAtATimeAndThenTheLab) {
    const Folder folder("whole");
    RecordingEngine engine;
    std::vector<StudyDriver::Change> changes;
    StudyDriver study([&](StudyDriver::Change c, const StudyDriver&) { changes.push_back(c); });
    ASSERT_TRUE(study.plan(engine, studyRequestFor(engine, "cpu", 20 * 60.0, 0), folder.path));
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Calibrating);
    ASSERT_EQ(engine.runs.size(), 1u);
    study.observe(engine, SessionEvent{finished(engine, 0, RunStatus::Ok, 20.0)});
    if (study.phase() == StudyDriver::Phase::Calibrating) { // the second size's point
        ASSERT_EQ(engine.runs.size(), 2u);
        EXPECT_NE(engine.runs[1].model.preset, engine.runs[0].model.preset);
        study.observe(engine, SessionEvent{finished(engine, 1, RunStatus::Ok, 60.0)});
    }
    ASSERT_EQ(study.phase(), StudyDriver::Phase::Planned) << study.message();
    EXPECT_TRUE(fs::exists(folder.path / "plan.json"));
    const size_t calibrations = engine.runs.size();
    EXPECT_EQ(study.request().rates.size(), calibrations);

    study.run(engine);
    const StudyPlan& plan = study.studyPlan();
    ASSERT_FALSE(plan.runs.empty());
    for (size_t i = 0; i < plan.runs.size(); ++i) {
        ASSERT_EQ(engine.runs.size(), calibrations + i + 1) << "one run at a time";
        EXPECT_EQ(study.current()->id, plan.runs[i].id);
        // Another client's run on a server ends first: not the study's.
        study.observe(engine, SessionEvent{finished(engine, 0)});
        const int index = static_cast<int>(engine.runs.size()) - 1;
        study.observe(
            engine, SessionEvent{finished(engine, index, i == 1 ? RunStatus::Oom : RunStatus::Ok)});
    }
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Lab);
    std::vector<std::string> planned;
    for (const StudyRun& r : plan.runs) {
        planned.push_back(r.id);
    }
    EXPECT_EQ(savedIds(folder.path), planned);
    EXPECT_EQ(study.done().size(), plan.runs.size()) << "an OOM is data: done";

    ASSERT_EQ(engine.labs.size(), 3u);
    for (int i : {2, 0}) {
        study.observe(engine, SessionEvent{labFinished(engine, i)});
    }
    EXPECT_FALSE(fs::exists(folder.path / "lab.json")) << "written with all three";
    study.observe(engine, SessionEvent{labFinished(engine, 1)});
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Done);
    EXPECT_TRUE(study.complete());
    const ResultSet lab = loadResultSet(folder.path / "lab.json");
    EXPECT_EQ(lab.precisionLab.dtypes.size(), 2u);
    EXPECT_EQ(lab.environment.host, "recording-engine");
    EXPECT_EQ(changes.front(), StudyDriver::Change::Calibrating);
    EXPECT_EQ(std::count(changes.begin(), changes.end(), StudyDriver::Change::RunEnded),
              static_cast<long>(plan.runs.size()));
    EXPECT_EQ(changes.back(), StudyDriver::Change::Done);
}

// Cancelled, the run in flight is kept (as cancelled) and nothing more is submitted; a
// resume from the folder runs the cancelled run again, then the rest.
TEST(StudyDriver, ACancelKeepsTheRunInFlightAndAResumeRunsItAgain) {
    const Folder folder("cancel");
    RecordingEngine engine;
    StudyDriver study;
    ASSERT_TRUE(study.plan(engine, atRate(engine), folder.path));
    ASSERT_EQ(study.phase(), StudyDriver::Phase::Planned);
    EXPECT_TRUE(engine.runs.empty()) << "a given rate needs no calibration";
    study.run(engine);
    study.observe(engine, SessionEvent{finished(engine, 0)});
    study.cancel();
    study.observe(engine, SessionEvent{finished(engine, 1, RunStatus::Cancelled)});
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Planned);
    EXPECT_FALSE(study.busy());
    EXPECT_EQ(engine.runs.size(), 2u);
    const std::string cancelledId = study.studyPlan().runs[1].id;
    EXPECT_EQ(savedIds(folder.path).back(), cancelledId);

    StudyDriver resumed;
    ASSERT_TRUE(resumed.resume(engine, folder.path)) << resumed.message();
    EXPECT_EQ(resumed.done(), (std::set<std::string>{study.studyPlan().runs[0].id}));
    EXPECT_EQ(resumed.studyPlan().runs.size(), study.studyPlan().runs.size());
    resumed.run(engine);
    ASSERT_EQ(engine.runs.size(), 3u);
    EXPECT_EQ(resumed.current()->id, cancelledId);
}

// A study is resumed only where its device is: elsewhere every run would end as an error.
// A folder without a plan, and a calibration that measured nothing, stop with the reason.
TEST(StudyDriver, RefusalsAndFailuresStopWithTheirReason) {
    const Folder folder("refused");
    RecordingEngine engine;
    StudyRequest gpu = atRate(engine);
    gpu.device = "cuda:0";
    saveStudyPlan(folder.path, gpu, planStudy(gpu), Environment{});
    StudyDriver study;
    std::optional<ConfigError> refusal;
    EXPECT_FALSE(study.resume(engine, folder.path, &refusal));
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->field, "device");
    EXPECT_NE(study.message().find("was planned for cuda:0"), std::string::npos) << study.message();

    const Folder empty("empty");
    EXPECT_FALSE(study.resume(engine, empty.path));
    EXPECT_NE(study.message().find("no study plan"), std::string::npos) << study.message();

    std::vector<StudyDriver::Change> changes;
    StudyDriver calibrating(
        [&](StudyDriver::Change c, const StudyDriver&) { changes.push_back(c); });
    ASSERT_TRUE(calibrating.plan(engine, studyRequestFor(engine, "cpu", 600.0, 0), empty.path));
    calibrating.observe(
        engine,
        SessionEvent{finished(engine, static_cast<int>(engine.runs.size()) - 1, RunStatus::Error)});
    EXPECT_EQ(calibrating.phase(), StudyDriver::Phase::Idle);
    EXPECT_NE(calibrating.message().find("the test said so"), std::string::npos)
        << calibrating.message();
    EXPECT_EQ(changes.back(), StudyDriver::Change::Failed);
    EXPECT_FALSE(fs::exists(empty.path / "plan.json"));
}

// A run whose line cannot be written stops the study there, rather than run on and lose it.
TEST(StudyDriver, ARunThatCannotBeRecordedStopsTheStudy) {
    const Folder folder("unwritable");
    RecordingEngine engine;
    StudyDriver study;
    ASSERT_TRUE(study.plan(engine, atRate(engine), folder.path));
    fs::create_directories(folder.path / "runs.jsonl"); // a folder where the file goes
    study.run(engine);
    study.observe(engine, SessionEvent{finished(engine, 0)});
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Planned);
    EXPECT_FALSE(study.message().empty());
    EXPECT_EQ(engine.runs.size(), 1u);
    EXPECT_TRUE(study.done().empty());
}

// A run that found no device (a GPU lost, another engine connected) would fail the same for
// every run after it: the study stops at Planned with the reason, and submits nothing more.
TEST(StudyDriver, ARunWhoseDeviceIsGoneStopsTheStudy) {
    const Folder folder("nodevice");
    RecordingEngine engine;
    StudyDriver study;
    ASSERT_TRUE(study.plan(engine, atRate(engine), folder.path));
    study.run(engine);
    RunFinished lost = finished(engine, 0, RunStatus::Error);
    lost.result.error = "device: 'cuda:0' requested but 0 CUDA device(s) are available";
    study.observe(engine, SessionEvent{lost});
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Planned);
    EXPECT_EQ(engine.runs.size(), 1u) << "not submitted again";
    EXPECT_NE(study.message().find("could not run"), std::string::npos) << study.message();
    EXPECT_TRUE(study.done().empty());
}

// Cancelled while calibrating, nothing is planned or saved (rates measured in part would
// plan another study); a finished study resumes as Done, with nothing to run.
TEST(StudyDriver, ACancelWhileCalibratingPlansNothingAndAFinishedStudyIsDone) {
    const Folder folder("calibrating");
    RecordingEngine engine;
    StudyDriver study;
    ASSERT_TRUE(study.plan(engine, studyRequestFor(engine, "cpu", 20 * 60.0, 0), folder.path));
    study.cancel();
    study.observe(engine, SessionEvent{finished(engine, 0)});
    EXPECT_EQ(study.phase(), StudyDriver::Phase::Idle);
    EXPECT_FALSE(fs::exists(folder.path / "plan.json"));
    EXPECT_EQ(engine.runs.size(), 1u);

    const Folder whole("finished");
    StudyDriver done;
    ASSERT_TRUE(done.plan(engine, atRate(engine), whole.path));
    done.run(engine);
    while (done.phase() == StudyDriver::Phase::Running) {
        done.observe(engine,
                     SessionEvent{finished(engine, static_cast<int>(engine.runs.size()) - 1)});
    }
    for (int i = 0; i < 3; ++i) {
        done.observe(engine, SessionEvent{labFinished(engine, static_cast<int>(engine.labs.size()) -
                                                                  3 + i)});
    }
    ASSERT_EQ(done.phase(), StudyDriver::Phase::Done);
    StudyDriver reopened;
    ASSERT_TRUE(reopened.resume(engine, whole.path)) << reopened.message();
    EXPECT_EQ(reopened.phase(), StudyDriver::Phase::Done);
    EXPECT_TRUE(reopened.complete());
}
