// ConfigForm: validation passthrough and the static-memory estimate.

#include "lmprof/ui/config_form.h"

#include <nlohmann/json.hpp>

namespace lmprof::ui {

using namespace lmprof::engine;

ConfigForm::ConfigForm() {
    m_config.model = *presetModel("tiny");
}

ConfigForm::ConfigForm(const RunConfig& initial) : m_config(initial) {
    const int warmup = initial.warmupSteps;
    m_opStepPicked = initial.opProfile &&
                     initial.opProfile->firstStep != defaultOpProfileRequest(warmup).firstStep;
    m_snapshotStepPicked =
        initial.memorySnapshot &&
        initial.memorySnapshot->firstStep != defaultSnapshotRequest({}, warmup).firstStep;
}

void ConfigForm::followWarmup(RunConfig& c, const std::string& patch) {
    // A patch that names a step picks it, for this configuration and the form's after it.
    // (The form calls this every frame with no patch: nothing to parse then.)
    if (!patch.empty()) {
        const nlohmann::json p = nlohmann::json::parse(patch, nullptr, false);
        const auto names = [&](const char* section) {
            return p.is_object() && p.contains(section) && p[section].is_object() &&
                   p[section].contains("first_step");
        };
        m_opStepPicked = m_opStepPicked || names("op_profile");
        m_snapshotStepPicked = m_snapshotStepPicked || names("memory_snapshot");
    }
    if (c.opProfile && !m_opStepPicked) {
        c.opProfile->firstStep = defaultOpProfileRequest(c.warmupSteps).firstStep;
    }
    if (c.memorySnapshot && !m_snapshotStepPicked) {
        c.memorySnapshot->firstStep = defaultSnapshotRequest({}, c.warmupSteps).firstStep;
    }
}

void ConfigForm::setPreset(const std::string& name) {
    if (auto m = pickPreset(m_config.model, name)) {
        m_config.model = *m;
    } else {
        m_config.model.preset = "custom";
    }
}

std::map<std::string, std::string> ConfigForm::errors() const {
    std::map<std::string, std::string> out;
    for (const auto& e : validate(m_config)) {
        out.emplace(e.field, e.reason); // first reason per field
    }
    return out;
}

} // namespace lmprof::ui
