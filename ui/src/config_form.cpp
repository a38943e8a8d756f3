// ConfigForm: validation passthrough and the static-memory estimate.

#include "lmprof/ui/config_form.h"

namespace lmprof::ui {

using namespace lmprof::engine;

ConfigForm::ConfigForm() {
    m_config.model = *presetModel("tiny");
}

ConfigForm::ConfigForm(const RunConfig& initial) : m_config(initial) {}

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
