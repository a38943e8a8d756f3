// The lmprof-cli commands (README.md, "lmprof-cli") behind plain option structs, so
// cli_main.cpp stays a short parse-and-dispatch script. Each returns the process exit code: 0
// success, 2 bad usage or invalid configuration, 3 a run ended out of memory, 1 other.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp_launch.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/session_interface.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace lmprof::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitOom = 3;

// Options shared by run and sweep; dimension flags only apply to --model custom. `warmup`
// is run's --warmup (sweep takes a list, SweepOptions::warmups).
struct CommonOptions {
    std::optional<int64_t> dModel, dFf, layers, heads; // --model custom only
    int64_t vocab = 10000;
    int64_t batch = 4;
    int warmup = 5;
    int steps = 10;
    std::string device = "auto";
    std::string jsonPath;
    std::string format = "table";
    bool quiet = false;
    // The plain fields' flags (ValueField, config.h): --seed, --threads, --sample-hz, ...
    // set these members of `values`, which start at RunConfig's defaults.
    engine::RunConfig values;
    // --profile-ops: op/kernel profile of chosen steps (docs/OP_PROFILE.md).
    bool profileOps = false;
    int profileStep = -1; // -1: the first step after the warmup
    int profileSteps = engine::OpProfileRequest{}.stepCount;
    std::string profileTrace; // Chrome trace path, "{run}" = run id; default beside --json
    // --connect HOST:PORT --token-file F: run on an lmprof-cli serve (docs/REMOTE.md) instead
    // of in this process (run, sweep and the window take them).
    std::string connect;
    std::string tokenFile;
    // The execution variants' flags (ChoiceField, config.h) by field key: one value for run, a
    // list for sweep; empty when not given.
    std::map<std::string, std::vector<std::string>> choices;
    // sweep: the lists of the plain fields a sweep can list (ValueField::sweepAxis), by key;
    // empty when not given (the field's one value in `values` then).
    std::map<std::string, std::vector<int64_t>> valueLists;
};

struct RunOptions {
    CommonOptions common;
    std::string snapshotPath; // --memory-snapshot FILE; empty: none
    int snapshotStep = -1;    // -1: the last warmup step (or step 0 without warmup)
    int snapshotSteps = engine::SnapshotRequest{}.stepCount;
    int64_t snapshotMaxEntries = engine::SnapshotRequest{}.maxEntries;
    std::string model = "tiny";
    int64_t ctx = 128;
    std::string precision = "fp32";
    std::string mode = "train";
};

struct SweepOptions {
    CommonOptions common;
    std::vector<std::string> models = {"tiny"};
    std::vector<int64_t> ctx = {128};
    std::vector<int64_t> batches = {4}; // --batch takes a list here: batch × context scaling
    std::vector<std::string> precisions = {"fp32"};
    std::vector<std::string> modes = {"train"};
    std::vector<int> warmups = {5}; // --warmup takes a list here: the warmup study
    std::string autosavePath;
    bool keepAfterOom = false; // run larger configurations even after an OOM
    std::string shard;         // --shard i/n: every n-th configuration from the i-th
};

// lmprof-cli merge: the runs of several result sets or autosave files (sweep shards) in
// one result set; a run whose configuration another already has is reported and dropped.
struct MergeOptions {
    std::vector<std::string> paths;
    std::string jsonPath;
    std::string format = "table";
};

struct CompareOptions {
    std::string pathA;
    std::string pathB;
    std::string format = "table";
    bool failOnRegression = false; // exit 1 when a run of B is slower beyond noise
};

// lmprof-cli ratio --a X,Y,Z --b U,V,W: mean(B)/mean(A) with the log-ratio test (cli_ratio.cpp).
struct RatioOptions {
    std::string a;
    std::string b;
    std::string format = "table"; // table|json
};

struct OpsOptions {
    std::string path;
    std::string runId; // empty: every run with a profile
    std::string by = "region";
    int top = 0;
    std::string phase; // empty: all phases
    std::string format = "table";
};

