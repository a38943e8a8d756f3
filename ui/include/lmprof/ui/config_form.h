// The configure panel's model: the RunConfig being edited, live validation messages per
// field (from the engine's validate()), and estimates shown before a run.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/memory_model.h"

#include <cstdint>
#include <map>
#include <string>

namespace lmprof::ui {

struct MemoryEstimate {
    int64_t parameters = 0; // weight bytes
    int64_t gradients = 0;  // 0 in forward mode
    int64_t optimizer = 0;  // AdamW moments, train mode only
    int64_t total() const { return parameters + gradients + optimizer; }
};

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
    MemoryEstimate staticMemory() const;
    // The engine's predicted peak (static parts + activations) for the current config.
    engine::MemoryBreakdown predictedPeak() const { return engine::predictPeak(m_config); }

private:
    engine::RunConfig m_config;
};

} // namespace lmprof::ui
