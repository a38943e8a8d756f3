// One record per line (the autosave files, docs/RESULTS.md): runs, configurations and steps as
// JSON lines and read back, and a configuration patched by a demo's step or a settings file,
// through the records' encoders (json_access.h).

#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

#include <string>
#include <string_view>

namespace lmprof::engine {

using namespace json_io;

namespace {

// One JSON value on one line (no newline inside), bad UTF-8 replaced.
std::string oneLine(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A document of one record read by `from`; a type error is "malformed <what>: ...".
template <typename From>
auto parseRecord(std::string_view text, From from, const char* what) {
    const json j = parseDocument(text);
    try {
        return from(j, "$");
    } catch (const json::exception& e) {
        throw ResultFormatError(std::string("malformed ") + what + ": " + e.what());
    }
}

} // namespace

std::string runToJsonLine(const RunResult& run) {
    return oneLine(runJson(run));
}

RunResult json_io::readRunReference(std::string_view text) {
    return parseRecord(
        text, [](const json& j, const std::string& path) { return runFrom(j, path); }, "run");
}

std::string configToJsonLine(const RunConfig& config) {
    return oneLine(configJson(config, {}));
}

RunConfig parseConfig(std::string_view text) {
    return parseRecord(
        text,
        [](const json& j, const std::string& path) {
            std::string resolved;
            return configFrom(j, path, resolved);
        },
        "configuration");
}

std::string stepToJsonLine(const StepRecord& step) {
    return oneLine(stepJson(step));
}

StepRecord parseStep(std::string_view text) {
    return parseRecord(text, stepFrom, "step");
}

RunConfig patchConfig(const RunConfig& base, std::string_view patch, const std::string& path) {
    const json changes = parseDocument(patch);
    if (!changes.is_object()) {
        throw ResultFormatError(path + ": must be an object of configuration fields");
    }
    json merged = configJson(base, {});
    for (const auto& [key, value] : changes.items()) {
        if (!merged.contains(key)) {
            throw ResultFormatError(path + "." + key + ": not a configuration field");
        }
        if (key == "model" && value.is_object()) {
            for (const auto& [field, v] : value.items()) {
                if (!merged["model"].contains(field)) {
                    throw ResultFormatError(path + ".model." + field + ": not a model field");
                }
            }
        }
    }
    merged.merge_patch(changes);
    // "model": "small" picks a preset (as Configure does: the vocabulary stays); a model
    // dimension changed by itself makes the model a custom one.
    if (changes.contains("model") && changes["model"].is_string()) {
        const std::string name = changes["model"].get<std::string>();
        const auto preset = pickPreset(base.model, name);
        if (!preset) {
            throw ResultFormatError(path + ".model: '" + name + "' is not a preset");
        }
        RunConfig picked;
        picked.model = *preset;
        merged["model"] = configJson(picked, {})["model"];
    } else if (changes.contains("model") && changes["model"].is_object() &&
               !changes["model"].contains("preset")) {
        merged["model"]["preset"] = "custom";
    }
    if (changes.contains("device")) {
        merged["device_requested"] = changes["device"];
    }
    std::string resolved;
    try {
        return configFrom(merged, path, resolved);
    } catch (const json::exception& e) {
        throw ResultFormatError(path + ": " + e.what());
    }
}

} // namespace lmprof::engine