struct ShowOptions {
    std::string path;
    std::string format = "table";
};

// lmprof-cli precision accumulate|dtypes (the precision lab, docs/PRECISION_LAB.md).
struct PrecisionOptions {
    std::string device = "auto";
    std::string jsonPath;
    std::string format = "table";
    int64_t maxTerms = engine::AccumulationRequest{}.maxTerms; // accumulate
    std::string model = "toy";                                 // dtypes: toy or a preset
    std::string precision = "all";                             // dtypes: one, or all
    std::string connect; // --connect, --token-file: on an lmprof-cli serve's device
    std::string tokenFile;
    bool quiet = false; // -q: no "connected to" or "saved" lines on stderr
};

// lmprof-cli ddp (docs/DISTRIBUTED.md): the run options plus the data-parallel ones. Run
// as a launcher it spawns world_size local ranks of this binary per strategy; launched by
// torchrun (RANK in the environment) it is one rank.
struct DdpOptions {
    RunOptions run;
    int worldSize = 2;
    std::string backend = "gloo";
    std::vector<std::string> strategies = {"naive"};
    double bucketMb = engine::DdpRequest{}.bucketMb;
    double timeoutS = engine::DdpRequest{}.timeoutS;
    int masterPort = 0; // 0: a free port (launcher), MASTER_PORT (a rank)
};

// The configuration the options describe, validated and checked against this machine;
// nullopt after printing every problem (flag, field, reason) to stderr.
// With `ddp`, the configuration of a data-parallel run (checked with its request in place).
// With `engine`, that engine is asked whether the configuration can run (a remote one's
// devices); else this machine.
std::optional<engine::RunConfig> buildRunConfig(const RunOptions& options,
                                                std::optional<engine::DdpRequest> ddp = {},
                                                const engine::SessionInterface* engine = nullptr);

// The one loop every subcommand that follows the engine runs: hands the engine's events to
// `handle` until `busy()` is false, waiting for them 100 ms at a time. The first Ctrl+C
// says it cancels `what` ("the current run"), calls `cancel` (a driver's, if any) and asks
// the engine to cancel; the run in flight still ends, as cancelled, and is handed on.
void driveUntilIdle(engine::SessionInterface& engine, const char* what,
                    const std::function<bool()>& busy,
                    const std::function<void(std::vector<engine::SessionEvent>&)>& handle,
                    const std::function<void()>& cancel = {});
// Hands every event of the engine to `handle` until it says the job it follows has ended
// (true), as driveUntilIdle.
void waitForJob(engine::SessionInterface& engine, const char* what,
                const std::function<bool(engine::SessionEvent&)>& handle);
// Asks the engine for one precision-lab experiment and waits for its report; Ctrl+C
// cancels it.
engine::LabReport runOnEngine(engine::SessionInterface& engine, const engine::LabRequest& request);
// The session driver run and sweep share (cli_session.cpp).
// Every problem of the configuration, each naming its flag and field, on stderr.
void printConfigErrors(const std::vector<engine::ConfigError>& errors);
// Validates the config and checks it can run on the engine (this machine without one);
// prints every problem otherwise.
bool acceptConfig(const engine::RunConfig& c, const engine::SessionInterface* engine);
// The configuration the flags describe (nullopt after printing every problem).
std::optional<engine::RunConfig> buildConfig(const std::string& model, int64_t ctx,
                                             const std::string& precision, const std::string& mode,
                                             const CommonOptions& o,
                                             std::optional<engine::SnapshotRequest> snapshot = {},
                                             std::optional<engine::DdpRequest> ddp = {},
                                             const engine::SessionInterface* engine = nullptr);
