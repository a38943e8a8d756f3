// JSON encoding of result sets (schema lmprof.results/1.x, docs/RESULTS.md) with nlohmann::json.
// Decoding is strict about types and names the JSON path of any problem, lenient about
// unknown fields (forward compatibility) and missing optional ones.
//
// Sections: writing · reading helpers · reading · schema check and public entry points.

#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

namespace lmprof::engine {

using namespace json_io;

// Shared with the other encoders through json_access.h.
namespace json_io {

// ---------------------------------------------------------------------------------------
// Writing

json statsJson(const PhaseStats& s) {
    return {{"n", s.n},     {"mean", s.mean},  {"std", s.std}, {"median", s.median},
            {"min", s.min}, {"max", s.max},    {"p95", s.p95}, {"cv", s.cv},
            {"iqr", s.iqr}, {"noisy", s.noisy}};
}

json peaksJson(const PeakBytes& p) {
    return {{"forward", p.forward}, {"backward", p.backward}, {"optimizer", p.optimizer}};
}

json configJson(const RunConfig& c, const std::string& resolvedDevice) {
    json model = {{"preset", c.model.preset},
                  {"d_model", c.model.dModel},
                  {"d_ff", c.model.dFf},
                  {"num_layers", c.model.numLayers},
                  {"num_heads", c.model.numHeads},
                  {"vocab_size", c.model.vocabSize},
                  {"rope_theta", c.model.ropeTheta}};
    return {{"model", model},
            {"context_length", c.contextLength},
            {"batch_size", c.batchSize},
            {"precision", toString(c.precision)},
            {"mode", toString(c.mode)},
            {"warmup_steps", c.warmupSteps},
            {"measure_steps", c.measureSteps},
            {"device", resolvedDevice.empty() ? c.device : resolvedDevice},
            {"device_requested", c.device},
            {"seed", c.seed},
            {"threads", c.threads},
            {"sample_hz", c.sampleHz},
            {"telemetry_hz", c.telemetryHz},
            {"memory_snapshot", c.memorySnapshot
                                    ? json{{"path", c.memorySnapshot->path},
                                           {"first_step", c.memorySnapshot->firstStep},
                                           {"step_count", c.memorySnapshot->stepCount},
                                           {"max_entries", c.memorySnapshot->maxEntries}}
                                    : json(nullptr)},
            {"op_profile", opProfileRequestJson(c.opProfile)},
            {"grad_norms", c.gradNorms},
            {"ddp", ddpRequestJson(c.ddp)}};
}

json stepJson(const StepRecord& s) {
    json j = {{"index", s.index},
              {"warmup", s.warmup},
              {"forward_ms", s.forwardMs},
              {"backward_ms", s.backwardMs},
              {"optimizer_ms", s.optimizerMs},
              {"total_ms", s.totalMs},
              {"peak_allocated_bytes", s.peakAllocatedBytes},
              {"peak_reserved_bytes", s.peakReservedBytes},
              {"peak_allocated_by_phase", peaksJson(s.phasePeakBytes)},
              {"t_end_ms", s.endMs}};
    if (s.memorySnapshot) {
        j["memory_snapshot"] = true;
    }
    if (s.opProfiled) {
        j["op_profiled"] = true;
    }
    if (s.loss) {
        j["loss"] = numberOrName(*s.loss);
    }
    if (!s.gradNorms.empty()) {
        json norms = json::array();
        for (double v : s.gradNorms) {
            norms.push_back(numberOrName(v));
        }
        j["grad_norms"] = norms;
    }
    if (s.lossScale) {
        j["loss_scale"] = *s.lossScale;
        j["skipped_update"] = s.skippedUpdate;
    }
    return j;
}

json runJson(const RunResult& r) {
    json steps = json::array();
    for (const auto& s : r.steps) {
        steps.push_back(stepJson(s));
    }
    const auto& s = r.summary;
    json summary = {{"forward_ms", statsJson(s.forwardMs)},
                    {"backward_ms", statsJson(s.backwardMs)},
                    {"optimizer_ms", statsJson(s.optimizerMs)},
                    {"total_ms", statsJson(s.totalMs)},
                    {"tokens_per_s", s.tokensPerS},
                    {"tflops", s.tflops},
                    {"mfu", nullable(s.mfu)},
                    {"peak_bytes", peaksJson(s.peakBytes)}};
    json run = {{"id", r.id},
                {"config", configJson(r.config, r.resolvedDevice)},
                {"parameter_count", r.parameterCount},
                {"status", toString(r.status)},
                {"error", nullable(r.error)},
                {"failed_phase", r.failedPhase ? json(toString(*r.failedPhase)) : json(nullptr)},
                {"steps", steps},
                {"summary", summary}};
    writeMemory(run, r);
    writeOpProfile(run, r);
    writeDdp(run, r);
    return run;
}

json environmentJson(const Environment& e) {
    return {{"torch", e.torch},
            {"cuda", e.cuda},
            {"device",
             {{"type", e.device.type},
              {"name", e.device.name},
              {"memory_bytes", e.device.memoryBytes}}},
            {"cpu", {{"model", e.cpuModel}, {"threads", e.cpuThreads}}},
            {"host", e.host}};
}

json toolJson(const ToolInfo& t) {
    return {{"name", t.name}, {"version", t.version}, {"git", t.git}};
}

json setJson(const ResultSet& set) {
    json runs = json::array();
    for (const auto& r : set.runs) {
        runs.push_back(runJson(r));
    }
    json j = {{"schema", kResultSchema},
              {"created", set.created},
              {"tool", toolJson(set.tool)},
              {"environment", environmentJson(set.environment)},
              {"runs", runs}};
    writePrecisionLab(j, set.precisionLab);
    return j;
}

// ---------------------------------------------------------------------------------------
// Reading

PhaseStats statsFrom(const json& j, const std::string& path) {
    PhaseStats s;
    if (j.is_object() && j.empty()) {
        return s; // "{}" stands for a phase the mode does not run
    }
    read(j, path, "n", s.n);
    readDuration(j, path, "mean", s.mean);
    readDuration(j, path, "std", s.std);
    readDuration(j, path, "median", s.median);
    readDuration(j, path, "min", s.min);
    readDuration(j, path, "max", s.max);
    readDuration(j, path, "p95", s.p95);
    read(j, path, "cv", s.cv);
    readDuration(j, path, "iqr", s.iqr);
    read(j, path, "noisy", s.noisy);
    return s;
}

PeakBytes peaksFrom(const json& j, const std::string& path) {
    PeakBytes p;
    read(j, path, "forward", p.forward);
    read(j, path, "backward", p.backward);
    read(j, path, "optimizer", p.optimizer);
    return p;
}

RunConfig configFrom(const json& j, const std::string& path, std::string& resolvedDevice) {
    RunConfig c;
    const json& m = *member(j, path, "model", true);
    const std::string mp = path + ".model";
    read(m, mp, "preset", c.model.preset);
    read(m, mp, "d_model", c.model.dModel, true);
    read(m, mp, "d_ff", c.model.dFf, true);
    read(m, mp, "num_layers", c.model.numLayers, true);
    read(m, mp, "num_heads", c.model.numHeads, true);
    read(m, mp, "vocab_size", c.model.vocabSize, true);
    read(m, mp, "rope_theta", c.model.ropeTheta);
    read(j, path, "context_length", c.contextLength, true);
    read(j, path, "batch_size", c.batchSize, true);
    readEnum(j, path, "precision", c.precision, parsePrecision, true);
    readEnum(j, path, "mode", c.mode, parseMode, true);
    read(j, path, "warmup_steps", c.warmupSteps);
    read(j, path, "measure_steps", c.measureSteps);
    read(j, path, "device", resolvedDevice);
    c.device = resolvedDevice.empty() ? "auto" : resolvedDevice;
    read(j, path, "device_requested", c.device);
    read(j, path, "sample_hz", c.sampleHz);
    read(j, path, "telemetry_hz", c.telemetryHz);
    if (const json* snap = member(j, path, "memory_snapshot", false)) {
        const std::string sp = path + ".memory_snapshot";
        SnapshotRequest r;
        read(*snap, sp, "path", r.path, true);
        read(*snap, sp, "first_step", r.firstStep);
        read(*snap, sp, "step_count", r.stepCount);
        read(*snap, sp, "max_entries", r.maxEntries);
        c.memorySnapshot = r;
    }
    c.opProfile = opProfileRequestFrom(j, path);
    read(j, path, "seed", c.seed);
    read(j, path, "threads", c.threads);
    read(j, path, "grad_norms", c.gradNorms);
    c.ddp = ddpRequestFrom(j, path);
    return c;
}

StepRecord stepFrom(const json& j, const std::string& path) {
    StepRecord s;
    read(j, path, "index", s.index, true);
    read(j, path, "warmup", s.warmup);
    readDuration(j, path, "forward_ms", s.forwardMs);
    readDuration(j, path, "backward_ms", s.backwardMs);
    readDuration(j, path, "optimizer_ms", s.optimizerMs);
    readDuration(j, path, "total_ms", s.totalMs);
    read(j, path, "peak_allocated_bytes", s.peakAllocatedBytes);
    read(j, path, "peak_reserved_bytes", s.peakReservedBytes);
    if (const json* p = member(j, path, "peak_allocated_by_phase", false)) {
        s.phasePeakBytes = peaksFrom(*p, path + ".peak_allocated_by_phase");
    }
    readOptional(j, path, "loss_scale", s.lossScale);
    if (const json* loss = member(j, path, "loss", false)) {
        s.loss = numberOrNameFrom(*loss, path + ".loss");
    }
    const json& norms = arrayMember(j, path, "grad_norms");
    for (size_t i = 0; i < norms.size(); ++i) {
        s.gradNorms.push_back(numberOrNameFrom(norms[i], indexed(path, "grad_norms", i)));
    }
    readDuration(j, path, "t_end_ms", s.endMs);
    read(j, path, "memory_snapshot", s.memorySnapshot);
    read(j, path, "op_profiled", s.opProfiled);
    read(j, path, "skipped_update", s.skippedUpdate);
    return s;
}

RunResult runFrom(const json& j, const std::string& path) {
    RunResult r;
    read(j, path, "id", r.id, true);
    r.config = configFrom(*member(j, path, "config", true), path + ".config", r.resolvedDevice);
    // The same rules as a new configuration (which also keep the counts below in range).
    if (const auto errors = validate(r.config); !errors.empty()) {
        fail(path + ".config." + errors.front().field, errors.front().reason);
    }
    r.parameterCount = parameterCount(r.config.model);
    read(j, path, "parameter_count", r.parameterCount);
    readEnum(j, path, "status", r.status, parseRunStatus, true);
    readOptional(j, path, "error", r.error);
    Phase failed{};
    if (member(j, path, "failed_phase", false)) {
        readEnum(j, path, "failed_phase", failed, parsePhase);
        r.failedPhase = failed;
    }
    const json& steps = arrayMember(j, path, "steps");
    const int total = r.config.warmupSteps + r.config.measureSteps;
    checkStepCount(steps.size(), path + ".steps", total);
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::string sp = path + ".steps[" + std::to_string(i) + "]";
        r.steps.push_back(stepFrom(steps[i], sp));
        const size_t groups = static_cast<size_t>(r.config.model.numLayers) + 3;
        if (!r.steps.back().gradNorms.empty() && r.steps.back().gradNorms.size() != groups) {
            fail(sp + ".grad_norms", std::to_string(r.steps.back().gradNorms.size()) +
                                         " norms, but the model has " + std::to_string(groups) +
                                         " layer groups");
        }
        checkStepIndex(r.steps.back().index, sp, total);
    }
    if (const json* s = member(j, path, "summary", false)) {
        const std::string sp = path + ".summary";
        auto stats = [&](const char* key, PhaseStats& out) {
            if (const json* v = member(*s, sp, key, false)) {
                out = statsFrom(*v, sp + "." + key);
            }
        };
        stats("forward_ms", r.summary.forwardMs);
        stats("backward_ms", r.summary.backwardMs);
        stats("optimizer_ms", r.summary.optimizerMs);
        stats("total_ms", r.summary.totalMs);
        read(*s, sp, "tokens_per_s", r.summary.tokensPerS);
        read(*s, sp, "tflops", r.summary.tflops);
        readOptional(*s, sp, "mfu", r.summary.mfu);
        if (const json* p = member(*s, sp, "peak_bytes", false)) {
            r.summary.peakBytes = peaksFrom(*p, sp + ".peak_bytes");
        }
    }
    readMemory(j, path, r);
    readOpProfile(j, path, r);
    readDdp(j, path, r);
    return r;
}

Environment environmentFrom(const json& e, const std::string& path) {
    Environment env;
    read(e, path, "torch", env.torch);
    read(e, path, "cuda", env.cuda);
    read(e, path, "host", env.host);
    if (const json* d = member(e, path, "device", false)) {
        const std::string dp = path + ".device";
        read(*d, dp, "type", env.device.type);
        read(*d, dp, "name", env.device.name);
        read(*d, dp, "memory_bytes", env.device.memoryBytes);
    }
    if (const json* c = member(e, path, "cpu", false)) {
        read(*c, path + ".cpu", "model", env.cpuModel);
        read(*c, path + ".cpu", "threads", env.cpuThreads);
    }
    return env;
}

ToolInfo toolFrom(const json& t, const std::string& path) {
    ToolInfo tool;
    read(t, path, "name", tool.name);
    read(t, path, "version", tool.version);
    read(t, path, "git", tool.git);
    return tool;
}

ResultSet setFrom(const json& j) {
    ResultSet set;
    read(j, "$", "created", set.created);
    if (const json* t = member(j, "$", "tool", false)) {
        set.tool = toolFrom(*t, "$.tool");
    }
    if (const json* e = member(j, "$", "environment", false)) {
        set.environment = environmentFrom(*e, "$.environment");
    }
    const json& runs = *member(j, "$", "runs", true);
    if (!runs.is_array()) {
        fail("$.runs", "expected an array");
    }
    for (size_t i = 0; i < runs.size(); ++i) {
        set.runs.push_back(runFrom(runs[i], "$.runs[" + std::to_string(i) + "]"));
    }
    set.precisionLab = readPrecisionLab(j);
    return set;
}

// ---------------------------------------------------------------------------------------
// Schema check and parsing

void checkSchema(const json& j) {
    if (!j.is_object()) {
        throw ResultFormatError("not an lmprof result set: the document is not a JSON object");
    }
    const auto it = j.find("schema");
    if (it == j.end() || !it->is_string()) {
        throw ResultFormatError(
            "not an lmprof result set: the \"schema\" field is missing (expected \"" +
            std::string(kResultSchema) + "\")");
    }
    const std::string schema = it->get<std::string>();
    const std::string prefix = "lmprof.results/";
    if (schema.rfind(prefix, 0) != 0) {
        throw ResultFormatError("not an lmprof result set: schema is \"" + schema +
                                "\", expected \"" + std::string(kResultSchema) + "\"");
    }
    const std::string version = schema.substr(prefix.size());
    const std::string major = version.substr(0, version.find('.'));
    if (major != "1") {
        throw ResultFormatError("unsupported result-set version \"" + schema +
                                "\": this lmprof reads major version 1 (\"" +
                                std::string(kResultSchema) + "\")");
    }
}

} // namespace json_io

std::string toJson(const ResultSet& set, int indent) {
    // A path or name that is not UTF-8 (Linux allows any bytes) is written with U+FFFD in
    // place of the bad bytes instead of failing the whole save.
    return setJson(set).dump(indent, ' ', false, json::error_handler_t::replace);
}

ResultSet parseResultSet(std::string_view text) {
    const json j = parseDocument(text);
    checkSchema(j);
    try {
        return setFrom(j);
    } catch (const json::exception& e) {
        throw ResultFormatError(std::string("malformed result set: ") + e.what());
    }
}

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

RunResult parseRun(std::string_view text) {
    return parseRecord(text, runFrom, "run");
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
