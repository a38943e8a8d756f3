// A study's folder (study.h, docs/STUDY.md): its plan, its runs, its lab and its write-up.

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"
#include "results/fields.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

namespace lmprof::engine::json_io {

// plan.json as a record (docs/STUDY.md): what the study was planned for, and what the budget
// and the device's memory left out. Its fields in the order the file has always had them.
struct StudyPlanFile {
    std::optional<std::string> commit;
    std::string created;
    std::vector<std::string> cuts;
    std::optional<std::string> deviceName;
    std::optional<std::string> driver;
    std::vector<std::string> leftOut;
    std::string plan = std::string(kStudyPlanName);
    StudyRequest request;
    std::optional<std::string> torch;
};

template <typename Io>
void fields(Io& io, Ref<StudyRate, Io> p) {
    io.required("forward_flops_per_s", p.forwardPerS);
    io.required("step_flops", p.stepFlops);
    io.required("train_flops_per_s", p.trainPerS);
}

template <typename Io>
void fields(Io& io, Ref<StudyRequest, Io> r) {
    io.required("budget_s", r.budgetS);
    io.required("cuda", r.cuda);
    io.required("device", r.device);
    io.required("gpus", r.gpus);
    io.required("memory_bytes", r.memoryBytes);
    if constexpr (Io::kReads) {
        if (!member(io.in, io.path, "rates", false)) {
            // A plan from before the calibration had points: one rate for every size.
            double flopsPerS = 0.0;
            io.required("flops_per_s", flopsPerS);
            r.rates = {StudyRate::constant(flopsPerS)};
        } else {
            io.array("rates", r.rates);
        }
    } else {
        io.array("rates", r.rates);
    }
    io.required("threads", r.threads);
}

template <typename Io>
void fields(Io& io, Ref<StudyPlanFile, Io> f) {
    io.optional("commit", f.commit);
    io.field("created", f.created);
    io.strings("cuts", f.cuts);
    io.optional("device_name", f.deviceName);
    io.optional("driver", f.driver);
    io.strings("left_out", f.leftOut);
    io.field("plan", f.plan);
    io.object("request", f.request, true);
    io.optional("torch", f.torch);
}

} // namespace lmprof::engine::json_io

