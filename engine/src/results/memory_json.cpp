// JSON of the memory side of a run (memory_timeline, telemetry, memory_snapshot) and of the
// CPU allocation trace file (lmprof.alloc-trace/1), plus the largest-allocations summary.
//
// Sections: run memory fields · allocation trace file · largest allocations.

#include "lmprof/engine/alloc_trace.h"
#include "results/json_access.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace lmprof::engine {

namespace json_io {

// ---------------------------------------------------------------------------------------
// Run memory fields

namespace {

template <typename T>
void putIf(json& j, const char* key, const std::optional<T>& v) {
    if (v) {
        j[key] = *v;
    }
}

json allocationJson(const AllocationRecord& a) {
    return {{"bytes", a.bytes},
            {"t_ms", a.tMs},
            {"lifetime_ms", a.lifetimeMs},
            {"phase", toString(a.phase)},
            {"step", a.step}};
}

AllocationRecord allocationFrom(const json& j, const std::string& path) {
    AllocationRecord a;
    read(j, path, "bytes", a.bytes, true);
    read(j, path, "t_ms", a.tMs);
    read(j, path, "lifetime_ms", a.lifetimeMs);
    readEnum(j, path, "phase", a.phase, parsePhase);
    read(j, path, "step", a.step);
    return a;
}

} // namespace

json memorySampleJson(const MemorySample& m) {
    json j = {{"t_ms", m.tMs},         {"allocated", m.allocated},   {"reserved", m.reserved},
              {"rss", m.rss},          {"phase", toString(m.phase)}, {"step", m.step},
              {"boundary", m.boundary}};
    if (m.deviceTotal > 0) {
        j["device_used"] = m.deviceUsed;
        j["device_total"] = m.deviceTotal;
    }
    return j;
}

MemorySample memorySampleFrom(const json& j, const std::string& path) {
    MemorySample m;
    read(j, path, "t_ms", m.tMs);
    read(j, path, "allocated", m.allocated);
    read(j, path, "reserved", m.reserved);
    read(j, path, "rss", m.rss);
    read(j, path, "device_used", m.deviceUsed);
    read(j, path, "device_total", m.deviceTotal);
    readEnum(j, path, "phase", m.phase, parsePhase);
    read(j, path, "step", m.step);
    read(j, path, "boundary", m.boundary);
    return m;
}

json telemetrySampleJson(const TelemetrySample& t) {
    json j = {{"t_ms", t.tMs}, {"cpu_percent", t.cpuPercent}, {"rss", t.rss}};
    putIf(j, "gpu_util_percent", t.gpuUtilPercent);
    putIf(j, "mem_util_percent", t.memUtilPercent);
    putIf(j, "power_w", t.powerW);
    putIf(j, "sm_clock_mhz", t.smClockMHz);
    putIf(j, "mem_clock_mhz", t.memClockMHz);
    putIf(j, "temperature_c", t.temperatureC);
    putIf(j, "throttle_reasons", t.throttleReasons);
    return j;
}

TelemetrySample telemetrySampleFrom(const json& e, const std::string& path) {
    TelemetrySample t;
    read(e, path, "t_ms", t.tMs);
    read(e, path, "cpu_percent", t.cpuPercent);
    read(e, path, "rss", t.rss);
    readOptional(e, path, "gpu_util_percent", t.gpuUtilPercent);
    readOptional(e, path, "mem_util_percent", t.memUtilPercent);
    readOptional(e, path, "power_w", t.powerW);
    readOptional(e, path, "sm_clock_mhz", t.smClockMHz);
    readOptional(e, path, "mem_clock_mhz", t.memClockMHz);
    readOptional(e, path, "temperature_c", t.temperatureC);
    readOptional(e, path, "throttle_reasons", t.throttleReasons);
    return t;
}

void writeMemory(json& run, const RunResult& r) {
    json timeline = json::array();
    for (const auto& m : r.memoryTimeline) {
        timeline.push_back(memorySampleJson(m));
    }
    run["memory_timeline"] = std::move(timeline);

    json telemetry = json::array();
    for (const auto& t : r.telemetry) {
        telemetry.push_back(telemetrySampleJson(t));
    }
    run["telemetry"] = std::move(telemetry);
    if (r.telemetryNote) {
        run["telemetry_note"] = *r.telemetryNote;
    }
    run["sampler_cpu_ms"] = r.samplerCpuMs;
    if (r.samplerError) {
        run["sampler_error"] = *r.samplerError;
    }

    if (const auto& s = r.memorySnapshot) {
        json largest = json::array();
        for (const auto& a : s->largest) {
            largest.push_back(allocationJson(a));
        }
        run["memory_snapshot"] = {{"path", s->path},
                                  {"format", s->format},
                                  {"first_step", s->firstStep},
                                  {"step_count", s->stepCount},
                                  {"entries", s->entries},
                                  {"truncated", s->truncated},
                                  {"error", nullable(s->error)},
                                  {"largest_allocations", std::move(largest)}};
    } else {
        run["memory_snapshot"] = nullptr;
    }
}

void readMemory(const json& j, const std::string& path, RunResult& r) {
    const json& timeline = arrayMember(j, path, "memory_timeline");
    for (size_t i = 0; i < timeline.size(); ++i) {
        r.memoryTimeline.push_back(
            memorySampleFrom(timeline[i], indexed(path, "memory_timeline", i)));
    }
    const json& telemetry = arrayMember(j, path, "telemetry");
    for (size_t i = 0; i < telemetry.size(); ++i) {
        r.telemetry.push_back(telemetrySampleFrom(telemetry[i], indexed(path, "telemetry", i)));
    }
    readOptional(j, path, "telemetry_note", r.telemetryNote);
    read(j, path, "sampler_cpu_ms", r.samplerCpuMs);
    readOptional(j, path, "sampler_error", r.samplerError);
    if (const json* s = member(j, path, "memory_snapshot", false)) {
        const std::string sp = path + ".memory_snapshot";
        MemorySnapshotInfo info;
        read(*s, sp, "path", info.path, true);
        read(*s, sp, "format", info.format);
        read(*s, sp, "first_step", info.firstStep);
        read(*s, sp, "step_count", info.stepCount);
        read(*s, sp, "entries", info.entries);
        read(*s, sp, "truncated", info.truncated);
        readOptional(*s, sp, "error", info.error);
        const json& largest = arrayMember(*s, sp, "largest_allocations");
        for (size_t i = 0; i < largest.size(); ++i) {
            info.largest.push_back(
                allocationFrom(largest[i], indexed(sp, "largest_allocations", i)));
        }
        r.memorySnapshot = std::move(info);
    }
}

} // namespace json_io