// Where each profiled run's Chrome trace goes (--profile-trace, else beside --json).
void assignTracePaths(std::vector<engine::RunConfig>& configs, const CommonOptions& o);
// Runs configs in order on the engine through its driver (lmprof/engine/sweep_driver.h, the
// window's too), printing progress unless quiet; with skipAfterOom, the larger configurations
// of a family that ran out of memory become skipped results. Calls `finished` (may be
// empty) as each run ends; Ctrl+C cancels the run in flight and submits no more.
using DoneFn = std::function<void(const engine::RunResult&)>;
std::vector<engine::RunResult> runAll(engine::SessionInterface& session,
                                      const std::vector<engine::RunConfig>& configs, bool quiet,
                                      bool skipAfterOom, const DoneFn& finished);

// The engine run and sweep drive: a Session in this process, or with --connect a
// RemoteSession once its server accepted the hello; nullptr after printing why not (an
// unreadable token file, a bad address, a refusal, no answer in 10 s). How long no answer is
// waited for (a watched script may take a minute to import torch before it listens):
enum class Patience {
    TenSeconds, // then it fails
    UntilCtrlC, // saying every 10 s what it waits for
    // The window's: 10 s, then the session is returned unconnected, still retrying every
    // second; the window says what it waits for until it connects or the user switches.
    InTheWindow,
};
std::unique_ptr<engine::SessionInterface> openEngine(const CommonOptions& options,
                                                     Patience patience = Patience::TenSeconds);
std::unique_ptr<engine::SessionInterface> openEngine(const std::string& connect,
                                                     const std::string& tokenFile, bool quiet,
                                                     Patience patience = Patience::TenSeconds);
// The engine in this process (LocalSession, loaded now), or nullptr after saying why: a
// --token-file without --connect, or a build without an engine. `ranks` starts its
// data-parallel runs' ranks.
std::unique_ptr<engine::SessionInterface>
openLocalEngine(const std::string& tokenFile, std::optional<engine::RankProgram> ranks = {});
// lmprof-cli serve (docs/REMOTE.md).
struct ServeOptions {
    std::string listen = "127.0.0.1:7377";
    std::string tokenFile; // empty: <config dir>/server/token, made (0600) at the first start
    bool allowRemote = false;
    std::string stateDir; // empty: <config dir>/server (autosave.jsonl, files of runs)
    // What clients may ask of the server (remote_server.h, ServeLimits); 0: from the machine.
    int maxWorldSize = 0;
    double maxHostMemoryGiB = 0.0;
    int maxQueuedRuns = 256;
    int maxConnections = 0;
};
int serveCommand(const ServeOptions& options);
// Where lmprof keeps its own files: $LMPROF_CONFIG_DIR, else $XDG_CONFIG_HOME/lmprof, else
// ~/.config/lmprof (the window's layout and autosave, the server's token).
std::filesystem::path configDir();

int runCommand(const RunOptions& options);
int ddpCommand(const DdpOptions& options);
int sweepCommand(const SweepOptions& options);
int mergeCommand(const MergeOptions& options);
int showCommand(const ShowOptions& options);
int compareCommand(const CompareOptions& options);
int ratioCommand(const RatioOptions& options);
// Prints the op profile of the runs of a saved result set (or autosave file).
int opsCommand(const OpsOptions& options);
// The precision lab's experiments: print the tables, save them in a result set with --json.
int precisionAccumulateCommand(const PrecisionOptions& options);
int precisionDtypesCommand(const PrecisionOptions& options);
// Lists the CSV export's columns (key, unit, kind, table header) as CSV, from the registry.
int columnsCommand();

// What --version prints (both programs): the version and revision, the result-set schema and
// the remote protocol they speak, and the engine module they would load.
std::string versionText(const std::string& program);

// A result set of these runs with this machine's environment (the device's), or the given
// one (a remote engine's), created now.
engine::ResultSet makeSet(std::vector<engine::RunResult> runs, const std::string& device,
                          const engine::Environment* environment = nullptr);
// False after printing why --json PATH cannot be written (checked before anything runs).
bool checkJsonTarget(const std::string& path);
// False after printing that --format is not one of table, markdown, csv.
bool checkFormat(const std::string& format);