namespace lmprof::engine {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxPlanBytes = 1 << 20;
// A calibration has a point or two (study.h); a plan.json with more is not one.
constexpr size_t kMaxStudyRates = 8;

// plan.json read by its fields (json_io::StudyPlanFile); a field missing or of the wrong
// type is an error naming the file and the field's path.
json_io::StudyPlanFile readPlan(const fs::path& dir) {
    const std::string file = (dir / "plan.json").string();
    try {
        const auto j = json_io::json::parse(readInputFile(dir / "plan.json", kMaxPlanBytes));
        return json_io::fromObject<json_io::StudyPlanFile>(j, "$");
    } catch (const json_io::json::exception& e) {
        throw ResultFormatError(file + ": " + e.what());
    } catch (const ResultFormatError& e) {
        throw ResultFormatError(file + ": " + e.what());
    }
}

// When the study was first planned: a resume keeps the date its plan.json has.
std::string plannedAt(const fs::path& dir) {
    try {
        if (fs::exists(dir / "plan.json")) {
            if (std::string created = readPlan(dir).created; !created.empty()) {
                return created;
            }
        }
    } catch (const std::exception&) {
        // an unreadable plan is replaced, dated now
    }
    return utcNow();
}

// A saved request is read like any input: each field within what a study can plan for,
// or an error naming it (a budget of -1e308 s, no memory, a negative rate).
void checkRequest(const StudyRequest& r, const std::string& file) {
    const auto refuse = [&](const std::string& field, const std::string& why) {
        throw ResultFormatError(file + ": request." + field + ": " + why);
    };
    RunConfig probe;
    probe.device = r.device;
    for (const ConfigError& e : validate(probe)) {
        if (e.field == "device") {
            refuse("device", e.reason);
        }
    }
    if (!std::isfinite(r.budgetS) || r.budgetS <= 0.0 || r.budgetS > 7 * 24 * 3600.0) {
        refuse("budget_s", formatFixed(r.budgetS, 0) + " is not a budget (seconds, up to a week)");
    }
    if (r.rates.empty() || r.rates.size() > kMaxStudyRates) {
        refuse("rates",
               "not a device's calibration (1 to " + std::to_string(kMaxStudyRates) + " points)");
    }
    for (size_t i = 0; i < r.rates.size(); ++i) {
        const StudyRate& p = r.rates[i];
        const std::string at = "rates[" + std::to_string(i) + "].";
        for (const auto& [name, v] : {std::pair{"train_flops_per_s", p.trainPerS},
                                      std::pair{"forward_flops_per_s", p.forwardPerS}}) {
            if (!std::isfinite(v) || v < 1e6 || v > 1e18) {
                refuse(at + name, "not a rate from 1e6 to 1e18 FLOP/s");
            }
        }
        if (!std::isfinite(p.stepFlops) || p.stepFlops < 0.0 || p.stepFlops > 1e21) {
            refuse(at + "step_flops", "not a step's FLOPs (0 to 1e21)");
        }
    }
    if (r.memoryBytes <= 0 || r.memoryBytes > (int64_t{1} << 50)) {
        refuse("memory_bytes",
               std::to_string(r.memoryBytes) + " is not a device's memory (1 byte to 1 PiB)");
    }
    if (r.gpus < 0 || r.gpus > 1024) {
        refuse("gpus", std::to_string(r.gpus) + " is not a GPU count (0 to 1024)");
    }
    if (r.threads < 0 || r.threads > 4096) {
        refuse("threads", std::to_string(r.threads) + " is not a thread count (0 to 4096)");
    }
}

// A plan's request, each field checked (checkRequest), or an error naming the file.
StudyRequest requestOf(const json_io::StudyPlanFile& plan, const std::string& file) {
    checkRequest(plan.request, file);
    return plan.request;
}

} // namespace

StudyFolderLock::~StudyFolderLock() {
    ::close(m_fd); // releases the flock
}

std::unique_ptr<StudyFolderLock> openStudyFolder(const fs::path& dir) {
    const std::string name = dir.string();
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(dir, ec);
    if (fs::is_symlink(status)) {
        throw StudyFolderError(name + " is a link: a study writes only inside its own folder");
    }
    if (fs::exists(status) && !fs::is_directory(status)) {
        throw StudyFolderError(name + " is not a folder");
    }
    if (!fs::exists(status) && (fs::create_directories(dir, ec), ec)) {
        throw StudyFolderError("cannot make the folder " + name + ": " + ec.message());
    }
    // Links could carry a write outside the folder: none is let in (at most this many
    // entries are looked at; a study's folder holds a few dozen).
    size_t looked = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && looked < 100000;
         it.increment(ec), ++looked) {
        if (it->is_symlink(ec)) {
            throw StudyFolderError(it->path().string() +
                                   " is a link: a study writes only inside its folder and never "
                                   "through a link; remove it, or choose another folder");
        }
    }
    if (ec) {
        throw StudyFolderError("cannot read the folder " + name + ": " + ec.message());
    }
    for (const char* file : {"runs.jsonl", "plan.json", "lab.json"}) {
        const fs::path path = dir / file;
        const fs::file_status s = fs::symlink_status(path, ec);
        if (fs::exists(s) && !fs::is_regular_file(s)) {
            throw StudyFolderError(path.string() + " is not a regular file");
        }
    }
    if (fs::exists(dir / "runs.jsonl", ec) &&
        fs::file_size(dir / "runs.jsonl", ec) > kMaxInputFileBytes) {
        throw StudyFolderError((dir / "runs.jsonl").string() + " is over " +
                               std::to_string(kMaxInputFileBytes >> 20) +
                               " MiB: not a study's runs");
    }
    const std::string lock = (dir / ".lock").string();
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw StudyFolderError("cannot write in " + name + ": " + std::strerror(errno));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        throw StudyFolderError("another process is running a study in " + name + " (it holds " +
                               lock + "); wait for it to end");
    }
    return std::make_unique<StudyFolderLock>(fd);
}

