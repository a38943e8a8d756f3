// The CPU memory snapshot: every allocation and free of the steps being recorded, with the
// phase and step they happened in, saved as JSON (schema lmprof.alloc-trace/1). Also the
// "largest allocations" summary both kinds of snapshot feed to the Memory view.
#pragma once

#include "lmprof/engine/records.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

inline constexpr const char* kAllocTraceSchema = "lmprof.alloc-trace/1";

struct AllocationEvent {
    double tMs = 0.0;     // since the run started
    int64_t bytes = 0;    // > 0 an allocation, < 0 a free of that many bytes
    uint64_t address = 0; // pairs a free with its allocation
    Phase phase = Phase::Forward;
    int step = 0;
};

struct AllocationTrace {
    std::string runId;
    std::string device;
    int firstStep = 0;
    int stepCount = 0;
    int64_t maxEntries = 0;
    bool truncated = false; // events after the limit were dropped
    std::vector<AllocationEvent> events;
};

std::string allocationTraceToJson(const AllocationTrace& trace);
// Throws ResultFormatError naming the JSON path of the first problem.
AllocationTrace parseAllocationTrace(std::string_view text);

// The n largest allocations, largest first. A free is matched to the latest unmatched
// allocation at its address; allocations never freed get lifetime -1.
std::vector<AllocationRecord> largestAllocations(const std::vector<AllocationEvent>& events,
                                                 size_t n);

} // namespace lmprof::engine
