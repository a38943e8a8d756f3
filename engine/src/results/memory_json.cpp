// JSON of the memory side of a run (memory_timeline, telemetry, memory_snapshot) and of the
// CPU allocation trace file (lmprof.alloc-trace/1), plus the largest-allocations summary.
//
// Sections: a run's dump with its sample columns inline · run memory fields · allocation
// trace file · largest allocations.

#include "lmprof/engine/alloc_trace.h"
#include "results/fields.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace lmprof::engine {

namespace json_io {

// ---------------------------------------------------------------------------------------
// A run's dump with its sample columns inline (json_access.h): the columns are taken out for
// marks, and put back in their place.

std::string dumpWithColumnsInline(json run, int indent, const std::string& mark) {
    const auto dump = [indent](const json& j) {
        return j.dump(indent, ' ', false, json::error_handler_t::replace);
    };
    std::vector<std::string> inlined;
    for (const char* key : {"memory_columns", "telemetry_columns"}) {
        const auto it = run.find(key);
        if (indent < 0 || it == run.end() || !it->is_object()) {
            continue;
        }
        for (auto& column : *it) {
            inlined.push_back(column.dump(-1, ' ', false, json::error_handler_t::replace));
            column = mark + "-" + std::to_string(inlined.size() - 1);
        }
    }
    const std::string text = dump(run);
    if (inlined.empty()) {
        return text;
    }
    std::string out;
    out.reserve(text.size() + [&] {
        size_t n = 0;
        for (const auto& s : inlined) {
            n += s.size();
        }
        return n;
    }());
    size_t from = 0;
    for (size_t k = 0; k < inlined.size(); ++k) {
        const std::string quoted = "\"" + mark + "-" + std::to_string(k) + "\"";
        const size_t at = text.find(quoted, from);
        out.append(text, from, at - from);
        out += inlined[k];
        from = at + quoted.size();
    }
    out.append(text, from);
    return out;
}

// ---------------------------------------------------------------------------------------
// Run memory fields

template <typename Io>
void fields(Io& io, Ref<AllocationRecord, Io> a) {
    io.required("bytes", a.bytes);
    io.field("t_ms", a.tMs);
    io.field("lifetime_ms", a.lifetimeMs);
    io.enumeration("phase", a.phase, parsePhase);
    io.field("step", a.step);
}

template <typename Io>
void fields(Io& io, Ref<MemorySample, Io> m) {
    io.field("t_ms", m.tMs);
    io.field("allocated", m.allocated);
    io.field("reserved", m.reserved);
    io.field("rss", m.rss);
    io.enumeration("phase", m.phase, parsePhase);
    io.field("step", m.step);
    io.field("boundary", m.boundary);
    // The whole device's use, on a GPU only.
    io.when(m.deviceTotal > 0, "device_used", m.deviceUsed);
    io.when(m.deviceTotal > 0, "device_total", m.deviceTotal);
}

template <typename Io>
void fields(Io& io, Ref<TelemetrySample, Io> t) {
    io.field("t_ms", t.tMs);
    io.field("cpu_percent", t.cpuPercent);
    io.field("rss", t.rss);
    io.optional("gpu_util_percent", t.gpuUtilPercent);
    io.optional("mem_util_percent", t.memUtilPercent);
    io.optional("power_w", t.powerW);
    io.optional("sm_clock_mhz", t.smClockMHz);
    io.optional("mem_clock_mhz", t.memClockMHz);
    io.optional("temperature_c", t.temperatureC);
    io.optional("throttle_reasons", t.throttleReasons);
}

template <typename Io>
void fields(Io& io, Ref<MemorySnapshotInfo, Io> s) {
    io.required("path", s.path);
    io.field("format", s.format);
    io.field("first_step", s.firstStep);
    io.field("step_count", s.stepCount);
    io.field("entries", s.entries);
    io.field("truncated", s.truncated);
    io.nullable("error", s.error);
    io.array("largest_allocations", s.largest);
}

// The memory parts of a run object, in the run's own list (result_json.cpp).
template <typename Io>
void memoryFieldsOf(Io& io, Ref<RunResult, Io> r) {
    // Samples are written as columns (since 1.7); a file of 1.6 or before has them as
    // objects, under the older names, and one may not hold both.
    if constexpr (Io::kReads) {
        io.array("memory_timeline", r.memoryTimeline);
        io.array("telemetry", r.telemetry);
        for (const auto& [rows, columns] : {std::pair{"memory_timeline", "memory_columns"},
                                            std::pair{"telemetry", "telemetry_columns"}}) {
            if (io.has(rows) && io.has(columns)) {
                io.refuse(columns, std::string("a run has its samples either as ") + rows +
                                       " or as " + columns + ", not both");
            }
        }
    }
    io.columns("memory_columns", r.memoryTimeline);
    io.columns("telemetry_columns", r.telemetry);
    io.optional("telemetry_note", r.telemetryNote);
    io.field("sampler_cpu_ms", r.samplerCpuMs);
    io.optional("sampler_error", r.samplerError);
    io.nullableObject("memory_snapshot", r.memorySnapshot);
}

json memorySampleJson(const MemorySample& m) {
    return toObject(m);
}
MemorySample memorySampleFrom(const json& j, const std::string& path) {
    return fromObject<MemorySample>(j, path);
}
json telemetrySampleJson(const TelemetrySample& t) {
    return toObject(t);
}
TelemetrySample telemetrySampleFrom(const json& e, const std::string& path) {
    return fromObject<TelemetrySample>(e, path);
}

void memoryFields(Writer& io, const RunResult& r) {
    memoryFieldsOf(io, r);
}
void memoryFields(Reader& io, RunResult& r) {
    memoryFieldsOf(io, r);
}
void memoryFields(SimdReader& io, RunResult& r) {
    memoryFieldsOf(io, r);
}

// ---------------------------------------------------------------------------------------
// Allocation trace file

// An event is written as an action and a size ("free", 4096) and read back as a signed size;
// its address is hexadecimal text, as allocators print it.
template <typename Io>
void fields(Io& io, Ref<AllocationEvent, Io> e) {
    io.required("t_ms", e.tMs);
    if constexpr (Io::kReads) {
        std::string action, address;
        io.required("action", action);
        io.required("bytes", e.bytes);
        io.required("address", address);
        if (action != "alloc" && action != "free") {
            io.refuse("action", "expected \"alloc\" or \"free\", got \"" + action + "\"");
        }
        if (e.bytes < 0) {
            io.refuse("bytes", "must not be negative");
        }
        e.bytes = action == "alloc" ? e.bytes : -e.bytes;
        try {
            e.address = std::stoull(address, nullptr, 16);
        } catch (const std::exception&) {
            io.refuse("address", "expected a hexadecimal address, got \"" + address + "\"");
        }
    } else {
        char address[32];
        std::snprintf(address, sizeof(address), "0x%llx",
                      static_cast<unsigned long long>(e.address));
        io.required("action", std::string(e.bytes >= 0 ? "alloc" : "free"));
        io.required("bytes", e.bytes >= 0 ? e.bytes : -e.bytes);
        io.required("address", std::string(address));
    }
    io.enumeration("phase", e.phase, parsePhase, true);
    io.required("step", e.step);
}

template <typename Io>
void fields(Io& io, Ref<AllocationTrace, Io> t) {
    if constexpr (!Io::kReads) {
        io.out["schema"] = kAllocTraceSchema; // checked before reading
    }
    io.field("run_id", t.runId);
    io.field("device", t.device);
    io.field("first_step", t.firstStep);
    io.field("step_count", t.stepCount);
    io.field("max_entries", t.maxEntries);
    io.field("truncated", t.truncated);
    io.array("events", t.events);
}

} // namespace json_io