// The runs' report on stdout and, with --json, the result set; returns the exit code of
// the runs' outcomes (run and sweep end with this).
int reportRuns(const std::vector<engine::RunResult>& runs, const CommonOptions& options,
               const engine::Environment* environment = nullptr);
// Prints a run's step the way run and sweep show progress.
void printStepLine(const std::string& label, const engine::StepRecord& step,
                   const engine::RunConfig& config);
// Whether SIGINT/SIGTERM has arrived since installInterruptHandler.
bool interrupted();
// How a child process ended, from its wait status: "exited with status 1", "was killed by
// signal 9 (Killed)".
std::string describeExit(int status);
// What the handler writes to stderr when a second signal ends the process (say where the
// user's data is); empty: nothing. Set from the main thread.
void setLastWords(const std::string& text);
// The same as a flag an engine run polls for a cancel (set by the signal handler itself).
const std::atomic<bool>* interruptFlag();

// Installs a SIGINT/SIGTERM handler: the first signal cancels the current run (results so
// far are still reported and saved); a second one ends the process.
void installInterruptHandler();

// A PyTorch training script started with the lmprof Python package watching it
// (docs/WATCH.md): `lmprof-cli watch -- python train.py` and the window's `lmprof -- python
// train.py`. It runs in its own process group, with a private folder for its result files
// and step journals, removed with this object.
struct WatchLaunch {
    std::vector<std::string> command; // python train.py ARGS
    std::string name;                 // the run's id; empty: the model's class
    int64_t tokensPerStep = 0;        // 0: not given
    int warmup = -1;                  // -1: the package's default
    std::string listen;               // serve the run live on HOST:PORT (loopback)
    std::string tokenFile;            // the token viewers present
    std::string token; // or the token itself: written to a 0600 file in the script's folder
    // The op profile of one step (docs/WATCH.md, "Inside your model"): -1 for none.
    int profileOps = -1;
    int opsDepth = 0;         // module names per region; 0: the package's default
    bool opsFold = false;     // blocks.*.attn rather than blocks.3.attn
    std::string opsTrace;     // the Chrome trace; "{run}" becomes the run's id
    double memoryHz = 0.0;    // the memory timeline's samples a second; 0: none
    int memorySnapshot = -1;  // the step whose CUDA allocator history is recorded; -1: none
    std::string snapshotPath; // its pickle; "{run}" becomes the run's id
    int moduleDepth = 0;      // time each module of the model cut at this depth; 0: none
};

// lmprof-cli watch --against-reference (docs/WATCH.md, "Against the reference"): runs
// lmprof's engine at each watched run's size, precision and batch, here, and writes each
// pair's comparison (the engine's run against the script's, per phase, with the ratio's
// interval and verdict) to `out`. Returns the engine's runs; a watched run without
// dimensions is said on stderr and skipped.
std::vector<engine::RunResult> runReferences(const std::vector<engine::RunResult>& watched,
                                             const CommonOptions& options, std::ostream& out);

struct ScratchDir;

class WatchedScript {
public:
    // Starts it. Throws std::runtime_error (the package is missing, the command cannot be
    // started) or std::invalid_argument (a bad listen address), saying why.
    explicit WatchedScript(const WatchLaunch& launch);
    ~WatchedScript();
    WatchedScript(const WatchedScript&) = delete;
    WatchedScript& operator=(const WatchedScript&) = delete;

    pid_t pid() const { return m_pid; }
    const std::filesystem::path& dir() const;
    // Its wait status once it has ended (reaped here), else nullopt.
    std::optional<int> poll();
    // Passes SIGINT to its process group, as a Ctrl+C would, and waits up to `grace` for it
    // to close its run; then SIGKILL. Its wait status.
    int stop(std::chrono::milliseconds grace);

private:
    std::shared_ptr<ScratchDir> m_dir;
    pid_t m_pid = 0;
    int m_rawStatus = 0;
    std::optional<int> m_status;
};

} // namespace lmprof::app
