// The engine in this process, loaded when it is first needed (docs/ARCHITECTURE.md, "The
// engine module"). The window and lmprof-cli link no LibTorch: the engine, LibTorch with it,
// is a module (lmprof-engine.so) beside them, opened by the first local run. A command that
// touches no tensor (show, compare, --help, a window opening a file) never loads it, and a
// viewer build ships without it and says so. Torch-free: lmprof_core.
//
// Usage:
//   LocalSession engine;                    // loads nothing yet
//   engine.devices();                       // a preview from the driver and the OS
//   engine.submit(config);                  // loads the module, then runs as Session does
//   if (const EngineModule* m = loadEngineModule(why)) m->runDataParallel(...);
#pragma once

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/ddp_launch.h"
#include "lmprof/engine/runner.h"
#include "lmprof/engine/session_interface.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace lmprof::engine {

// The layout of what crosses into the module, as the compiler building each side sees it,
// and that compiler: a module built from other sources, or by another compiler, differs here
// even where its version string does not.
inline constexpr uint64_t engineInterfaceFingerprint() {
    uint64_t h = 14695981039346656037ull; // FNV-1a over the sizes, then the compiler's name
    const auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (const uint64_t size :
         {sizeof(RunConfig), sizeof(RunResult), sizeof(StepRecord), sizeof(SessionEvent),
          sizeof(LabRequest), sizeof(LabReport), sizeof(Environment), sizeof(EngineInfo),
          sizeof(ConfigError), sizeof(RankProgram), sizeof(RankEndpoint), sizeof(std::string)}) {
        mix(size);
    }
    for (const char c : std::string_view(__VERSION__)) {
        mix(static_cast<unsigned char>(c));
    }
    return h;
}

// What the module exports, one table of entry points. The module and the program that opens
// it are built from the same sources by the same compiler, so C++ types cross as they are.
// A module from another build is refused: its `abi`, `fingerprint` or `version` differs.
struct EngineModule {
    static constexpr int kAbi = 1; // bump when an entry or the meaning of one changes
    int abi = kAbi;
    uint64_t fingerprint = engineInterfaceFingerprint();
    const char* version = nullptr; // the module's "<version> (<revision>)", as this program's
    // A Session (session.h) numbering runs from firstRunIndex; its ranks are `ranks` if set.
    SessionInterface* (*makeSession)(int firstRunIndex, const RankProgram* ranks) = nullptr;
    std::optional<ConfigError> (*checkRunnable)(const RunConfig& config) = nullptr;
    Environment (*probeEnvironment)(std::string_view device) = nullptr;
    RunResult (*runDataParallel)(const RunConfig& config, const RankEndpoint& endpoint,
                                 const std::string& runId, RunObserver* observer,
                                 const std::atomic<bool>* cancel) = nullptr;
};

// The module's file: $LMPROF_ENGINE_MODULE if set, else lmprof-engine.so beside this
// program, else ../lib/lmprof/lmprof-engine.so from it (an installed layout).
std::string engineModulePath();
// Whether this program can have an engine: linked in (a test), or the module's file exists.
// Cheap: opens nothing.
bool engineAvailable();
// Opens the module once per process (later calls return the same table); nullptr with the
// reason in `why` when there is none or it cannot be opened. Thread-safe.
const EngineModule* loadEngineModule(std::string* why = nullptr);
// True once loadEngineModule() has succeeded: whether LibTorch is in this process.
bool engineLoaded();
// The line a build without an engine answers a local run with, naming the way out.
std::string noEngineMessage();

// validate()'s first refusal of a config, then, once the engine is loaded, the engine's own
// (checkRunnable, devices.h). Never loads it: the run that follows does, and refuses then.
std::optional<ConfigError> checkRunnableHere(const RunConfig& config);
// This machine for a result set: the engine's probe once it is loaded, else what the OS says
// (host, CPU, memory) without loading it.
Environment environmentHere(std::string_view device);

// The local engine behind the SessionInterface the window and the CLI drive. It loads the
// module on the first submit() or submitLab() and then forwards everything to its Session.
// Until then it answers the form's questions from a preview (the CPU and the GPUs the driver
// reports), so a window that only reads files never loads LibTorch. Without a module every
// run finishes at once with status Error and noEngineMessage().
class LocalSession final : public SessionInterface {
public:
    explicit LocalSession(int firstRunIndex = 0, std::optional<RankProgram> ranks = {});
    ~LocalSession() override;
    LocalSession(const LocalSession&) = delete;
    LocalSession& operator=(const LocalSession&) = delete;

    int submit(const RunConfig& config) override;
    int submitLab(const LabRequest& request) override;
    void cancel() override;
    void cancelLab(int labIndex) override;
    std::vector<SessionEvent> drain() override;
    bool waitForEvents(std::chrono::milliseconds timeout) override;
    bool busy() const override;
    std::vector<std::string> devices() const override;
    bool isCuda(std::string_view device) const override;
    int64_t deviceMemoryBytes(std::string_view device) const override;
    std::optional<ConfigError> checkRunnable(const RunConfig& config) const override;
    Environment environment(std::string_view device) const override;
    EngineInfo info() const override;

    // Loads the engine now (a server, which runs nothing else); false with the reason.
    bool start(std::string* why = nullptr);

private:
    SessionInterface* engine() const; // the loaded Session, or nullptr
    std::string refusal() const;      // why nothing can run here, or "" (not loaded yet)
    SessionInterface* engineOrLoad(); // nullptr when there is none: m_refusal says why

    std::optional<RankProgram> m_ranks;
    mutable std::mutex m_mutex;
    std::unique_ptr<SessionInterface> m_engine; // set once, under m_mutex
    std::atomic<SessionInterface*> m_loaded{nullptr};
    std::string m_refusal;               // why there is no engine, once a load failed
    std::vector<SessionEvent> m_refused; // runs and experiments answered without one
    int m_nextRun;
    int m_nextLab = 0;
    mutable std::once_flag m_previewOnce; // info()'s device name before the engine loads
    mutable std::string m_previewName;
};

} // namespace lmprof::engine