// ---------------------------------------------------------------------------------------
// Allocation trace file

using json_io::json;

std::string allocationTraceToJson(const AllocationTrace& t) {
    json events = json::array();
    char addr[32];
    for (const auto& e : t.events) {
        std::snprintf(addr, sizeof(addr), "0x%llx", static_cast<unsigned long long>(e.address));
        events.push_back({{"t_ms", e.tMs},
                          {"action", e.bytes >= 0 ? "alloc" : "free"},
                          {"bytes", e.bytes >= 0 ? e.bytes : -e.bytes},
                          {"address", addr},
                          {"phase", toString(e.phase)},
                          {"step", e.step}});
    }
    const json doc = {{"schema", kAllocTraceSchema}, {"run_id", t.runId},
                      {"device", t.device},          {"first_step", t.firstStep},
                      {"step_count", t.stepCount},   {"max_entries", t.maxEntries},
                      {"truncated", t.truncated},    {"events", std::move(events)}};
    return doc.dump(1, ' ', false, json::error_handler_t::replace);
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
    AllocationTrace t;
    read(doc, "$", "run_id", t.runId);
    read(doc, "$", "device", t.device);
    read(doc, "$", "first_step", t.firstStep);
    read(doc, "$", "step_count", t.stepCount);
    read(doc, "$", "max_entries", t.maxEntries);
    read(doc, "$", "truncated", t.truncated);
    const json& events = arrayMember(doc, "$", "events");
    for (size_t i = 0; i < events.size(); ++i) {
        const std::string ep = "$.events[" + std::to_string(i) + "]";
        AllocationEvent e;
        std::string action, address;
        read(events[i], ep, "t_ms", e.tMs, true);
        read(events[i], ep, "action", action, true);
        read(events[i], ep, "bytes", e.bytes, true);
        read(events[i], ep, "address", address, true);
        readEnum(events[i], ep, "phase", e.phase, parsePhase, true);
        read(events[i], ep, "step", e.step, true);
        if (action != "alloc" && action != "free") {
            fail(ep + ".action", "expected \"alloc\" or \"free\", got \"" + action + "\"");
        }
        if (e.bytes < 0) {
            fail(ep + ".bytes", "must not be negative");
        }
        e.bytes = action == "alloc" ? e.bytes : -e.bytes;
        try {
            e.address = std::stoull(address, nullptr, 16);
        } catch (const std::exception&) {
            fail(ep + ".address", "expected a hexadecimal address, got \"" + address + "\"");
        }
        t.events.push_back(e);
    }
    return t;
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
