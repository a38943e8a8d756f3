// JSON encoding of result sets (schema lmprof.results/1.x, docs/RESULTS.md) with nlohmann::json.
// Decoding is strict about types and names the JSON path of any problem, lenient about
// unknown fields (forward compatibility) and missing optional ones.
//
// Sections: records (each one's fields, both directions) · schema check and the result set's
// document. One record per line (JSON lines, a patched configuration): json_lines.cpp.

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "results/fields.h"

#include <random>

namespace lmprof::engine {

using namespace json_io;

// Shared with the other encoders through json_access.h.
namespace json_io {

// ---------------------------------------------------------------------------------------
// Records: each one's fields, for writing and reading (fields.h)

template <typename Io>
void fields(Io& io, Ref<PhaseStats, Io> s) {
    io.field("n", s.n);
    io.duration("mean", s.mean);
    io.duration("std", s.std);
    io.duration("median", s.median);
    io.duration("min", s.min);
    io.duration("max", s.max);
    io.duration("p95", s.p95);
    io.field("cv", s.cv);
    io.duration("iqr", s.iqr);
    io.field("noisy", s.noisy);
}

template <typename Io>
void fields(Io& io, Ref<PeakBytes, Io> p) {
    io.field("forward", p.forward);
    io.field("backward", p.backward);
    io.field("optimizer", p.optimizer);
}

template <typename Io>
void fields(Io& io, Ref<ModelConfig, Io> m) {
    io.field("preset", m.preset);
    io.required("d_model", m.dModel);
    io.required("d_ff", m.dFf);
    io.required("num_layers", m.numLayers);
    io.required("num_heads", m.numHeads);
    io.required("vocab_size", m.vocabSize);
    io.field("rope_theta", m.ropeTheta);
}

template <typename Io>
void fields(Io& io, Ref<SnapshotRequest, Io> r) {
    io.required("path", r.path);
    io.field("first_step", r.firstStep);
    io.field("step_count", r.stepCount);
    io.field("max_entries", r.maxEntries);
}

template <typename Io>
void fields(Io& io, Ref<OpProfileRequest, Io> r) {
    io.required("first_step", r.firstStep);
    io.field("step_count", r.stepCount);
    if constexpr (Io::kReads) { // null for "no trace" in older files of the Python watcher
        std::optional<std::string> trace;
        io.nullable("trace_path", trace);
        r.tracePath = trace.value_or("");
    } else {
        io.field("trace_path", r.tracePath);
    }
}

template <typename Io>
void fields(Io& io, Ref<DdpRequest, Io> r) {
    io.required("world_size", r.worldSize);
    io.enumeration("backend", r.backend, parseDdpBackend, true);
    io.enumeration("strategy", r.strategy, parseDdpStrategy, true);
    io.field("bucket_mb", r.bucketMb);
    io.field("timeout_s", r.timeoutS);
}

// A run's configuration as a result set holds it: "device" is what the request resolved
// to (when known), "device_requested" the request.
struct ConfigRecord {
    RunConfig config;
    std::string resolvedDevice;
};

// "device": what the run resolved its device to; read back, the configuration's device is
// that, else `unknown`.
template <typename Io, typename Record>
void deviceField(Io& io, Record& record, const char* unknown) {
    if constexpr (Io::kReads) {
        io.field("device", record.resolvedDevice);
        record.config.device = record.resolvedDevice.empty() ? unknown : record.resolvedDevice;
    } else {
        io.field("device",
                 record.resolvedDevice.empty() ? record.config.device : record.resolvedDevice);
    }
}

template <typename Io>
void fields(Io& io, Ref<ConfigRecord, Io> record) {
    auto& c = record.config;
    io.object("model", c.model, true);
    io.required("context_length", c.contextLength);
    io.required("batch_size", c.batchSize);
    io.enumeration("precision", c.precision, parsePrecision, true);
    io.enumeration("mode", c.mode, parseMode, true);
    io.field("warmup_steps", c.warmupSteps);
    io.field("measure_steps", c.measureSteps);
    deviceField(io, record, "auto");
    io.field("device_requested", c.device);
    // The plain fields (ValueField, config.h) at their section's place.
    valueFieldsOf(io, c, {ValueField::Section::Run, ValueField::Section::Sampling});
    io.nullableObject("memory_snapshot", c.memorySnapshot);
    io.nullableObject("op_profile", c.opProfile);
    valueFieldsOf(io, c, {ValueField::Section::Instruments});
    io.nullableObject("ddp", c.ddp);
    // The execution variants (ChoiceField, config.h), absent from files before 1.4: the defaults.
    choiceFieldsOf(io, c);
}

// A watched script's evaluation pass (Evaluation) as two flat keys: its time and its
// forwards, both there or neither.
template <typename Io>
void evaluationFields(Io& io, Ref<std::optional<Evaluation>, Io> e, const char* msKey,
                      const char* forwardsKey) {
    if constexpr (Io::kReads) {
        if (io.has(msKey) != io.has(forwardsKey)) {
            io.refuse(io.has(msKey) ? forwardsKey : msKey,
                      std::string("missing: it comes with ") +
                          (io.has(msKey) ? msKey : forwardsKey));
        }
        if (io.has(msKey)) {
            Evaluation read;
            io.duration(msKey, read.ms, true);
            io.between(forwardsKey, read.forwards, 1, std::numeric_limits<int>::max(), true);
            e = read;
        }
    } else if (e) {
        io.duration(msKey, e->ms);
        io.field(forwardsKey, e->forwards);
    }
}

template <typename Io>
void fields(Io& io, Ref<StepRecord, Io> s) {
    io.required("index", s.index);
    io.field("warmup", s.warmup);
    io.duration("forward_ms", s.forwardMs);
    io.duration("backward_ms", s.backwardMs);
    io.duration("optimizer_ms", s.optimizerMs);
    io.duration("total_ms", s.totalMs);
    io.field("peak_allocated_bytes", s.peakAllocatedBytes);
    io.field("peak_reserved_bytes", s.peakReservedBytes);
    io.object("peak_allocated_by_phase", s.phasePeakBytes);
    io.duration("t_end_ms", s.endMs);
    io.when(s.memorySnapshot, "memory_snapshot", s.memorySnapshot);
    io.when(s.opProfiled, "op_profiled", s.opProfiled);
    // A loss or a gradient norm may have overflowed: "nan", "inf", "-inf" (numberOrName).
    if constexpr (Io::kReads) {
        if (const auto loss = member(io.in, io.path, "loss", false)) {
            s.loss = numberOrNameFrom(*loss, io.path + ".loss");
        }
        forEachElement(arrayMember(io.in, io.path, "grad_norms"), [&](const auto& norm, size_t i) {
            s.gradNorms.push_back(numberOrNameFrom(norm, indexed(io.path, "grad_norms", i)));
        });
    } else {
        if (s.loss) {
            io.out["loss"] = numberOrName(*s.loss);
        }
        if (!s.gradNorms.empty()) {
            json norms = json::array();
            for (double v : s.gradNorms) {
                norms.push_back(numberOrName(v));
            }
            io.out["grad_norms"] = std::move(norms);
        }
    }
    io.optional("loss_scale", s.lossScale);
    io.when(s.lossScale.has_value(), "skipped_update", s.skippedUpdate);
    io.optional("kernel_ms", s.kernelMs);
    io.when(s.graphReplay, "graph_replay", s.graphReplay);
    // A watched script's step (docs/WATCH.md): its data and rest phases, its micro-batches.
    io.optional("data_ms", s.dataMs);
    io.optional("rest_ms", s.restMs);
    io.when(s.microBatches > 0, "micro_batches", s.microBatches);
    io.when(s.compiled, "compiled", s.compiled);
    evaluationFields(io, s.evaluation, "evaluation_ms", "evaluation_forwards");
    // The script's other logged scalars, by name; an overflowed one as a name, as loss's.
    if constexpr (Io::kReads) {
        if (const auto m = member(io.in, io.path, "scalars", false)) {
            if (!m->is_object()) {
                io.refuse("scalars", "expected an object of numbers by name");
            }
            forEachMember(*m, [&](std::string_view name, const auto& value) {
                const std::string key(name);
                s.scalars[key] = numberOrNameFrom(value, io.path + ".scalars." + key);
            });
        }
    } else if (!s.scalars.empty()) {
        json scalars = json::object();
        for (const auto& [name, value] : s.scalars) {
            scalars[name] = numberOrName(value);
        }
        io.out["scalars"] = std::move(scalars);
    }
    if constexpr (Io::kReads) {
        if (s.kernelMs && !(*s.kernelMs >= 0.0 && *s.kernelMs <= s.totalMs * 1.001 + 1e-3)) {
            io.refuse("kernel_ms", "must be between 0 and the step's total_ms");
        }
        for (const auto& [key, v] :
             {std::pair{"data_ms", s.dataMs}, std::pair{"rest_ms", s.restMs}}) {
            if (v && !(*v >= 0.0 && *v <= s.totalMs * 1.001 + 1e-3)) {
                io.refuse(key, "must be between 0 and the step's total_ms");
            }
        }
        if (s.microBatches < 0) {
            io.refuse("micro_batches", "must not be negative");
        }
    }
}

template <typename Io>
void fields(Io& io, Ref<WatchedModel, Io> w) {
    constexpr int64_t kMaxDim = int64_t{1} << 31; // as validate() bounds the engine's model
    io.between("vocab_size", w.model.vocabSize, int64_t{1}, kMaxDim, true);
    io.between("d_model", w.model.dModel, int64_t{1}, kMaxDim, true);
    io.between("num_layers", w.model.numLayers, int64_t{1}, kMaxDim, true);
    io.between("num_heads", w.model.numHeads, int64_t{1}, kMaxDim, true);
    io.between("d_ff", w.model.dFf, int64_t{1}, kMaxDim, true);
    io.between("context_length", w.contextLength, int64_t{1}, kMaxDim, true);
    io.between("batch_size", w.batchSize, int64_t{1}, kMaxDim, true);
    io.between("rope_theta", w.model.ropeTheta, 1e-9, 1e12);
    if constexpr (Io::kReads) {
        w.model.preset = "custom";
        std::string from = "detected";
        io.field("from", from);
        w.stated = from == "stated";
    } else {
        io.out["from"] = w.stated ? "stated" : "detected";
    }
}

template <typename Io>
void fields(Io& io, Ref<RunSource, Io> s) {
    io.required("kind", s.kind);
    if constexpr (Io::kReads) {
        if (s.kind != "watched") {
            io.refuse("kind", "unknown source \"" + s.kind + "\" (this lmprof knows \"watched\")");
        }
    }
    io.field("script", s.script);
    io.field("model_class", s.modelClass);
    io.field("device", s.device);
    io.nullable("autocast", s.autocast);
    io.nullable("optimizer", s.optimizer);
    io.nullable("tokens_per_step", s.tokensPerStep);
    io.field("torch_compile", s.torchCompile);
    io.field("pid", s.pid);
    io.optionalObject("model", s.model);
    io.optional("model_note", s.modelNote);
    if constexpr (Io::kReads) {
        if (s.tokensPerStep && *s.tokensPerStep < 0) {
            io.refuse("tokens_per_step", "must not be negative");
        }
    }
}

// A watched run's configuration: what the script ran, not a model of the engine's. Only
// the precision (from autocast), the mode, the step counts and the device.
struct WatchedConfigRecord : ConfigRecord {};

template <typename Io>
void fields(Io& io, Ref<WatchedConfigRecord, Io> record) {
    auto& c = record.config;
    io.enumeration("precision", c.precision, parsePrecision, true);
    io.enumeration("mode", c.mode, parseMode, true);
    io.between("warmup_steps", c.warmupSteps, 0, kMaxWatchedSteps);
    io.between("measure_steps", c.measureSteps, 0, kMaxWatchedSteps);
    deviceField(io, record, "cpu");
    // What the script asked of lmprof's instruments (lmprof.watch, Run.profile_ops, ...).
    io.optionalObject("op_profile", c.opProfile);
    io.optionalObject("memory_snapshot", c.memorySnapshot);
    if constexpr (Io::kReads) {
        c.sampleHz = 0.0; // a watched script samples memory only when asked
    }
    io.when(c.sampleHz > 0.0, "sample_hz", c.sampleHz);
    if constexpr (Io::kReads) {
        if (!(c.sampleHz >= 0.0 && c.sampleHz <= 1e6)) {
            io.refuse("sample_hz", "must be between 0 and 1e6 samples a second");
        }
        // No model of the engine's: nothing that reads one may take it for a preset.
        c.model = ModelConfig{"watched", 0, 0, 0, 0, 0, 0.0};
        c.contextLength = 0;
        c.batchSize = 0;
    }
}

template <typename Io>
void fields(Io& io, Ref<RunSummary, Io> s) {
    io.optionalObject("data_ms", s.dataMs);
    io.object("forward_ms", s.forwardMs);
    io.object("backward_ms", s.backwardMs);
    io.object("optimizer_ms", s.optimizerMs);
    io.optionalObject("rest_ms", s.restMs);
    io.object("total_ms", s.totalMs);
    io.field("tokens_per_s", s.tokensPerS);
    io.field("tflops", s.tflops);
    io.nullable("mfu", s.mfu);
    io.object("peak_bytes", s.peakBytes);
    io.optional("gpu_busy", s.gpuBusy);
    io.optional("gpu_busy_nvml", s.gpuBusyNvml);
    if constexpr (Io::kReads) {
        for (const auto& [key, v] :
             {std::pair{"gpu_busy", s.gpuBusy}, std::pair{"gpu_busy_nvml", s.gpuBusyNvml}}) {
            if (v && !(*v >= 0.0 && *v <= 1.0)) {
                io.refuse(key, "a share must be between 0 and 1");
            }
        }
    }
    if constexpr (!Io::kReads) { // for readers of the file; recomputed from the shares
        if (const auto bound = hostBound(s)) {
            io.out["host_bound"] = *bound;
        }
    }
}

template <typename Io>
void fields(Io& io, Ref<GraphCapture, Io> g) {
    io.duration("capture_ms", g.captureMs, true);
    io.between("pool_bytes", g.poolBytes, int64_t{0}, std::numeric_limits<int64_t>::max());
}

template <typename Io>
void fields(Io& io, Ref<Thinning, Io> t) {
    io.between("every", t.every, 2, std::numeric_limits<int>::max(), true);
    io.between("recorded_steps", t.recordedSteps, 1, std::numeric_limits<int>::max(), true);
}

// Each step read belongs to the run: its index within the configured steps, one gradient
// norm per layer group when it has any. A thinned run recorded every step its config counts.
void checkSteps(const RunResult& r, const std::string& path) {
    const int total = r.config.warmupSteps + r.config.measureSteps;
    if (r.thinned && r.thinned->recordedSteps != total) {
        fail(path + ".thinned.recorded_steps", std::to_string(r.thinned->recordedSteps) +
                                                   " steps recorded, but the config counts " +
                                                   std::to_string(total));
    }
    const size_t groups = static_cast<size_t>(r.config.model.numLayers) + 3;
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const std::string stepPath = indexed(path, "steps", i);
        if (!r.steps[i].gradNorms.empty() && r.steps[i].gradNorms.size() != groups) {
            fail(stepPath + ".grad_norms", std::to_string(r.steps[i].gradNorms.size()) +
                                               " norms, but the model has " +
                                               std::to_string(groups) + " layer groups");
        }
        checkStepIndex(r.steps[i].index, stepPath, total);
    }
}

template <typename Io>
void fields(Io& io, Ref<RunResult, Io> r) {
    io.required("id", r.id);
    io.optionalObject("source", r.source);
    if constexpr (Io::kReads) {
        const auto found = member(io.in, io.path, "config", true);
        const auto& config = *found;
        if (r.source) { // a watched script's run: its own parameter count
            const auto record = fromObject<WatchedConfigRecord>(config, io.path + ".config");
            r.config = record.config;
            r.resolvedDevice = record.resolvedDevice;
            io.between("parameter_count", r.parameterCount, int64_t{0},
                       std::numeric_limits<int64_t>::max());
        } else {
            const auto record = fromObject<ConfigRecord>(config, io.path + ".config");
            r.config = record.config;
            r.resolvedDevice = record.resolvedDevice;
            // The same rules as a new configuration (which also keep the counts below in
            // range).
            if (const auto errors = validate(r.config); !errors.empty()) {
                fail(io.path + ".config." + errors.front().field, errors.front().reason);
            }
            r.parameterCount = parameterCount(r.config.model);
        }
    } else {
        io.out["config"] = r.source ? toObject(WatchedConfigRecord{{r.config, r.resolvedDevice}})
                                    : toObject(ConfigRecord{r.config, r.resolvedDevice});
        io.field("parameter_count", r.parameterCount);
    }
    io.enumeration("status", r.status, parseRunStatus, true);
    io.nullable("error", r.error);
    io.nullableEnumeration("failed_phase", r.failedPhase, parsePhase);
    if constexpr (Io::kReads) {
        checkStepCount(arrayMember(io.in, io.path, "steps").size(), io.path + ".steps",
                       r.config.warmupSteps + r.config.measureSteps);
    }
    io.optionalObject("thinned", r.thinned);
    io.array("steps", r.steps);
    if constexpr (Io::kReads) {
        checkSteps(r, io.path);
    }
    io.object("summary", r.summary);
    if constexpr (Io::kReads) {
        summarizeOnRead(r);
    }
    io.optionalObject("cuda_graph", r.graph);
    io.optional("busy_note", r.busyNote);
    evaluationFields(io, r.finalEvaluation, "final_evaluation_ms", "final_evaluation_forwards");
    memoryFields(io, r);
    opProfileFields(io, r);
    ddpFields(io, r);
    verdictFields(io, r);
}

template <typename Io>
void fields(Io& io, Ref<DeviceInfo, Io> d) {
    io.field("type", d.type);
    io.field("name", d.name);
    io.field("memory_bytes", d.memoryBytes);
}

template <typename Io>
void fields(Io& io, Ref<Environment, Io> e) {
    io.field("torch", e.torch);
    io.field("cuda", e.cuda);
    io.object("device", e.device);
    io.optional("driver", e.driver);
    io.group("cpu", [&](auto& cpu) {
        cpu.field("model", e.cpuModel);
        cpu.field("threads", e.cpuThreads);
    });
    io.field("host", e.host);
}

template <typename Io>
void fields(Io& io, Ref<ToolInfo, Io> t) {
    io.field("name", t.name);
    io.field("version", t.version);
    io.field("git", t.git);
}

template <typename Io>
void fields(Io& io, Ref<ResultSet, Io> set) {
    if constexpr (!Io::kReads) {
        io.out["schema"] = kResultSchema; // checked before reading (checkSchema)
    }
    io.field("created", set.created);
    io.object("tool", set.tool);
    io.object("environment", set.environment);
    if constexpr (Io::kReads) {
        arrayOrFail(io.in, io.path, "runs");
    }
    io.array("runs", set.runs);
    precisionLabFields(io, set.precisionLab);
    setVerdictFields(io, set.verdicts);
}

json configJson(const RunConfig& c, const std::string& resolvedDevice) {
    return toObject(ConfigRecord{c, resolvedDevice});
}
RunConfig configFrom(const json& j, const std::string& path, std::string& resolvedDevice) {
    auto record = fromObject<ConfigRecord>(j, path);
    resolvedDevice = record.resolvedDevice;
    return record.config;
}
json stepJson(const StepRecord& s) {
    return toObject(s);
}
StepRecord stepFrom(const json& j, const std::string& path) {
    return fromObject<StepRecord>(j, path);
}
json runJson(const RunResult& r) {
    return toObject(r);
}
RunResult runFrom(const json& j, const std::string& path) {
    return fromObject<RunResult>(j, path);
}
RunResult runFrom(const SimdNode& j, const std::string& path) {
    return fromObject<RunResult>(j, path);
}
json environmentJson(const Environment& e) {
    return toObject(e);
}
Environment environmentFrom(const json& e, const std::string& path) {
    return fromObject<Environment>(e, path);
}
json toolJson(const ToolInfo& t) {
    return toObject(t);
}
ToolInfo toolFrom(const json& t, const std::string& path) {
    return fromObject<ToolInfo>(t, path);
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

void json_io::writeResultSetJson(const ResultSet& set, int indent, const ChunkWriter& write) {
    // A path or name that is not UTF-8 (Linux allows any bytes) is written with U+FFFD in
    // place of the bad bytes instead of failing the whole save.
    const auto dump = [indent](const json& j) {
        return j.dump(indent, ' ', false, json::error_handler_t::replace);
    };
    // The set without its runs, with a mark where they go: each run is then made and
    // written on its own, as the whole document's dump would write it (at depth 2 of the
    // indentation), so a set of hundreds of megabytes is never one JSON value in memory.
    ResultSet shell;
    shell.created = set.created;
    shell.tool = set.tool;
    shell.environment = set.environment;
    shell.precisionLab = set.precisionLab;
    shell.verdicts = set.verdicts ? set.verdicts : judgeRuns(set.runs);
    json head = toObject(shell);
    const std::string mark = "lmprof-runs-" + std::to_string(std::random_device{}()) + "-" +
                             std::to_string(reinterpret_cast<uintptr_t>(&set));
    head["runs"] = mark;
    const std::string text = dump(head);
    const size_t at = text.find("\"" + mark + "\"");
    write(std::string_view(text).substr(0, at));
    const std::string pad =
        indent >= 0 ? "\n" + std::string(static_cast<size_t>(2 * indent), ' ') : std::string();
    if (set.runs.empty()) {
        write("[]");
    } else {
        write("[");
        for (size_t i = 0; i < set.runs.size(); ++i) {
            std::string run = dumpWithColumnsInline(toObject(set.runs[i]), indent, mark);
            if (indent >= 0) { // one level deeper: after every line break, the runs' indent
                std::string deeper;
                deeper.reserve(run.size() + run.size() / 8);
                size_t from = 0;
                for (size_t at; (at = run.find('\n', from)) != std::string::npos; from = at + 1) {
                    deeper.append(run, from, at + 1 - from);
                    deeper.append(pad, 1);
                }
                deeper.append(run, from);
                run = std::move(deeper);
            }
            write(i == 0 ? pad : "," + pad);
            write(run);
        }
        write(indent >= 0 ? "\n" + std::string(static_cast<size_t>(indent), ' ') + "]"
                          : std::string("]"));
    }
    write(std::string_view(text).substr(at + mark.size() + 2));
}

std::string toJson(const ResultSet& set, int indent) {
    std::string out;
    json_io::writeResultSetJson(set, indent, [&](std::string_view piece) { out += piece; });
    return out;
}

// The reference reading: the whole document by nlohmann.
ResultSet json_io::readResultSetReference(std::string_view text) {
    const json j = parseDocument(text);
    checkSchema(j);
    try {
        return fromObject<ResultSet>(j, "$");
    } catch (const json::exception& e) {
        throw ResultFormatError(std::string("malformed result set: ") + e.what());
    }
}

} // namespace lmprof::engine
