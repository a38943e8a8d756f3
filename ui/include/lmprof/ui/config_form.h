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

    int64_t parameterCount() const { return engine::parameterCount(m_config.model); }
    // The engine's predicted peak for the current config: the static parts (weights,
    // gradients, AdamW moments; staticBytes()) are exact, activations an estimate.
    engine::MemoryBreakdown predictedPeak() const { return engine::predictPeak(m_config); }

private:
    engine::RunConfig m_config;
};

} // namespace lmprof::ui
