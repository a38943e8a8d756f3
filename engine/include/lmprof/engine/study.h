// lmprof study (docs/STUDY.md): the seeds' whole study as one plan of runs for the device and
// the time at hand, and its write-up generated from the result sets alone. Torch-free: the
// plan needs the device's memory and a measured rate, the report needs the runs.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/result_set.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// The questions of the seeds, in the order the write-up answers them.
enum class StudySection { Sizes, Warmup, Precision, Ops, Memory, DataParallel, Variants };
inline constexpr std::array kStudySections{
    StudySection::Sizes,  StudySection::Warmup,       StudySection::Precision, StudySection::Ops,
    StudySection::Memory, StudySection::DataParallel, StudySection::Variants};
std::string_view toString(StudySection s); // "sizes", "warmup", ..., "data-parallel"
std::optional<StudySection> parseStudySection(std::string_view s);
std::string_view sectionTitle(StudySection s); // "Forward and backward time by model size"

inline constexpr std::string_view kStudyPlanName = "cs336-systems";

// How fast the device ran one calibration step (docs/STUDY.md, "Budget"): a training step's
// rate and its forward pass's, in FLOP/s, measured on a model whose training step is
// `stepFlops`. A larger model's matrices run faster, so the plan reads each run's rate off the
// calibration's points (studyRateAt) by the size of its training step.
struct StudyRate {
    double stepFlops = 0.0;   // the calibration's training step (0: the same rate for every size)
    double trainPerS = 0.0;   // training steps' FLOPs over their time
    double forwardPerS = 0.0; // forward passes' FLOPs over their time
    // A rate given rather than measured (--rate, an older plan.json): forward passes at two
    // thirds of it, every size alike.
    static StudyRate constant(double trainPerS);
};

// The rate of a run whose training step is `stepFlops`: between two calibration points the
// straight line through them on log-log axes, beyond the points the nearest one's rate (a
// larger model is seldom slower per FLOP, so the estimate errs towards finishing early).
StudyRate studyRateAt(const std::vector<StudyRate>& points, double stepFlops);

// What a plan is made for: the device, its memory, how fast it computes (the calibration's
// points), and the time to spend.
struct StudyRequest {
    std::string device = "cpu";   // "cpu", "cuda:0": what the runs name
    bool cuda = false;            // the device is a GPU
    int gpus = 0;                 // GPUs present (data-parallel world size with NCCL)
    int64_t memoryBytes = 0;      // the device's memory (host memory on the CPU)
    std::vector<StudyRate> rates; // by step size, one per calibration run
    double budgetS = 20.0 * 60.0;
    int threads = 0; // CPU intra-op threads of every run (0: LibTorch's)
};

struct StudyRun {
    StudySection section = StudySection::Sizes;
    RunConfig config;
    double estimateS = 0.0;
    std::string id; // "sizes-small-ctx128-fp32-forward": unique in the plan, kept in results
};

struct StudyPlan {
    std::vector<StudyRun> runs;
    bool lab = true; // the precision lab's two experiments (a few seconds)
    double labEstimateS = 0.0;
    std::vector<std::string> cuts;    // what the budget took out, one sentence each
    std::vector<std::string> leftOut; // what the device's memory cannot hold, and why
    double estimateS() const;
};

// "20m", "90s", "1h", "45" (seconds): a budget of at most a week; nullopt for anything else.
std::optional<double> parseStudyBudget(std::string_view text);
// "47 s", "2.8 min": the plan's and the progress's durations.
std::string formatStudyTime(double seconds);

class SessionInterface;
// The request for a device of this engine ("auto" resolved to its GPU, else the CPU), its
// memory and the GPUs there; the rate is the calibration's (below).
StudyRequest studyRequestFor(const SessionInterface& engine, const std::string& device,
                             double budgetS, int threads);
// The calibration, run by both clients until this returns nullopt, each finished run's point
// added to request.rates (calibratedRate): first the plan's smallest size (one warmup, three
// measured training steps, no sampling), then a larger one (one warmup, two measured) where
// the first point's rate says it costs at most a tenth of the budget and the memory model
// says it fits.
std::optional<RunConfig> nextCalibrationRun(const StudyRequest& request);
// The point a finished calibration run measured; nullopt and `why` when it did not.
std::optional<StudyRate> calibratedRate(const RunResult& run, std::string& why);

// The cs336-systems plan for the request, scaled down until its estimate fits the budget.
// Never silently: each cut is named in `cuts`, each configuration the memory model says
// cannot fit in `leftOut`.
StudyPlan planStudy(const StudyRequest& request);

// A run's estimated wall time on a device calibrated at `rates`: its steps' FLOPs at the rate
// for its size (studyRateAt; a forward-only run at the forward rate), plus the model's
// construction and the process's start (a data-parallel run starts its ranks).
double estimateRunSeconds(const RunConfig& config, const std::vector<StudyRate>& rates);

