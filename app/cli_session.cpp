// What lmprof-cli's commands that run benchmarks share (cli_commands.h): configurations from
// flags, driving the engine (local or remote) through its runs with progress, reports and
// result sets, exit codes from outcomes, and the signal handler. The commands themselves are
// in their own files (cli_registry.cpp lists them).
//
// Sections: flags to configs · driving a session · shared checks · signals.

#include "cli_commands.h"
#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/sweep.h"
#include "lmprof/engine/sweep_driver.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <unistd.h>
#include <variant>

namespace lmprof::app {

using namespace lmprof::engine;

namespace {

std::atomic<int> g_interrupts{0};
std::atomic<bool> g_interrupted{false}; // the same, as the cancel flag the engine polls
// Said by the handler as a second signal ends the process (setLastWords).
std::string g_lastWordsText;
std::atomic<const char*> g_lastWords{nullptr};
std::atomic<size_t> g_lastWordsSize{0};

} // namespace

// ---------------------------------------------------------------------------------------
// Flags to configurations

namespace {

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
        {"precision", "--precision"},
        {"mode", "--mode"},
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
    if (it != kFlags.end()) {
        return it->second;
    }
    if (const ValueField* value = valueField(field)) {
        return value->flag;
    }
    const ChoiceField* choice = choiceField(field);
    return choice ? choice->flag : field;
}

} // namespace

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
    // The window's server that has not answered yet (Patience::InTheWindow): what it can
    // run is known once it has; the window checks each run against it then.
    // A local engine that cannot run (a viewer build) is the same: its run says why.
    const bool answered = !engine || engine->info().connected;
    if (errors.empty() && answered) {
        if (auto refusal = engine ? engine->checkRunnable(c) : checkRunnableHere(c)) {
            errors.push_back(*refusal);
        }
    }
    if (!errors.empty()) {
        printConfigErrors(errors);
    }
    return errors.empty();
}

namespace {

// The model --model and the custom dimensions' flags describe, with their mistakes in
// `errors` (a preset with dimensions, custom without them).
ModelConfig modelFromFlags(const std::string& model, const CommonOptions& o,
                           std::vector<ConfigError>& errors) {
    ModelConfig m;
    const bool dimsGiven = o.dModel || o.dFf || o.layers || o.heads;
    if (model == "custom") {
        m.preset = "custom";
        m.dModel = o.dModel.value_or(0);
        m.dFf = o.dFf.value_or(0);
        m.numLayers = o.layers.value_or(0);
        m.numHeads = o.heads.value_or(0);
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
        m = *preset;
        if (dimsGiven) {
            errors.push_back({"model.preset", "--d-model/--d-ff/--layers/--heads need --model "
                                              "custom (preset '" +
                                                  model + "' fixes them)"});
        }
    } else {
        m.preset = model; // validate() names the unknown preset
    }
    return m;
}

} // namespace

