// lmprof-cli run / sweep / show: build configurations from flags, drive the engine Session,
// print progress and reports, save result sets, map outcomes to exit codes.
//
// Sections: flags to configs · driving a session · run · sweep · show · compare · signals.

#include "cli_commands.h"

#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "lmprof/engine/sweep.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace lmprof::app {

using namespace lmprof::engine;

namespace {

std::atomic<int> g_interrupts{0};
std::atomic<bool> g_interrupted{false}; // the same, as the cancel flag the engine polls

// ---------------------------------------------------------------------------------------
// Flags to configurations

// The flag a config field comes from, so messages name what the user typed.
std::string flagFor(const std::string& field) {
    static const std::map<std::string, std::string> kFlags = {
        {"model.preset", "--model"},
        {"model.d_model", "--d-model"},
        {"model.d_ff", "--d-ff"},
        {"model.num_layers", "--layers"},
        {"model.num_heads", "--heads"},
        {"model.vocab_size", "--vocab"},
        {"context_length", "--ctx"},
        {"batch_size", "--batch"},
        {"warmup_steps", "--warmup"},
        {"measure_steps", "--steps"},
        {"device", "--device"},
        {"threads", "--threads"},
        {"precision", "--precision"},
        {"mode", "--mode"},
        {"sample_hz", "--sample-hz"},
        {"grad_norms", "--grad-norms"},
        {"telemetry_hz", "--telemetry-hz"},
        {"memory_snapshot.path", "--memory-snapshot"},
        {"memory_snapshot.first_step", "--snapshot-step"},
        {"memory_snapshot.step_count", "--snapshot-steps"},
        {"memory_snapshot.max_entries", "--snapshot-max-entries"},
        {"op_profile.first_step", "--profile-step"},
        {"op_profile.step_count", "--profile-steps"},
        {"ddp.world_size", "--world-size"},
        {"ddp.backend", "--backend"},
        {"ddp.strategy", "--strategy"},
        {"ddp.bucket_mb", "--bucket-mb"},
        {"ddp.timeout_s", "--timeout-s"},
        {"ddp", "--mode"},
        {"fault_oom_phase", "LMPROF_FAULT_OOM"}};
    const auto it = kFlags.find(field);
    return it == kFlags.end() ? field : it->second;
}

void printConfigErrors(const std::vector<ConfigError>& errors) {
    std::cerr << "lmprof-cli: invalid configuration:\n";
    for (const auto& e : errors) {
        std::cerr << "  " << flagFor(e.field) << " (" << e.field << "): " << e.reason << "\n";
    }
}

// Validates the config and checks it can run on the engine (this machine without one);
// prints every problem otherwise.
bool acceptConfig(const RunConfig& c, const SessionInterface* engine) {
    std::vector<ConfigError> errors = validate(c);
    if (errors.empty()) {
        if (auto refusal = engine ? engine->checkRunnable(c) : checkRunnable(c)) {
            errors.push_back(*refusal);
        }
    }
    if (!errors.empty()) {
        printConfigErrors(errors);
    }
    return errors.empty();
}

std::optional<RunConfig> buildConfig(const std::string& model, int64_t ctx,
                                     const std::string& precision, const std::string& mode,
                                     const CommonOptions& o,
                                     std::optional<SnapshotRequest> snapshot = std::nullopt,
                                     std::optional<DdpRequest> ddp = std::nullopt,
                                     const SessionInterface* engine = nullptr) {
    std::vector<ConfigError> errors;
    RunConfig c;
    c.ddp = ddp;
    c.memorySnapshot = std::move(snapshot);
    const bool dimsGiven = o.dModel || o.dFf || o.layers || o.heads;
    if (model == "custom") {
        c.model.preset = "custom";
        c.model.dModel = o.dModel.value_or(0);
        c.model.dFf = o.dFf.value_or(0);
        c.model.numLayers = o.layers.value_or(0);
        c.model.numHeads = o.heads.value_or(0);
        // A given value, 0 included, is left to validate() ("must be ..., got 0").
        for (auto [given, field] : {std::pair{o.dModel.has_value(), "model.d_model"},
                                    {o.dFf.has_value(), "model.d_ff"},
                                    {o.layers.has_value(), "model.num_layers"},
                                    {o.heads.has_value(), "model.num_heads"}}) {
            if (!given) {
                errors.push_back({field, "required with --model custom"});
            }
        }
    } else if (auto preset = presetModel(model)) {
        c.model = *preset;
        if (dimsGiven) {
            errors.push_back({"model.preset", "--d-model/--d-ff/--layers/--heads need --model "
                                              "custom (preset '" +
                                                  model + "' fixes them)"});
        }
    } else {
        c.model.preset = model; // validate() names the unknown preset
    }
    c.model.vocabSize = o.vocab;
    c.contextLength = ctx;
    c.batchSize = o.batch;
    c.warmupSteps = o.warmup;
    c.measureSteps = o.steps;
    c.device = o.device;
    c.seed = o.seed;
    c.threads = o.threads;
    c.sampleHz = o.sampleHz;
    c.telemetryHz = o.telemetryHz;
    c.gradNorms = o.gradNorms;
    if (o.profileOps) {
        c.opProfile = defaultOpProfileRequest(o.warmup, o.profileTrace);
        if (o.profileStep >= 0) {
            c.opProfile->firstStep = o.profileStep;
        } else if (o.profileStep != -1) {
            errors.push_back({"op_profile.first_step", "must be a step index (0 or more), got " +
                                                           std::to_string(o.profileStep)});
        }
        c.opProfile->stepCount = o.profileSteps;
    }
    if (auto p = parsePrecision(precision)) {
        c.precision = *p;
    } else {
        errors.push_back(
            {"precision", "'" + precision + "' is not one of " + joinNames(kPrecisions)});
    }
    if (auto m = parseMode(mode)) {
        c.mode = *m;
    } else {
        errors.push_back({"mode", "'" + mode + "' is not one of " + joinNames(kModes)});
    }
    if (const char* fault = std::getenv("LMPROF_FAULT_OOM"); fault && *fault) {
        if (auto phase = parsePhase(fault)) {
            c.faultOomPhase = *phase;
        } else {
            errors.push_back({"fault_oom_phase", std::string("'") + fault +
                                                     "' is not forward, backward or optimizer"});
        }
    }
    if (!errors.empty()) {
        printConfigErrors(errors);
        return std::nullopt;
    }
    return acceptConfig(c, engine) ? std::optional<RunConfig>(c) : std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Driving a session

void printStep(const std::string& label, const StepRecord& s, const RunConfig& c) {
    std::fprintf(stderr, "  %s step %d/%d%s  fwd %.2f  bwd %.2f  opt %.2f  step %.2f ms\n",
                 label.c_str(), s.index + 1, c.warmupSteps + c.measureSteps,
                 s.warmup ? " (warmup)" : "", s.forwardMs, s.backwardMs, s.optimizerMs, s.totalMs);
}

// The id lmprof-cli gives the i-th run (0-based) of an invocation.
std::string runIdFor(const RunConfig& c, size_t i) {
    return runLabel(c) + "-" + std::to_string(i + 1);
}

// Where each profiled run's Chrome trace goes: "{run}" in --profile-trace becomes the run's
// id; without the flag, beside the --json file (out.json -> out.<id>.trace.json), else in
// the working directory.
void assignTracePaths(std::vector<RunConfig>& configs, const CommonOptions& o) {
    std::string pattern = o.profileTrace;
    if (pattern.empty()) {
        const std::filesystem::path json(o.jsonPath);
        pattern =
            o.jsonPath.empty()
                ? std::string("{run}.trace.json")
                : (json.parent_path() / (json.stem().string() + ".{run}.trace.json")).string();
    }
    for (size_t i = 0; i < configs.size(); ++i) {
        if (!configs[i].opProfile) {
            continue;
        }
        std::string path = pattern;
        const std::string id = runIdFor(configs[i], i);
        for (size_t at = path.find("{run}"); at != std::string::npos; at = path.find("{run}", at)) {
            path.replace(at, 5, id);
            at += id.size();
        }
        // Absolute, so that the result set still finds it from elsewhere.
        configs[i].opProfile->tracePath = std::filesystem::absolute(path).string();
    }
}

// Runs configs in order on the engine; `skip` may turn a config into a skipped result
// without running it. Calls `finished` as each run ends.
template <typename SkipFn, typename DoneFn>
std::vector<RunResult> runAll(SessionInterface& session, const std::vector<RunConfig>& configs,
                              bool quiet, SkipFn skip, DoneFn finished) {
    std::vector<RunResult> results;
    for (size_t i = 0; i < configs.size(); ++i) {
        if (g_interrupts.load() > 0) {
            break;
        }
        if (auto skipped = skip(configs[i])) {
            results.push_back(std::move(*skipped));
            finished(results.back());
            continue;
        }
        const std::string label = "[" + std::to_string(i + 1) + "/" +
                                  std::to_string(configs.size()) + " " + runLabel(configs[i]) + "]";
        if (!quiet) {
            std::fprintf(stderr, "%s starting (%.1fM parameters)\n", label.c_str(),
                         static_cast<double>(parameterCount(configs[i].model)) / 1e6);
        }
        // A warning, not a refusal: the run may still be wanted (to see where it fails).
        if (const std::string fit =
                fitWarning(configs[i], session.deviceMemoryBytes(configs[i].device));
            !fit.empty()) {
            std::fprintf(stderr, "%s warning: %s\n", label.c_str(), fit.c_str());
        }
        const int index = session.submit(configs[i]);
        bool done = false;
        bool cancelSent = false;
        while (!done) {
            session.waitForEvents(std::chrono::milliseconds(100));
            if (g_interrupts.load() > 0 && !cancelSent) {
                std::fprintf(stderr, "lmprof-cli: interrupted, cancelling the current run\n");
                session.cancel();
                cancelSent = true;
            }
            for (auto& event : session.drain()) {
                // A remote engine's other clients' runs are theirs: only this one counts.
                if (auto* step = std::get_if<StepFinished>(&event);
                    step && step->runIndex == index && !quiet) {
                    printStep(label, step->step, configs[i]);
                } else if (auto* fin = std::get_if<RunFinished>(&event);
                           fin && fin->runIndex == index) {
                    // A local run is named by its place in this invocation; a server's
                    // keeps the server's id, unique among every client's runs there.
                    if (!session.info().remote) {
                        fin->result.id = runIdFor(configs[i], i);
                    }
                    results.push_back(std::move(fin->result));
                    finished(results.back());
                    done = true;
                }
            }
        }
    }
    return results;
}

int exitCodeFor(const std::vector<RunResult>& runs) {
    int code = kExitOk;
    for (const auto& r : runs) {
        if (r.status == RunStatus::Oom) {
            code = kExitOom;
        } else if (r.status != RunStatus::Ok && r.status != RunStatus::Skipped && code == kExitOk) {
            code = kExitFailure;
        }
    }
    return g_interrupts.load() > 0 && code == kExitOk ? kExitFailure : code;
}

} // namespace

int reportRuns(const std::vector<RunResult>& runs, const CommonOptions& o,
               const Environment* environment) {
    const auto format = parseReportFormat(o.format);
    writeReport(std::cout, runs, *format);
    if (!o.jsonPath.empty()) {
        try {
            // A run that measured nothing (cancelled at once) never replaces an existing
            // result file: it goes beside it.
            std::filesystem::path target = o.jsonPath;
            const bool measuredAny = std::any_of(runs.begin(), runs.end(), [](const auto& r) {
                return !measuredStepTimes(r.steps).empty();
            });
            if (!measuredAny && std::filesystem::exists(target)) {
                target.replace_filename(target.stem().string() + ".unmeasured" +
                                        target.extension().string());
                std::fprintf(stderr,
                             "lmprof-cli: --json: no run measured a step; %s is kept and the "
                             "runs go to %s\n",
                             o.jsonPath.c_str(), target.c_str());
            }
            saveResultSetAtomic(makeSet(runs, o.device, environment), target);
            if (!o.quiet) {
                std::fprintf(stderr, "saved %zu run(s) to %s\n", runs.size(), target.c_str());
            }
        } catch (const std::exception& e) {
            std::cerr << "lmprof-cli: " << e.what() << "\n";
            return kExitFailure;
        }
    }
    return exitCodeFor(runs);
}

void printStepLine(const std::string& label, const StepRecord& step, const RunConfig& config) {
    printStep(label, step, config);
}

bool interrupted() {
    return g_interrupts.load() > 0;
}

const std::atomic<bool>* interruptFlag() {
    return &g_interrupted;
}

namespace {

auto noSkip = [](const RunConfig&) { return std::optional<RunResult>(); };

} // namespace

// ---------------------------------------------------------------------------------------
// Shared by the commands (cli_commands.h)

ResultSet makeSet(std::vector<RunResult> runs, const std::string& device,
                  const Environment* environment) {
    ResultSet set;
    set.created = utcNow();
    set.tool = toolInfo();
    set.environment = environment ? *environment : probeEnvironment(resolveDevice(device));
    set.runs = std::move(runs);
    return set;
}

// Checked before anything runs (outputFileProblem).
bool checkJsonTarget(const std::string& path) {
    if (path.empty()) {
        return true;
    }
    if (const std::string problem = outputFileProblem(path); !problem.empty()) {
        std::cerr << "lmprof-cli: --json " << path << ": " << problem << "\n";
        return false;
    }
    return true;
}

bool checkFormat(const std::string& format) {
    if (parseReportFormat(format)) {
        return true;
    }
    std::cerr << "lmprof-cli: --format: '" << format << "' is not one of table, markdown, csv\n";
    return false;
}

// ---------------------------------------------------------------------------------------
// run

std::optional<RunConfig> buildRunConfig(const RunOptions& o, std::optional<DdpRequest> ddp,
                                        const SessionInterface* engine) {
    if (o.snapshotPath.empty()) {
        return buildConfig(o.model, o.ctx, o.precision, o.mode, o.common, std::nullopt, ddp,
                           engine);
    }
    SnapshotRequest snap = defaultSnapshotRequest(o.snapshotPath, o.common.warmup);
    if (o.snapshotStep >= 0) {
        snap.firstStep = o.snapshotStep;
    }
    snap.stepCount = o.snapshotSteps;
    snap.maxEntries = o.snapshotMaxEntries;
    return buildConfig(o.model, o.ctx, o.precision, o.mode, o.common, snap, ddp, engine);
}

int runCommand(const RunOptions& o) {
    if (!checkFormat(o.common.format) || !checkJsonTarget(o.common.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.common);
    if (!engine) {
        return kExitFailure;
    }
    auto config = buildRunConfig(o, std::nullopt, engine.get());
    if (!config) {
        return kExitUsage;
    }
    std::vector<RunConfig> configs{*config};
    assignTracePaths(configs, o.common);
    auto runs = runAll(*engine, configs, o.common.quiet, noSkip, [](const RunResult&) {});
    const Environment environment = engine->environment(o.common.device);
    const int code = reportRuns(runs, o.common, &environment);
    if (!runs.empty() && runs.front().opProfile) {
        if (*parseReportFormat(o.common.format) == ReportFormat::Csv) {
            // stdout is one CSV table; the profile's own CSV is one command away.
            std::fprintf(stderr, "op profile: lmprof-cli ops %s --format csv\n",
                         o.common.jsonPath.empty() ? "FILE.json (save with --json)"
                                                   : o.common.jsonPath.c_str());
        } else {
            std::cout << "\n";
            writeOpReport(std::cout, runs, {}, *parseReportFormat(o.common.format));
        }
    }
    for (const auto& r : runs) {
        if (const auto& snap = r.memorySnapshot) {
            if (snap->error) {
                std::cerr << "lmprof-cli: --memory-snapshot: " << *snap->error << "\n";
                return code == kExitOk ? kExitFailure : code;
            }
            std::fprintf(
                stderr, "memory snapshot of step(s) %d..%d: %lld events%s, written to %s\n",
                snap->firstStep, snap->firstStep + snap->stepCount - 1,
                static_cast<long long>(snap->entries),
                snap->truncated ? " (limit reached, later ones dropped)" : "", snap->path.c_str());
        }
    }
    return code;
}

// ---------------------------------------------------------------------------------------
// sweep

namespace {

// The lists as a SweepSpec. Each model is built once with the first of the other lists
// (which checks the model flags); the other list entries are parsed one by one.
std::optional<SweepSpec> buildSweep(const SweepOptions& o, const SessionInterface& engine) {
    for (auto [empty, flag] : {std::pair{o.models.empty(), "--models"},
                               {o.ctx.empty(), "--ctx"},
                               {o.precisions.empty(), "--precision"},
                               {o.modes.empty(), "--mode"},
                               {o.warmups.empty(), "--warmup"}}) {
        if (empty) {
            std::cerr << "lmprof-cli: " << flag << ": the list is empty\n";
            return std::nullopt;
        }
    }
    CommonOptions common = o.common;
    common.warmup = o.warmups.front();
    // The base is checked in a mode with a backward when one is listed, so --grad-norms
    // goes with forward,train (expandSweep leaves it out of the forward runs).
    std::string baseMode = o.modes.front();
    if (common.gradNorms) {
        const auto withBackward = std::find_if(o.modes.begin(), o.modes.end(),
                                               [](const std::string& m) { return m != "forward"; });
        baseMode = withBackward != o.modes.end() ? *withBackward : baseMode;
    }
    SweepSpec spec;
    for (const auto& model : o.models) {
        auto c = buildConfig(model, o.ctx.front(), o.precisions.front(), baseMode, common,
                             std::nullopt, std::nullopt, &engine);
        if (!c) {
            return std::nullopt;
        }
        spec.base = *c;
        spec.models.push_back(c->model);
    }
    for (const auto& p : o.precisions) {
        if (auto precision = parsePrecision(p)) {
            spec.precisions.push_back(*precision);
        } else {
            printConfigErrors(
                {{"precision", "'" + p + "' is not one of " + joinNames(kPrecisions)}});
            return std::nullopt;
        }
    }
    for (const auto& m : o.modes) {
        if (auto mode = parseMode(m)) {
            spec.modes.push_back(*mode);
        } else {
            printConfigErrors({{"mode", "'" + m + "' is not one of " + joinNames(kModes)}});
            return std::nullopt;
        }
    }
    spec.contexts = o.ctx;
    spec.warmups = o.warmups;
    return spec;
}

} // namespace

int sweepCommand(const SweepOptions& o) {
    if (!checkFormat(o.common.format) || !checkJsonTarget(o.common.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.common);
    if (!engine) {
        return kExitFailure;
    }
    const auto spec = buildSweep(o, *engine);
    if (!spec) {
        return kExitUsage;
    }
    std::vector<RunConfig> configs = expandSweep(*spec); // cheapest first
    if (!o.shard.empty()) {
        int index = 0;
        int count = 0;
        char extra = 0;
        if (std::sscanf(o.shard.c_str(), "%d/%d%c", &index, &count, &extra) != 2 || count < 1 ||
            count > 100000 || index < 1 || index > count) {
            std::cerr << "lmprof-cli: --shard: '" << o.shard
                      << "' is not i/n with 1 <= i <= n (e.g. 2/4: the second of four shards)\n";
            return kExitUsage;
        }
        const size_t all = configs.size();
        configs = sweepShard(configs, index, count);
        if (!o.common.quiet) {
            std::fprintf(stderr, "shard %d/%d: %zu of the sweep's %zu configurations\n", index,
                         count, configs.size(), all);
        }
    }
    assignTracePaths(configs, o.common);
    for (const auto& c : configs) {
        if (!acceptConfig(c, engine.get())) {
            return kExitUsage;
        }
    }
    OomSkipper skipper;
    auto skip = [&](const RunConfig& c) { return o.keepAfterOom ? std::nullopt : skipper.skip(c); };
    // A failed autosave (full disk, missing folder) is said once; the sweep goes on and its
    // table and --json are still written.
    bool autosaveFailed = false;
    auto finished = [&](const RunResult& r) {
        skipper.record(r);
        if (o.autosavePath.empty() || r.status == RunStatus::Skipped) {
            return;
        }
        try {
            appendRunJsonl(o.autosavePath, r);
        } catch (const std::exception& e) {
            if (!autosaveFailed) {
                std::cerr << "lmprof-cli: --autosave: " << e.what()
                          << "; the sweep goes on without it\n";
            }
            autosaveFailed = true;
        }
    };
    try {
        auto runs = runAll(*engine, configs, o.common.quiet, skip, finished);
        const Environment environment = engine->environment(o.common.device);
        const int code = reportRuns(runs, o.common, &environment);
        return autosaveFailed && code == kExitOk ? kExitFailure : code;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: " << e.what() << "\n";
        return kExitFailure;
    }
}

// ---------------------------------------------------------------------------------------
// show

namespace {
// The runs of a result set or an autosave file (every run written in full); a cut last
// line of an autosave file is reported on stderr as a warning.
// A file with no readable run (empty, or every line skipped) is an error, not an empty table.
std::vector<RunResult> loadRunsWarning(const std::string& path) {
    JsonlRuns loaded = loadRuns(path);
    for (const auto& w : loaded.warnings) {
        std::cerr << "lmprof-cli: warning: " << path << ": " << w << "\n";
    }
    if (loaded.runs.empty()) {
        throw ResultFormatError(path + (loaded.warnings.empty()
                                            ? std::string(": the file holds no run")
                                            : ": no readable run (" +
                                                  std::to_string(loaded.warnings.size()) +
                                                  " line(s) skipped)"));
    }
    return std::move(loaded.runs);
}
} // namespace

int showCommand(const ShowOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    const ReportFormat format = *parseReportFormat(o.format);
    try {
        // A result set may hold the precision lab's tables, with or without runs.
        ResultSet set;
        if (std::filesystem::path(o.path).extension() != ".jsonl") {
            try {
                set = loadResultSet(o.path);
            } catch (const ResultFormatError&) {
                // an autosave file without its extension: loadRuns below reads it
            }
            if (!set.precisionLab.empty()) {
                if (!set.runs.empty()) {
                    writeReport(std::cout, set.runs, format);
                    std::cout << "\n";
                }
                if (const auto& a = set.precisionLab.accumulation) {
                    writeAccumulationReport(std::cout, *a, format);
                }
                for (const auto& d : set.precisionLab.dtypes) {
                    std::cout << "\n";
                    writeDtypeReport(std::cout, d, format);
                }
                return kExitOk;
            }
        }
        const std::vector<RunResult> runs = loadRunsWarning(o.path);
        writeReport(std::cout, runs, format);
        // Data-parallel runs add their tables (CSV stays one table: the runs').
        if (format != ReportFormat::Csv &&
            std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.ddp; })) {
            std::cout << "\n";
            writeDdpReport(std::cout, runs, format);
        }
        return kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot show " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// merge

namespace {

// Two runs measured the same thing: the same configuration, seed, step counts and device.
std::string sameRunKey(const RunResult& r) {
    const std::string device = r.resolvedDevice.empty() ? r.config.device : r.resolvedDevice;
    return configKey(r.config) + " seed " + std::to_string(r.config.seed) + " steps " +
           std::to_string(r.config.warmupSteps) + "+" + std::to_string(r.config.measureSteps) +
           " " + device;
}

} // namespace

int mergeCommand(const MergeOptions& o) {
    if (!checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    std::vector<RunResult> merged;
    std::map<std::string, std::string> seen; // sameRunKey -> "id in file"
    std::map<std::string, int> ids;
    int duplicates = 0;
    try {
        for (const auto& path : o.paths) {
            for (auto& run : loadRunsWarning(path)) {
                const std::string key = sameRunKey(run);
                const std::string where = run.id + " in " + path;
                if (auto it = seen.find(key);
                    it != seen.end() && run.status != RunStatus::Skipped) {
                    std::fprintf(stderr,
                                 "lmprof-cli: merge: duplicate: %s repeats %s (same "
                                 "configuration); the first is kept\n",
                                 where.c_str(), it->second.c_str());
                    ++duplicates;
                    continue;
                }
                seen.emplace(key, where);
                // Shards number their runs from 1 each: an id that repeats gets a suffix.
                if (const int n = ++ids[run.id]; n > 1) {
                    run.id += "." + std::to_string(n);
                }
                merged.push_back(std::move(run));
            }
        }
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot merge " << e.what() << "\n";
        return kExitUsage;
    }
    if (duplicates > 0 || !o.jsonPath.empty()) {
        std::fprintf(stderr, "merged %zu run(s) from %zu file(s); %d duplicate(s) dropped\n",
                     merged.size(), o.paths.size(), duplicates);
    }
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    common.quiet = true;
    const int code = reportRuns(merged, common);
    // The merged set's outcome is the runs' own; merging itself went well.
    return code == kExitOom || code == kExitFailure ? kExitOk : code;
}

// ---------------------------------------------------------------------------------------
// compare

int compareCommand(const CompareOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    try {
        const std::vector<RunResult> a = loadRunsWarning(o.pathA); // A's warnings first
        const std::vector<RunResult> b = loadRunsWarning(o.pathB);
        const Comparison c = compareRuns(a, b);
        writeComparison(std::cout, c, *parseReportFormat(o.format));
        if (c.matched.empty()) {
            // Nothing compared is not "no regression": say so and fail.
            std::cerr << "lmprof-cli: compare: no run of " << o.pathB << " matches an ok run of "
                      << o.pathA << " (same model, context, batch, precision and mode)\n";
            return kExitFailure;
        }
        return o.failOnRegression && c.regressions() > 0 ? kExitFailure : kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot compare " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// ops

int opsCommand(const OpsOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    OpReportOptions options;
    options.top = o.top;
    if (o.by == "region") {
        options.by = OpGrouping::Region;
    } else if (o.by == "op") {
        options.by = OpGrouping::Op;
    } else if (o.by == "row") {
        options.by = OpGrouping::Row;
    } else {
        std::cerr << "lmprof-cli: --by: '" << o.by << "' is not one of region, op, row\n";
        return kExitUsage;
    }
    if (!o.phase.empty()) {
        options.phase = parsePhase(o.phase);
        if (!options.phase) {
            std::cerr << "lmprof-cli: --phase: '" << o.phase << "' is not one of "
                      << joinNames(kPhases) << "\n";
            return kExitUsage;
        }
    }
    if (o.top < 0) {
        std::cerr << "lmprof-cli: --top: must be 0 (all) or more, got " << o.top << "\n";
        return kExitUsage;
    }
    try {
        std::vector<RunResult> chosen;
        for (auto& r : loadRunsWarning(o.path)) {
            if (o.runId.empty() ? r.opProfile.has_value() : r.id == o.runId) {
                chosen.push_back(std::move(r));
            }
        }
        writeOpReport(std::cout, chosen, options, *parseReportFormat(o.format));
        if (chosen.empty()) {
            std::cerr << "lmprof-cli: " << o.path << ": "
                      << (o.runId.empty() ? std::string("no run has an op profile (run with "
                                                        "--profile-ops)")
                                          : "no run with id '" + o.runId + "'")
                      << "\n";
            return kExitUsage;
        }
        return kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot read " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// columns

int columnsCommand() {
    std::cout << "key,unit,kind,header\r\n";
    for (const RunColumn* c : csvLayout()) {
        std::cout << csvQuote(c->key) << "," << csvQuote(c->unit) << "," << toString(c->kind) << ","
                  << csvQuote(c->header) << "\r\n";
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------
// signals

void installInterruptHandler() {
    struct sigaction sa {};
    sa.sa_handler = [](int sig) {
        g_interrupted.store(true);
        if (g_interrupts.fetch_add(1) > 0) {
            std::signal(sig, SIG_DFL);
            std::raise(sig);
        }
    };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

} // namespace lmprof::app
