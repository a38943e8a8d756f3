// lmprof-cli watch [--json OUT] -- python train.py ARGS: runs an unmodified PyTorch script
// with the lmprof Python package watching it (docs/WATCH.md, "No code change"), prints each
// step as the script's journal grows, and reports and saves its run(s) when it ends. Under
// torchrun every rank is its own run.

#include "cli_commands.h"
#include "cli_registry.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "lmprof/engine/watch_journal.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace lmprof::app {

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

struct WatchOptions {
    WatchLaunch launch; // the script and what its watcher is told
    std::string jsonPath;
    std::string format = "table";
    bool quiet = false;
    std::string connect;           // or: show a script that serves, instead of running one
    bool againstReference = false; // then run lmprof's engine at each run's size, and compare
};

// Every rank in the folder, by its journal (run.json.steps.jsonl, run.rank1.json.steps.jsonl,
// ...) or, for a rank that closed its run before a poll saw the journal, its result set.
// Keyed by the journal's name; a journal that is not there reads as empty.
void findJournals(const fs::path& dir, std::map<std::string, WatchJournal>& journals) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".json") {
            name += kWatchJournalSuffix;
        } else if (name.size() <= kWatchJournalSuffix.size() ||
                   !name.ends_with(kWatchJournalSuffix)) {
            continue;
        }
        if (!journals.contains(name)) {
            journals.emplace(name, WatchJournal(dir / name));
        }
    }
}

std::string ms(const std::optional<double>& v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", v.value_or(0.0));
    return text;
}

} // namespace

