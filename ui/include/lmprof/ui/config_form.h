// The configure panel's model: the RunConfig being edited, live validation messages per
// field (from the engine's validate()), and estimates shown before a run.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/memory_model.h"

#include <cstdint>
#include <map>
#include <string>

namespace lmprof::ui {

class ConfigForm {
public:
    ConfigForm();
    explicit ConfigForm(const engine::RunConfig& initial);

    engine::RunConfig& config() { return m_config; }
    const engine::RunConfig& config() const { return m_config; }

    // Picks a preset (copies its dimensions) or "custom" (keeps the current ones).
    void setPreset(const std::string& name);

    // Field (JSON name, e.g. "model.d_model") -> reason, for every invalid field.
    std::map<std::string, std::string> errors() const;
    bool valid() const { return errors().empty(); }

    // The op profile's and the memory snapshot's steps follow the warmup (the first step
    // after it; the last warmup step) until the user picks one: in the form, with
    // --profile-step or --snapshot-step (a step other than the default when the form is
    // made), or in a demo's patch. followWarmup moves the unpicked ones of `c` (the form's
    // own by default) after its warmup; `patch` (a demo step's, JSON) may pick them.
    void pickOpProfileStep(bool picked) { m_opStepPicked = picked; }
    void pickSnapshotStep(bool picked) { m_snapshotStepPicked = picked; }
    bool opProfileStepPicked() const { return m_opStepPicked; }
    bool snapshotStepPicked() const { return m_snapshotStepPicked; }
    void followWarmup() { followWarmup(m_config); }
    void followWarmup(engine::RunConfig& c, const std::string& patch = {});

    int64_t parameterCount() const { return engine::parameterCount(m_config.model); }
    // The engine's predicted peak for the current config: the static parts (weights,
    // gradients, AdamW moments; staticBytes()) are exact, activations an estimate.
    engine::MemoryBreakdown predictedPeak() const { return engine::predictPeak(m_config); }

private:
    engine::RunConfig m_config;
    bool m_opStepPicked = false;
    bool m_snapshotStepPicked = false;
};

} // namespace lmprof::ui
