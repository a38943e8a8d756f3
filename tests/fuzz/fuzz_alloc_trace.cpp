// libFuzzer target: a CPU allocation trace (lmprof.alloc-trace/1) as the Memory view reads
// it, and the largest-allocations summary over its events.

#include "lmprof/engine/alloc_trace.h"
#include "lmprof/engine/result_io.h"

#include <cstdint>
#include <string_view>

using namespace lmprof::engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const AllocationTrace trace = parseAllocationTrace(text);
        largestAllocations(trace.events, 10);
        parseAllocationTrace(allocationTraceToJson(trace));
    } catch (const ResultFormatError&) {
    }
    return 0;
}
