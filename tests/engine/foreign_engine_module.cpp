// A module that exports lmprof's entry from another build (another version, a table of
// another layout): LocalEngine.AModuleFromAnotherBuildIsRefusedWithBothVersions loads it.

#include "lmprof/engine/local_engine.h"

namespace {
const lmprof::engine::EngineModule kForeign{
    .abi = lmprof::engine::EngineModule::kAbi,
    .fingerprint = 12345,
    .version = "0.0.1 (elsewhere)",
};
} // namespace

extern "C" __attribute__((visibility("default"))) const lmprof::engine::EngineModule*
lmprof_engine_module() {
    return &kForeign;
}