std::string allocationTraceToJson(const AllocationTrace& t) {
    return json_io::toObject(t).dump(1, ' ', false, json_io::json::error_handler_t::replace);
}

AllocationTrace parseAllocationTrace(std::string_view text) {
    using namespace json_io;
    const json doc = parseDocument(text);
    std::string schema;
    if (!doc.is_object() || !doc.contains("schema")) {
        throw ResultFormatError(
            std::string("not an lmprof allocation trace: no \"schema\" (expected \"") +
            kAllocTraceSchema + "\")");
    }
    read(doc, "$", "schema", schema, true);
    if (schema != kAllocTraceSchema) {
        throw ResultFormatError("not an lmprof allocation trace: schema is \"" + schema +
                                "\", expected \"" + kAllocTraceSchema + "\"");
    }
    return fromObject<AllocationTrace>(doc, "$");
}

// ---------------------------------------------------------------------------------------
// Largest allocations

std::vector<AllocationRecord> largestAllocations(const std::vector<AllocationEvent>& events,
                                                 size_t n) {
    std::vector<AllocationRecord> all;
    std::unordered_map<uint64_t, size_t> live; // address -> index into all
    for (const auto& e : events) {
        if (e.bytes > 0) {
            live[e.address] = all.size();
            all.push_back({e.bytes, e.tMs, -1.0, e.phase, e.step});
        } else if (auto it = live.find(e.address); it != live.end()) {
            all[it->second].lifetimeMs = e.tMs - all[it->second].tMs;
            live.erase(it);
        }
    }
    const size_t keep = std::min(n, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                      [](const AllocationRecord& a, const AllocationRecord& b) {
                          return a.bytes != b.bytes ? a.bytes > b.bytes : a.tMs < b.tMs;
                      });
    all.resize(keep);
    return all;
}

} // namespace lmprof::engine
