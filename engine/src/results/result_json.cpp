// JSON encoding of result sets (schema lmprof.results/1.x, docs/RESULTS.md) with nlohmann::json.
// Decoding is strict about types and names the JSON path of any problem, lenient about
// unknown fields (forward compatibility) and missing optional ones.
//
// Sections: records (each one's fields, both directions) · schema check and public entry
// points.

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"
#include "results/fields.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <random>
#include <atomic>
#include <cstring>
#include <functional>

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
    io.field("trace_path", r.tracePath);
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
        io.field("device", record.resolvedDevice.empty() ? record.config.device
                                                         : record.resolvedDevice);
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
    io.field("seed", c.seed);
    io.field("threads", c.threads);
    io.field("sample_hz", c.sampleHz);
    io.field("telemetry_hz", c.telemetryHz);
    io.nullableObject("memory_snapshot", c.memorySnapshot);
    io.nullableObject("op_profile", c.opProfile);
    io.field("grad_norms", c.gradNorms);
    io.nullableObject("ddp", c.ddp);
    // The execution variants (ChoiceField, config.h), absent from files before 1.4: the defaults.
    for (const ChoiceField& f : choiceFields()) {
        if constexpr (Io::kReads) {
            std::string value = f.get(c);
            io.field(f.key.c_str(), value);
            if (auto why = f.unknown(value)) {
                fail(io.path + "." + f.key, *why);
            }
            f.set(c, value);
        } else {
            io.field(f.key.c_str(), f.get(c));
        }
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
    if constexpr (Io::kReads) {
        if (s.kernelMs && !(*s.kernelMs >= 0.0 && *s.kernelMs <= s.totalMs * 1.001 + 1e-3)) {
            io.refuse("kernel_ms", "must be between 0 and the step's total_ms");
        }
        for (const auto& [key, v] : {std::pair{"data_ms", s.dataMs}, std::pair{"rest_ms", s.restMs}}) {
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
    if constexpr (Io::kReads) {
        // No model of the engine's: nothing that reads one may take it for a preset.
        c.model = ModelConfig{"watched", 0, 0, 0, 0, 0, 0.0};
        c.contextLength = 0;
        c.batchSize = 0;
    }
}

template <typename Io>
void fields(Io& io, Ref<RunSummary, Io> s) {
    io.object("forward_ms", s.forwardMs);
    io.object("backward_ms", s.backwardMs);
    io.object("optimizer_ms", s.optimizerMs);
    io.object("total_ms", s.totalMs);
    io.field("tokens_per_s", s.tokensPerS);
    io.field("tflops", s.tflops);
    io.nullable("mfu", s.mfu);
    io.object("peak_bytes", s.peakBytes);
    io.optional("gpu_busy", s.gpuBusy);
    io.optional("gpu_busy_nvml", s.gpuBusyNvml);
    if constexpr (Io::kReads) {
        for (const auto& [key, v] : {std::pair{"gpu_busy", s.gpuBusy},
                                     std::pair{"gpu_busy_nvml", s.gpuBusyNvml}}) {
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

// Each step read belongs to the run: its index within the configured steps, one gradient
// norm per layer group when it has any.
void checkSteps(const RunResult& r, const std::string& path) {
    const int total = r.config.warmupSteps + r.config.measureSteps;
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
    io.array("steps", r.steps);
    if constexpr (Io::kReads) {
        checkSteps(r, io.path);
    }
    io.object("summary", r.summary);
    io.optionalObject("cuda_graph", r.graph);
    io.optional("busy_note", r.busyNote);
    memoryFields(io, r);
    opProfileFields(io, r);
    ddpFields(io, r);
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
    json head = toObject(shell);
    const std::string mark = "lmprof-runs-" + std::to_string(std::random_device{}()) + "-" +
                             std::to_string(reinterpret_cast<uintptr_t>(&set));
    head["runs"] = mark;
    const std::string text = dump(head);
    const size_t at = text.find("\"" + mark + "\"");
    write(std::string_view(text).substr(0, at));
    const std::string pad = indent >= 0 ? "\n" + std::string(static_cast<size_t>(2 * indent), ' ')
                                        : std::string();
    if (set.runs.empty()) {
        write("[]");
    } else {
        write("[");
        for (size_t i = 0; i < set.runs.size(); ++i) {
            std::string run = dump(toObject(set.runs[i]));
            if (indent >= 0) { // one level deeper: after every line break, the runs' indent
                std::string deeper;
                deeper.reserve(run.size() + run.size() / 8);
                for (char c : run) {
                    deeper += c;
                    if (c == '\n') {
                        deeper += std::string_view(pad).substr(1);
                    }
                }
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

namespace {

// ---------------------------------------------------------------------------------------
// The fast reading of a result set (docs/RESULTS.md, "Reading large files")
//
// A night's sweep is hundreds of megabytes, nearly all of it runs' steps and samples. The
// document's top level is split by a scan that only follows strings and brackets; each run
// is parsed by simdjson and read through the same field lists (SimdReader), one at a time,
// and the rest of the top level (schema, tool, environment, the lab: a few kilobytes) by
// nlohmann. Whatever this path meets that it does not expect (a malformed or unusual
// document, a refused field) sends the whole text to the reading by nlohmann below, whose
// answer and messages are the reference: the fast path only ever returns what that one
// would.

// The top level of a result set: each member but "runs" as written (the runs go to the
// scan's callback as they are found).
struct TopLevel {
    std::string head = "{"; // the other members, as a document of their own
    bool hasRuns = false;
};

// Each run's text with its index and where it ends in the document; false stops the scan.
using OnRun = std::function<bool(std::string_view run, size_t index, size_t end)>;

// The next quote or bracket from `p` (or `end`): only they matter to the scan below. Sixteen
// bytes at a time where the CPU has SSE2 (every x86-64), a byte at a time elsewhere.
const char* nextStructural(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i openBrace = _mm_set1_epi8('{');
    const __m128i closeBrace = _mm_set1_epi8('}');
    const __m128i openBracket = _mm_set1_epi8('[');
    const __m128i closeBracket = _mm_set1_epi8(']');
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i hit = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, openBrace)),
            _mm_or_si128(_mm_cmpeq_epi8(v, closeBrace),
                         _mm_or_si128(_mm_cmpeq_epi8(v, openBracket),
                                      _mm_cmpeq_epi8(v, closeBracket))));
        if (const int mask = _mm_movemask_epi8(hit)) {
            return p + __builtin_ctz(static_cast<unsigned>(mask));
        }
        p += 16;
    }
#endif
    while (p < end && !std::strchr("\"{}[]", *p)) {
        ++p;
    }
    return p;
}

class TopLevelScan {
public:
    explicit TopLevelScan(std::string_view text) : m_text(text) {}

    // nullopt where the text is not the plain shape of a result set, or onRun said stop.
    std::optional<TopLevel> scan(const OnRun& onRun) {
        TopLevel top;
        std::vector<std::string_view> keys;
        skipSpace();
        if (!take('{')) {
            return std::nullopt;
        }
        skipSpace();
        if (take('}')) {
            return finish(top);
        }
        for (;;) {
            skipSpace();
            const size_t keyStart = m_pos;
            if (!skipString(false)) {
                return std::nullopt;
            }
            const std::string_view key = m_text.substr(keyStart + 1, m_pos - keyStart - 2);
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
                return std::nullopt; // a repeated member: the reference reading decides
            }
            keys.push_back(key);
            skipSpace();
            if (!take(':')) {
                return std::nullopt;
            }
            skipSpace();
            if (key == "runs" && peek('[')) {
                top.hasRuns = true;
                if (!scanRuns(onRun)) {
                    return std::nullopt;
                }
            } else {
                const size_t valueStart = m_pos;
                if (!skipValue(1)) {
                    return std::nullopt;
                }
                top.head += (top.head.size() > 1 ? "," : "");
                top.head += m_text.substr(keyStart, valueStart - keyStart);
                top.head += m_text.substr(valueStart, m_pos - valueStart);
            }
            skipSpace();
            if (take('}')) {
                return finish(top);
            }
            if (!take(',')) {
                return std::nullopt;
            }
        }
    }

private:
    std::optional<TopLevel> finish(TopLevel& top) {
        skipSpace();
        if (m_pos != m_text.size()) {
            return std::nullopt;
        }
        top.head += "}";
        return std::move(top);
    }
    bool scanRuns(const OnRun& onRun) {
        take('[');
        skipSpace();
        if (take(']')) {
            return true;
        }
        for (size_t index = 0;; ++index) {
            skipSpace();
            const size_t start = m_pos;
            if (!skipValue(2) || !onRun(m_text.substr(start, m_pos - start), index, m_pos)) {
                return false;
            }
            skipSpace();
            if (take(']')) {
                return true;
            }
            if (!take(',')) {
                return false;
            }
        }
    }
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\r' || m_text[m_pos] == '\t')) {
            ++m_pos;
        }
    }
    bool peek(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }
    bool take(char c) {
        if (!peek(c)) {
            return false;
        }
        ++m_pos;
        return true;
    }
    // A string from its opening quote; keys with escapes are left to the reference reading.
    bool skipString(bool escapes) {
        if (!take('"')) {
            return false;
        }
        const char* end = stringEnd(m_text.data() + m_pos);
        if (!end || (!escapes && std::memchr(m_text.data() + m_pos, '\\',
                                             static_cast<size_t>(end - m_text.data()) - m_pos))) {
            return false;
        }
        m_pos = static_cast<size_t>(end - m_text.data()) + 1;
        return true;
    }
    // The closing quote of the string whose text starts at `p`: a quote after an even number
    // of backslashes. Null when the document ends first.
    const char* stringEnd(const char* p) const {
        const char* end = m_text.data() + m_text.size();
        for (;;) {
            const auto* quote = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
            if (!quote) {
                return nullptr;
            }
            size_t backslashes = 0;
            while (quote - backslashes > p && quote[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\') {
                ++backslashes;
            }
            if (backslashes % 2 == 0) {
                return quote;
            }
            p = quote + 1;
        }
    }
    // A value at nesting `depth` (1: a member of the top level), its brackets counted as
    // checkJsonDepth counts them; the parsers check the rest of its syntax.
    bool skipValue(int depth) {
        if (peek('"')) {
            return skipString(true);
        }
        if (!peek('{') && !peek('[')) {
            const size_t start = m_pos;
            while (m_pos < m_text.size() && !std::strchr(",}] \t\r\n", m_text[m_pos])) {
                ++m_pos;
            }
            return m_pos > start;
        }
        int open = 0;
        const char* p = m_text.data() + m_pos;
        const char* end = m_text.data() + m_text.size();
        while (p < end) {
            p = nextStructural(p, end);
            if (p == end) {
                break;
            }
            const char c = *p;
            if (c == '"') {
                p = stringEnd(p + 1);
                if (!p) {
                    return false;
                }
            } else if (c == '{' || c == '[') {
                if (depth + ++open > kMaxJsonDepth) {
                    return false;
                }
            } else if (c == '}' || c == ']') {
                if (--open == 0) {
                    m_pos = static_cast<size_t>(p - m_text.data()) + 1;
                    return true;
                }
            }
            ++p;
        }
        return false;
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

} // namespace

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

namespace {

// One run by simdjson, nullopt where simdjson or the run's fields refuse it.
std::optional<RunResult> readRunFast(SimdParser& parser, std::string_view text,
                                     const std::string& path) {
    try {
        return fromObject<RunResult>(parser.parse(text), path);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The fast reading; nullopt sends the text to the reference reading. `consumed` hears how
// far the runs read so far reach (a mapped file lets those pages go).
// The runs found by the scan, read by a few threads while the scan goes on, and handed on in
// their order: the pages of a run are let go once it and every run before it are read.
class RunReaders {
public:
    explicit RunReaders(unsigned threads) {
        for (unsigned t = 0; t < threads; ++t) {
            m_threads.emplace_back([this] { work(); });
        }
    }
    ~RunReaders() { stop(); }
    RunReaders(const RunReaders&) = delete;
    RunReaders& operator=(const RunReaders&) = delete;

    // Queues a run (waiting while too many are ahead of the oldest unread one); the runs
    // read before it, in order, go to `take`. False once a run could not be read.
    template <typename Take>
    bool add(std::string_view text, size_t end, Take&& take) {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_failed || m_slots.size() < kAhead || frontReady(); });
        handOn(lock, take);
        if (m_failed) {
            return false;
        }
        m_slots.push_back({text, end, m_base + m_slots.size(), {}, false});
        m_changed.notify_all();
        return true;
    }
    // Every run queued, read and handed on; false if one could not be read.
    template <typename Take>
    bool finish(Take&& take) {
        std::unique_lock lock(m_mutex);
        m_scanned = true;
        m_changed.notify_all();
        while (!m_failed && !m_slots.empty()) {
            m_changed.wait(lock, [&] { return m_failed || frontReady(); });
            handOn(lock, take);
        }
        return !m_failed;
    }

private:
    static constexpr size_t kAhead = 16; // runs queued at most: their pages stay mapped
    struct Slot {
        std::string_view text;
        size_t end;
        size_t index;
        std::optional<RunResult> run;
        bool read;
    };
    bool frontReady() const { return !m_slots.empty() && m_slots.front().read; }
    // Hands the front's read runs on, without the lock (take may throw: a cancel).
    template <typename Take>
    void handOn(std::unique_lock<std::mutex>& lock, Take& take) {
        while (!m_failed && frontReady()) {
            Slot slot = std::move(m_slots.front());
            m_slots.pop_front();
            ++m_base;
            lock.unlock();
            try {
                take(std::move(*slot.run), slot.end);
            } catch (...) {
                lock.lock();
                throw;
            }
            lock.lock();
        }
    }
    void work() {
        SimdParser parser; // each thread its own (and its own member index, simd_node.cpp)
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [&] {
                return m_stopped || m_failed || m_next < m_base + m_slots.size() ||
                       (m_scanned && m_next >= m_base + m_slots.size());
            });
            if (m_stopped || m_failed || m_next >= m_base + m_slots.size()) {
                return;
            }
            const size_t index = m_next++;
            const std::string_view text = m_slots[index - m_base].text;
            lock.unlock();
            std::optional<RunResult> run = readRunFast(parser, text, indexed("$", "runs", index));
            lock.lock();
            if (!run) {
                m_failed = true;
            } else {
                Slot& slot = m_slots[index - m_base];
                slot.run = std::move(run);
                slot.read = true;
            }
            m_changed.notify_all();
        }
    }
    void stop() {
        {
            std::lock_guard lock(m_mutex);
            m_stopped = true;
        }
        m_changed.notify_all();
        for (auto& t : m_threads) {
            t.join();
        }
        m_threads.clear();
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Slot> m_slots; // m_slots[k] is run m_base + k
    size_t m_base = 0;        // runs handed on so far
    size_t m_next = 0;        // the next run a thread takes
    bool m_scanned = false, m_failed = false, m_stopped = false;
    std::vector<std::thread> m_threads;
};

std::optional<ResultSet> readResultSetFast(std::string_view text,
                                           const std::function<void(size_t)>& consumed) {
    ResultSet set;
    const auto take = [&](RunResult run, size_t end) {
        set.runs.push_back(std::move(run));
        if (consumed) {
            consumed(end);
        }
    };
    // On this machine's cores, at most 4: reading a run is most of the time of a large set.
    RunReaders readers(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    auto top = TopLevelScan(text).scan(
        [&](std::string_view run, size_t, size_t end) { return readers.add(run, end, take); });
    if (top && !readers.finish(take)) {
        top.reset();
    }
    if (!top) {
        return std::nullopt;
    }
    try {
        json head = json::parse(top->head);
        checkSchema(head);
        if (top->hasRuns) {
            head["runs"] = json::array();
        }
        std::vector<RunResult> runs = std::move(set.runs);
        set = fromObject<ResultSet>(head, "$");
        set.runs = std::move(runs);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return set;
}

} // namespace

ResultSet parseResultSet(std::string_view text) {
    return json_io::parseResultSetReleasing(text, {});
}

namespace {
std::atomic<size_t> g_referenceReadings{0};
} // namespace

size_t json_io::referenceReadings() {
    return g_referenceReadings.load();
}

ResultSet json_io::parseResultSetReleasing(std::string_view text,
                                           const std::function<void(size_t)>& consumed) {
    if (auto set = readResultSetFast(text, consumed)) {
        return std::move(*set);
    }
    ++g_referenceReadings;
    return readResultSetReference(text);
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
    // An autosave holds thousands of these lines: each is read fast where it can be, and by
    // the reference reading (its messages) where not.
    thread_local SimdParser parser;
    bool withinDepth = true;
    try {
        checkJsonDepth(text);
    } catch (const ResultFormatError&) {
        withinDepth = false;
    }
    if (withinDepth) {
        if (auto run = readRunFast(parser, text, "$")) {
            return std::move(*run);
        }
    }
    ++g_referenceReadings;
    return json_io::readRunReference(text);
}

RunResult json_io::readRunReference(std::string_view text) {
    return parseRecord(text, runFrom, "run");
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