std::optional<RunConfig> buildConfig(const std::string& model, int64_t ctx,
                                     const std::string& precision, const std::string& mode,
                                     const CommonOptions& o,
                                     std::optional<SnapshotRequest> snapshot,
                                     std::optional<DdpRequest> ddp,
                                     const SessionInterface* engine) {
    std::vector<ConfigError> errors;
    RunConfig c;
    c.ddp = ddp;
    c.memorySnapshot = std::move(snapshot);
    c.model = modelFromFlags(model, o, errors);
    c.model.vocabSize = o.vocab;
    c.contextLength = ctx;
    c.batchSize = o.batch;
    c.warmupSteps = o.warmup;
    c.measureSteps = o.steps;
    c.device = o.device;
    for (const ValueField& f : valueFields()) {
        std::visit([&](auto member) { c.*member = o.values.*member; }, f.member);
    }
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
    for (const auto& [key, values] : o.choices) {
        const ChoiceField& field = *choiceField(key);
        if (values.size() > 1) {
            errors.push_back({key, "takes one value here (lmprof-cli sweep takes a list)"});
        } else if (values.size() == 1) {
            if (auto why = field.unknown(values.front())) {
                errors.push_back({key, *why});
            } else {
                field.set(c, values.front());
            }
        }
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

namespace {

// The step is its index, counted from 0 as the result set, the charts, --profile-ops and
// --snapshot-step count it, then how far the run is: "step 0 (1 of 3, warmup)".
void printStep(const std::string& label, const StepRecord& s, const RunConfig& c) {
    std::fprintf(stderr,
                 "  %s step %d (%lld of %lld%s)  fwd %.2f  bwd %.2f  opt %.2f  step %.2f ms\n",
                 printable(label).c_str(), s.index, static_cast<long long>(s.index) + 1,
                 static_cast<long long>(c.warmupSteps) + c.measureSteps, s.warmup ? ", warmup" : "",
                 s.forwardMs, s.backwardMs, s.optimizerMs, s.totalMs);
}

// The id lmprof-cli gives the i-th run (0-based) of an invocation.
std::string runIdFor(const RunConfig& c, size_t i) {
    return runLabel(c) + "-" + std::to_string(i + 1);
}

} // namespace

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

void driveUntilIdle(SessionInterface& engine, const char* what, const std::function<bool()>& busy,
                    const std::function<void(std::vector<SessionEvent>&)>& handle,
                    const std::function<void()>& cancel) {
    bool cancelSent = false;
    while (busy()) {
        engine.waitForEvents(std::chrono::milliseconds(100));
        if (g_interrupts.load() > 0 && !cancelSent) {
            std::fprintf(stderr, "lmprof-cli: interrupted, cancelling %s\n", what);
            if (cancel) {
                cancel();
            }
            engine.cancel();
            cancelSent = true;
        }
        std::vector<SessionEvent> events = engine.drain();
        handle(events);
    }
}

void waitForJob(SessionInterface& engine, const char* what,
                const std::function<bool(SessionEvent&)>& handle) {
    bool ended = false;
    driveUntilIdle(
        engine, what, [&] { return !ended; },
        [&](std::vector<SessionEvent>& events) {
            for (auto& event : events) {
                if (!ended && handle(event)) {
                    ended = true;
                }
            }
        });
}

LabReport runOnEngine(SessionInterface& engine, const LabRequest& request) {
    const int index = engine.submitLab(request);
    LabReport report = unstartedLab(request, "interrupted before it started");
    waitForJob(engine, "the experiment", [&](SessionEvent& event) {
        auto* fin = std::get_if<LabFinished>(&event);
        if (fin && fin->labIndex == index) {
            report = std::move(fin->report);
            return true;
        }
        return false;
    });
    return report;
}

// Runs configs in order on the engine through its driver (sweep_driver.h, as the window's
// Sweep view does): one at a time, with skipAfterOom the larger configurations of a family
// that ran out of memory turned into skipped results. Prints each run's start and steps,
// calls `finished` as each run ends, and cancels on Ctrl+C.
std::vector<RunResult> runAll(SessionInterface& session, const std::vector<RunConfig>& configs,
                              bool quiet, bool skipAfterOom, const DoneFn& finished) {
    std::vector<RunResult> results;
    if (g_interrupts.load() > 0) {
        return results;
    }
    const auto done = [&](RunResult r) {
        results.push_back(std::move(r));
        if (finished) {
            finished(results.back());
        }
    };
    // Every configuration ends as a result before the next is considered: the one in flight
    // is configs[results.size()].
    const auto label = [&] {
        const size_t i = results.size();
        return "[" + std::to_string(i + 1) + "/" + std::to_string(configs.size()) + " " +
               runLabel(configs[i]) + "]";
    };
    const auto submit = [&](const RunConfig& c) {
        if (!quiet) {
            std::fprintf(stderr, "%s starting (%.1fM parameters)\n", label().c_str(),
                         static_cast<double>(parameterCount(c.model)) / 1e6);
        }
        // A warning, not a refusal: the run may still be wanted (to see where it fails).
        if (const std::string fit = fitWarning(c, session.deviceMemoryBytes(c.device));
            !fit.empty()) {
            std::fprintf(stderr, "%s warning: %s\n", label().c_str(), fit.c_str());
        }
        return session.submit(c);
    };
    SweepDriver driver;
    driver.start(configs, !skipAfterOom, submit, done);
    // Cancelled, the run in flight still ends (as cancelled) and is kept.
    const auto busy = [&] { return driver.running() || driver.current() >= 0; };
    const auto handle = [&](std::vector<SessionEvent>& events) {
        for (SessionEvent& event : events) {
            // A remote engine's other clients' runs are theirs: only the driver's counts.
            const int index = driver.current();
            if (auto* step = std::get_if<StepFinished>(&event);
                step && step->runIndex == index && !quiet) {
                printStep(label(), step->step, configs[results.size()]);
            } else if (auto* fin = std::get_if<RunFinished>(&event);
                       fin && fin->runIndex == index) {
                // A local run is named by its place in this invocation; a server's keeps
                // the server's id, unique among every client's runs there.
                RunResult result = fin->result;
                if (!session.info().remote) {
                    result.id = runIdFor(configs[results.size()], results.size());
                }
                done(std::move(result));
            }
            driver.observe(event); // after the result is kept: it may submit the next
        }
    };
    driveUntilIdle(session, "the current run", busy, handle, [&] { driver.cancel(); });
    return results;
}

namespace {

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
    if (*format != ReportFormat::Csv) {
        writeModuleReport(std::cout, runs, *format); // lmprof-cli watch's time per module
    }
    writeVerdictReport(std::cout, runs, *format);
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

// ---------------------------------------------------------------------------------------
// Shared by the commands (cli_commands.h)

std::string versionText(const std::string& program) {
    const ToolInfo tool = toolInfo();
    std::string text = program + " " + tool.version + " (" + tool.git + ")\n" + "result sets " +
                       std::string(kResultSchema) + ", remote protocol " +
                       std::to_string(remote::kProtocolVersion) + "\n";
    // Named, not opened: --version must not load LibTorch either.
    text += engineAvailable() ? "engine " + engineModulePath() + " (loaded by the first local run)"
                              : "no engine: a viewer build (run on a server with --connect)";
    return text;
}

ResultSet makeSet(std::vector<RunResult> runs, const std::string& device,
                  const Environment* environment) {
    ResultSet set;
    set.created = utcNow();
    set.tool = toolInfo();
    set.environment = environment ? *environment : environmentHere(device);
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
// signals

void setLastWords(const std::string& text) {
    g_lastWords.store(nullptr); // the handler never reads a string being replaced
    g_lastWordsText = text;
    g_lastWordsSize.store(g_lastWordsText.size());
    g_lastWords.store(g_lastWordsText.empty() ? nullptr : g_lastWordsText.c_str());
}

void installInterruptHandler() {
    struct sigaction sa {};
    sa.sa_handler = [](int sig) {
        g_interrupted.store(true);
        if (g_interrupts.fetch_add(1) > 0) {
            if (const char* words = g_lastWords.load()) {
                [[maybe_unused]] const auto n = write(STDERR_FILENO, words, g_lastWordsSize.load());
            }
            std::signal(sig, SIG_DFL);
            std::raise(sig);
        }
    };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

} // namespace lmprof::app
