// The engine module's one exported entry (local_engine.h): the table the window and
// lmprof-cli open lmprof-engine.so for.

#include "lmprof/engine/data_parallel.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/session.h"
#include "lmprof_version.h"

namespace lmprof::engine {
namespace {

SessionInterface* makeSession(int firstRunIndex, const RankProgram* ranks) {
    auto session = std::make_unique<Session>(firstRunIndex);
    if (ranks) {
        session->setRankProgram(*ranks);
    }
    return session.release();
}

std::optional<ConfigError> checkRunnableEntry(const RunConfig& config) {
    return checkRunnable(config);
}

Environment probeEnvironmentEntry(std::string_view device) {
    return probeEnvironment(resolveDevice(device));
}

constexpr EngineModule kModule{
    .abi = EngineModule::kAbi,
    .fingerprint = engineInterfaceFingerprint(),
    .version = LMPROF_VERSION " (" LMPROF_GIT_REVISION ")",
    .makeSession = makeSession,
    .checkRunnable = checkRunnableEntry,
    .probeEnvironment = probeEnvironmentEntry,
    .runDataParallel = runDataParallel,
};

} // namespace
} // namespace lmprof::engine

extern "C" __attribute__((visibility("default"))) const lmprof::engine::EngineModule*
lmprof_engine_module() {
    return &lmprof::engine::kModule;
}