// The section a study run belongs to, from its id ("warmup-..."): nullopt for other runs.
std::optional<StudySection> sectionOf(const RunResult& run);

// The write-up's facts that are not in the runs.
struct StudyHeader {
    std::string device; // "NVIDIA H100 80GB HBM3", or the CPU model
    std::string driver; // empty on the CPU
    std::string torch;
    std::string commit;
    std::string date; // of the newest run
    double budgetS = 0.0;
    std::vector<std::string> cuts;
    std::vector<std::string> leftOut;
    std::string command; // the command that regenerates this report
    // Why the charts were not drawn (no OpenGL context to be had, ...); empty when they were.
    std::string chartsMissing;
    // Lines of the folder's files that could not be read and were skipped, each named.
    std::vector<std::string> damaged;
};

// One table of the write-up, also written beside it as CSV.
struct StudyTable {
    std::string file; // "sizes.csv"
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

// One chart of the write-up: one of the window's exportable charts (docs/WINDOW.md, "Exporting
// charts") drawn with the given runs into `file` beside report.md, kStudyChartWidth x
// kStudyChartHeight pixels, by the window's chart exporter (lmprof_ui's drawStudyCharts).
struct StudyChart {
    std::string file;              // "sizes.png"
    std::string chart;             // the window's name for it: "step-times", "memory-breakdown"
    std::string title;             // the line above it
    std::vector<std::string> runs; // the runs' ids in legend order; none for the lab's charts
};
inline constexpr int kStudyChartWidth = 1200;
inline constexpr int kStudyChartHeight = 700;

struct StudyReport {
    std::string markdown;
    std::vector<StudyTable> tables;
    std::vector<StudyChart> charts; // listed whether drawn or not
    std::string chartsMissing;      // the header's: why they were not drawn, or empty
};

// The write-up of a study's result set: one section per question, each with its table and
// sentences stated from the data (every comparison with its ratio's 95% interval and
// verdict); a section without runs says so. Deterministic: the same set gives the same bytes.
StudyReport writeStudyReport(const ResultSet& set, const StudyHeader& header);

// A study's folder (docs/STUDY.md), shared by lmprof-cli study and the window's Study view:
// plan.json (the request, so a resumed study plans the same runs, and the plan's cuts),
// runs.jsonl (every finished run, appended as it ends), lab.json (the precision lab), and
// the write-up, report.md with a CSV per table.
// A study folder held for writing, by this process alone (a lock on DIR/.lock, released
// when this is destroyed). openStudyFolder makes DIR if it is missing and refuses, throwing
// StudyFolderError with the reason: DIR that is not a folder or cannot be written; a link
// in it (a study writes only inside its folder, never through a link); a runs.jsonl,
// plan.json or lab.json that is not a regular file, or a runs.jsonl over
// kMaxInputFileBytes; a folder another process holds. Call it before anything is measured.
class StudyFolderError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
class StudyFolderLock {
public:
    explicit StudyFolderLock(int fd) : m_fd(fd) {}
    ~StudyFolderLock();
    StudyFolderLock(const StudyFolderLock&) = delete;
    StudyFolderLock& operator=(const StudyFolderLock&) = delete;

private:
    int m_fd;
};
std::unique_ptr<StudyFolderLock> openStudyFolder(const std::filesystem::path& dir);

void saveStudyPlan(const std::filesystem::path& dir, const StudyRequest& request,
                   const StudyPlan& plan, const Environment& environment);
std::optional<StudyRequest> loadStudyRequest(const std::filesystem::path& dir);
// Whether a run saved in runs.jsonl is done: an OOM or a failure is data, but a run that
// was cancelled (Ctrl+C, a window closed) or found no device (a resume elsewhere) says
// nothing about the study, and runs again.
bool studyRunDone(const RunResult& run);
// The ids of the runs in runs.jsonl that are done (studyRunDone), whatever their outcome.
std::set<std::string> finishedStudyRuns(const std::filesystem::path& dir);
// Draws a report's charts from the study's runs into the folder; throws std::runtime_error
// with the reason when it cannot (no headless OpenGL context, ...).
using StudyChartDrawer = std::function<void(
    const ResultSet& set, const std::vector<StudyChart>& charts, const std::filesystem::path& dir)>;
// Writes report.md, the tables' CSV files and (with `drawCharts`) the charts' PNG files from
// the folder's saved files alone; returns the report. `command` is the header's line that
// regenerates it. Charts that cannot be drawn are reported in the header, not fatal; without
// a drawer the header says this build has none. Throws with the file's name when a saved
// file cannot be read or the report written.
StudyReport writeStudyFolder(const std::filesystem::path& dir, const std::string& command,
                             const StudyChartDrawer& drawCharts);

} // namespace lmprof::engine