void saveStudyPlan(const fs::path& dir, const StudyRequest& r, const StudyPlan& plan,
                   const Environment& env) {
    fs::create_directories(dir);
    json_io::StudyPlanFile file;
    file.request = r;
    file.cuts = plan.cuts;
    file.leftOut = plan.leftOut;
    file.deviceName = env.device.name;
    file.driver = env.driver.value_or("");
    file.torch = env.torch;
    file.commit = toolInfo().git;
    file.created = plannedAt(dir);
    writeFileAtomic(dir / "plan.json", json_io::toObject(file).dump(2) + "\n");
}

std::optional<StudyRequest> loadStudyRequest(const fs::path& dir) {
    if (!fs::exists(dir / "plan.json")) {
        return std::nullopt;
    }
    return requestOf(readPlan(dir), (dir / "plan.json").string());
}

bool studyRunDone(const RunResult& r) {
    return r.status != RunStatus::Cancelled &&
           !(r.status == RunStatus::Error && r.error && r.error->rfind("device: ", 0) == 0);
}

namespace {

// A folder's runs, the last of each id in the place of its first: a run that runs again
// after a cancel replaces the cancelled one.
std::vector<RunResult> latestRuns(std::vector<RunResult> runs) {
    std::vector<RunResult> out;
    std::map<std::string, size_t> place;
    for (auto& r : runs) {
        if (const auto it = place.find(r.id); it != place.end()) {
            out[it->second] = std::move(r);
        } else {
            place.emplace(r.id, out.size());
            out.push_back(std::move(r));
        }
    }
    return out;
}

} // namespace

std::set<std::string> finishedStudyRuns(const fs::path& dir) {
    std::set<std::string> done;
    if (fs::exists(dir / "runs.jsonl")) {
        for (const auto& r : latestRuns(loadRunsJsonl(dir / "runs.jsonl").runs)) {
            if (studyRunDone(r)) {
                done.insert(r.id);
            }
        }
    }
    return done;
}

StudyReport writeStudyFolder(const fs::path& dir, const std::string& command,
                             const StudyChartDrawer& drawCharts) {
    ResultSet set;
    JsonlRuns saved = loadRunsJsonl(dir / "runs.jsonl");
    set.runs = latestRuns(std::move(saved.runs));
    // The report states times and peaks from the runs' own steps: a summary that says
    // otherwise (edited, or from another tool) is not believed.
    for (RunResult& r : set.runs) {
        takeStepFigures(r.summary, r.config, r.steps);
    }
    StudyHeader header;
    for (const auto& w : saved.warnings) {
        header.damaged.push_back("runs.jsonl " + w);
    }
    if (fs::exists(dir / "lab.json")) {
        const ResultSet lab = loadResultSet(dir / "lab.json");
        set.precisionLab = lab.precisionLab;
        header.device = lab.environment.device.name;
        header.driver = lab.environment.driver.value_or("");
        header.torch = lab.environment.torch;
        header.commit = lab.tool.git;
    }
    if (fs::exists(dir / "plan.json")) {
        const json_io::StudyPlanFile plan = readPlan(dir);
        header.budgetS = requestOf(plan, (dir / "plan.json").string()).budgetS; // checked
        header.cuts = plan.cuts;
        header.leftOut = plan.leftOut;
        header.device = plan.deviceName.value_or(header.device);
        header.driver = plan.driver.value_or(header.driver);
        header.torch = plan.torch.value_or(header.torch);
        header.commit = plan.commit.value_or(header.commit);
        header.date = plan.created;
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