std::string describeExit(int status) {
    if (WIFSIGNALED(status)) {
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    }
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

namespace {

// One line a step: the phases as the watcher split them, the loss when logged.
void printWatchedStep(const std::string& label, const StepRecord& s) {
    if (s.evaluation) { // gradient-free forwards between the steps (docs/WATCH.md)
        std::fprintf(stderr,
                     "  [%s] evaluation before step %d: %s ms, %d forward(s), not in its data\n",
                     printable(label).c_str(), s.index, ms(s.evaluation->ms).c_str(),
                     s.evaluation->forwards);
    }
    // The label is the script's run id: printable() keeps its escapes off the terminal. The
    // step is its index, as the result set, the window's axis, --profile-ops's step and the
    // verdicts' evidence count it: from 0.
    std::string line = "  [" + printable(label) + "] step " + std::to_string(s.index) +
                       (s.warmup ? (s.compiled ? " (compiled)" : " (warmup)") : "") + "  data " +
                       ms(s.dataMs) + "  fwd " + ms(s.forwardMs) + "  bwd " + ms(s.backwardMs) +
                       "  opt " + ms(s.optimizerMs) + "  rest " + ms(s.restMs) + "  step " +
                       ms(s.totalMs) + " ms";
    if (s.microBatches > 1) {
        line += "  x" + std::to_string(s.microBatches) + " micro-batches";
    }
    if (s.loss) {
        char loss[32];
        std::snprintf(loss, sizeof loss, "  loss %.4g", *s.loss);
        line += loss;
    }
    if (s.peakAllocatedBytes > 0) {
        line += "  peak " + formatBytes(s.peakAllocatedBytes);
    }
    std::fprintf(stderr, "%s\n", line.c_str());
}

// Prints at most kLinesPerSecond step lines: a fast loop shows its latest steps and how many
// went by unprinted. `flush` prints what is given whatever the time.
class StepPrinter {
public:
    explicit StepPrinter(bool quiet) : m_quiet(quiet) {}
    void operator()(const std::string& label, const std::vector<StepRecord>& steps,
                    bool flush = false) {
        if (m_quiet || steps.empty()) {
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!flush && now - m_last < std::chrono::milliseconds(1000 / kLinesPerSecond)) {
            m_unprinted += steps.size();
            return;
        }
        const size_t from = steps.size() > kBurst ? steps.size() - 1 : 0;
        m_unprinted += from;
        if (m_unprinted > 0) {
            std::fprintf(stderr, "  (%zu step(s) not shown)\n", m_unprinted);
            m_unprinted = 0;
        }
        for (size_t i = from; i < steps.size(); ++i) {
            printWatchedStep(label, steps[i]);
        }
        m_last = now;
    }

private:
    static constexpr int kLinesPerSecond = 20;
    static constexpr size_t kBurst = 5;
    bool m_quiet;
    std::chrono::steady_clock::time_point m_last{};
    size_t m_unprinted = 0;
};

// Says a run's verdicts (docs/VERDICTS.md) as they appear or change while its steps arrive.
// A run is judged again only once it has a quarter more steps than when last judged: an
// interval narrows as the square root of the steps, so more often would only repeat itself
// (and judging stays linear in the steps over the whole run).
class VerdictNotes {
public:
    explicit VerdictNotes(bool quiet) : m_quiet(quiet) {}
    void operator()(const WatchJournal& journal) {
        if (m_quiet || !journal.started()) {
            return;
        }
        State& state = m_runs[journal.runId()];
        const size_t steps = journal.stepCount();
        if (steps < kFirst || steps < state.judgedAt + state.judgedAt / 4) {
            return;
        }
        state.judgedAt = steps;
        std::map<VerdictKind, std::pair<Severity, Certainty>> now;
        const std::string label = printable(journal.runId());
        for (const auto& v : judgeRun(journal.run(""))) {
            if (v.certainty == Certainty::Abstained) {
                continue;
            }
            now[v.kind] = {v.severity, v.certainty};
            const auto was = state.shown.find(v.kind);
            if (was == state.shown.end() || was->second != now[v.kind]) {
                std::fprintf(stderr, "  [%s] verdict: %s\n", label.c_str(),
                             printable(verdictLine(v)).c_str());
            }
        }
        for (const auto& [kind, was] : state.shown) {
            if (!now.contains(kind)) {
                std::fprintf(stderr, "  [%s] verdict: %s no longer holds\n", label.c_str(),
                             std::string(toString(kind)).c_str());
            }
        }
        state.shown = std::move(now);
    }

private:
    static constexpr size_t kFirst = 10;
    struct State {
        size_t judgedAt = 0;
        std::map<VerdictKind, std::pair<Severity, Certainty>> shown;
    };
    bool m_quiet;
    std::map<std::string, State> m_runs;
};

// The rank's result set when the script closed its run; else the run its journal holds.
std::optional<RunResult> finalRun(const fs::path& dir, const std::string& journalName,
                                  WatchJournal& journal, const std::string& ended,
                                  std::optional<Environment>& environment) {
    const fs::path result =
        dir / journalName.substr(0, journalName.size() - kWatchJournalSuffix.size());
    std::error_code ec;
    if (fs::exists(result, ec)) {
        ResultSet set = loadResultSet(result);
        if (!environment) {
            environment = set.environment;
        }
        if (!set.runs.empty()) {
            return std::move(set.runs.front());
        }
    }
    journal.poll();
    if (!journal.started()) {
        return std::nullopt;
    }
    if (!environment) {
        environment = journal.environment();
    }
    return journal.run("the watched script " + ended + " before its run was closed");
}

// What went wrong on a viewer's link (messages it could not read, a lost connection), said
// when it changes, at most once a second (a flood of unreadable messages is one line a
// second, with their count); `last` says the latest if it went unsaid.
class LinkNotes {
public:
    explicit LinkNotes(bool quiet) : m_quiet(quiet) {}
    void operator()(const std::string& problem, bool last = false) {
        const auto now = std::chrono::steady_clock::now();
        if (m_quiet || problem.empty() || problem == m_said ||
            (!last && now - m_at < std::chrono::seconds(1))) {
            return;
        }
        std::fprintf(stderr, "lmprof-cli: watch: %s\n", printable(problem).c_str());
        m_said = problem;
        m_at = now;
    }

private:
    bool m_quiet;
    std::string m_said;
    std::chrono::steady_clock::time_point m_at{};
};

// watch --connect: a viewer of a script that serves its run (listen=), through the same
// client as the window's File > Connect. Ends once every run it saw has finished.
int viewCommand(const WatchOptions& o) {
    const auto engine = openEngine(o.connect, o.launch.tokenFile, o.quiet, Patience::UntilCtrlC);
    if (!engine) {
        return interrupted() ? 128 + SIGINT : kExitUsage;
    }
    StepPrinter print(o.quiet);
    std::map<int, std::string> ids;
    std::map<int, RunResult> finished;
    LinkNotes link(o.quiet);
    while (!interrupted() && (ids.empty() || finished.size() < ids.size())) {
        engine->waitForEvents(std::chrono::milliseconds(200));
        link(engine->info().problem);
        for (auto& event : engine->drain()) {
            if (auto* started = std::get_if<RunStarted>(&event)) {
                ids[started->runIndex] = started->header.id;
            } else if (auto* step = std::get_if<StepFinished>(&event)) {
                print(ids.contains(step->runIndex) ? ids[step->runIndex] : "run", {step->step});
            } else if (auto* done = std::get_if<RunFinished>(&event)) {
                ids.emplace(done->runIndex, done->result.id);
                finished[done->runIndex] = std::move(done->result);
            }
        }
    }
    link(engine->info().problem, true);
    std::vector<RunResult> runs;
    for (auto& [index, run] : finished) {
        runs.push_back(std::move(run));
    }
    if (runs.empty()) {
        std::cerr << "lmprof-cli: watch: interrupted before any run finished\n";
        return kExitFailure;
    }
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    const Environment environment = engine->environment("");
    reportRuns(runs, common, &environment);
    return kExitOk;
}

// Where the op trace and the memory pickle go: beside the result set, as the engine writes
// them (docs/OP_PROFILE.md), not into the script's private folder, which is removed. False
// (after saying why) when a snapshot has nowhere to go.
bool placeOutputs(const std::string& jsonPath, WatchLaunch& launch) {
    const fs::path json(jsonPath);
    const auto beside = [&](const char* suffix) {
        return (json.parent_path() / (json.stem().string() + ".{run}" + suffix)).string();
    };
    if (launch.profileOps >= 0 && launch.opsTrace.empty() && !jsonPath.empty()) {
        launch.opsTrace = beside(".trace.json");
    }
    if (launch.memorySnapshot >= 0 && launch.snapshotPath.empty()) {
        if (jsonPath.empty()) {
            std::cerr << "lmprof-cli: watch: --memory-snapshot: give --json (the pickle goes "
                         "beside it) or --snapshot-path\n";
            return false;
        }
        launch.snapshotPath = beside(".snapshot.pickle");
    }
    return true;
}

// Each journal's run as the script closed it, printing the steps recorded after the last
// poll; a journal that cannot be read is said and skipped.
std::vector<RunResult> finalRuns(const fs::path& dir, std::map<std::string, WatchJournal>& journals,
                                 const std::string& ended, StepPrinter& print,
                                 std::optional<Environment>& environment) {
    std::vector<RunResult> runs;
    for (auto& [name, journal] : journals) {
        try {
            const int seen = journal.lastIndex(); // a long run's steps are thinned
            if (auto run = finalRun(dir, name, journal, ended, environment)) {
                std::vector<StepRecord> later;
                std::copy_if(run->steps.begin(), run->steps.end(), std::back_inserter(later),
                             [&](const StepRecord& s) { return s.index > seen; });
                if (!later.empty()) {
                    print(run->id, later, true);
                }
                runs.push_back(std::move(*run));
            }
        } catch (const std::exception& e) {
            std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
        }
    }
    return runs;
}

// What a second Ctrl+C leaves behind, said as lmprof-cli ends.
std::string stoppedAtOnce(const fs::path& dir) {
    return "\nlmprof-cli: watch: stopped at once; every step it finished is in " + dir.string() +
           " (its journal, *.steps.jsonl, which lmprof.recover() reads; or run.json, if it had "
           "closed its run)\n";
}

// A script that never trained (it never imported torch, say): said, with what is not written.
void sayNoTrainingStep(const std::string& ended, const std::string& jsonPath) {
    std::cerr << "lmprof-cli: watch: the script " << ended
              << " and lmprof saw no training step (no optimizer step after a forward of a "
                 "module with parameters; docs/WATCH.md)"
              << (jsonPath.empty() ? "" : "; " + printable(jsonPath) + " is not written") << "\n";
}

int watchCommand(const WatchOptions& o) {
    if (!checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    if (o.launch.command.empty() == o.connect.empty()) {
        std::cerr << "lmprof-cli: watch: give a script's command after -- (to run it), or "
                     "--connect HOST:PORT (to show one that serves its run), not both\n";
        return kExitUsage;
    }
    if (!o.connect.empty()) {
        return viewCommand(o);
    }
    WatchLaunch launch = o.launch;
    if (!placeOutputs(o.jsonPath, launch)) {
        return kExitUsage;
    }
    std::unique_ptr<WatchedScript> script;
    try {
        script = std::make_unique<WatchedScript>(launch);
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
        return kExitUsage;
    }
    const fs::path dir = script->dir();
    // A second Ctrl+C ends lmprof-cli and the script (it dies with its parent) at once: the
    // journals it leaves are named, and kept (the scratch folder is not removed).
    setLastWords(stoppedAtOnce(dir));
    std::map<std::string, WatchJournal> journals;
    StepPrinter print(o.quiet);
    VerdictNotes verdicts(o.quiet);
    auto pollAll = [&] {
        findJournals(dir, journals);
        for (auto& [name, journal] : journals) {
            try {
                const auto steps = journal.poll();
                print(journal.started() ? journal.runId() : name, steps);
                verdicts(journal);
            } catch (const ResultFormatError& e) {
                std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
            }
        }
    };
    bool forwarded = false;
    while (!script->poll()) {
        if (interrupted() && !forwarded) {
            forwarded = true;
            kill(-script->pid(), SIGINT);
            std::fprintf(stderr, "lmprof-cli: watch: passed the interrupt on to the script; "
                                 "waiting for it to close its run\n");
        }
        pollAll();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    pollAll();
    const int status = *script->poll();
    const std::string ended = describeExit(status);
    std::optional<Environment> environment;
    std::vector<RunResult> runs = finalRuns(dir, journals, ended, print, environment);
    const int scriptCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (runs.empty()) {
        sayNoTrainingStep(ended, o.jsonPath);
        return scriptCode; // not the script's failure: its own status, as always
    }
    std::fprintf(stderr, "lmprof-cli: watch: the script %s; %zu run(s)\n", ended.c_str(),
                 runs.size());
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    if (o.againstReference) {
        common.quiet = o.quiet;
        std::vector<RunResult> references = runReferences(runs, common, std::cout);
        std::move(references.begin(), references.end(), std::back_inserter(runs));
    }
    reportRuns(runs, common, &*environment);
    return scriptCode;
}

} // namespace

CliCommand watchEntry() {
    return {"watch",
            "run a PyTorch training script unchanged and profile its steps (-- python train.py)",
            true, [](CLI::App& cmd) {
                auto o = std::make_shared<WatchOptions>();
                cmd.add_option("command", o->launch.command,
                               "the script's command line, after --: python train.py ARGS");
                cmd.add_option("--json", o->jsonPath, "write the run(s) as a result set here");
                cmd.add_option("--format", o->format, "table|markdown|csv");
                cmd.add_option("--name", o->launch.name,
                               "the run's id (default: the model's class)");
                cmd.add_option("--tokens-per-step", o->launch.tokensPerStep,
                               "tokens one step trains on, for tokens/s")
                    ->check(CLI::PositiveNumber);
                cmd.add_option("--warmup", o->launch.warmup, "steps flagged warmup (default 5)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_flag("--quiet", o->quiet, "no line per step");
                cmd.add_option("--listen", o->launch.listen,
                               "the script serves its steps live on HOST:PORT (loopback)");
                cmd.add_option("--connect", o->connect,
                               "show the run of a script that serves on HOST:PORT instead");
                cmd.add_option("--token-file", o->launch.tokenFile,
                               "the token (default: <config dir>/server/token)");
                cmd.add_option("--profile-ops", o->launch.profileOps,
                               "profile step N's ops by module (lmprof-cli ops reads them)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_option("--ops-depth", o->launch.opsDepth,
                               "module names per region: 3 makes blocks.3.attn (default 3)")
                    ->check(CLI::PositiveNumber);
                cmd.add_flag("--ops-fold", o->launch.opsFold,
                             "fold repeated layers into one region: blocks.*.attn");
                cmd.add_flag("--against-reference", o->againstReference,
                             "then run lmprof's engine at the model's size and compare, per "
                             "phase (a CS336-shaped model, or watch(config=...))");
                cmd.add_option("--time-modules", o->launch.moduleDepth,
                               "time each module of the model cut at depth N (blocks.3 at 2)")
                    ->check(CLI::PositiveNumber);
                cmd.add_option("--memory-hz", o->launch.memoryHz,
                               "sample the script's memory N times a second (0: off)")
                    ->check(CLI::Range(0.0, 1000.0));
                cmd.add_option("--memory-snapshot", o->launch.memorySnapshot,
                               "record step N's CUDA allocator history (memory_viz pickle)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_option("--snapshot-path", o->launch.snapshotPath,
                               "the pickle ({run}: the run's id; default: beside --json)");
                cmd.add_option("--profile-trace", o->launch.opsTrace,
                               "the profiled step's Chrome trace ({run}: the run's id; "
                               "default: beside --json)");
                return std::function<int()>([o] { return watchCommand(*o); });
            }};
}

} // namespace lmprof::app
