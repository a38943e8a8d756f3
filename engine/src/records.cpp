// Names of run statuses as they appear in JSON and reports.

#include "lmprof/engine/records.h"

#include "enum_names.h"

#include <cstdio>

namespace lmprof::engine {

std::string_view toString(RunStatus s) {
    switch (s) {
    case RunStatus::Ok:
        return "ok";
    case RunStatus::Oom:
        return "oom";
    case RunStatus::Error:
        return "error";
    case RunStatus::Cancelled:
        return "cancelled";
    case RunStatus::Skipped:
        return "skipped";
    }
    return "?";
}

std::optional<RunStatus> parseRunStatus(std::string_view s) {
    return parseByName(s, {RunStatus::Ok, RunStatus::Oom, RunStatus::Error, RunStatus::Cancelled,
                           RunStatus::Skipped});
}

std::vector<std::string> throttleReasonNames(uint64_t bits, bool includeBenign) {
    // Bit values of NVML's nvmlClocksEventReason* constants.
    struct Reason {
        uint64_t bit;
        const char* name;
        bool benign;
    };
    static constexpr Reason kReasons[] = {
        {0x1, "gpu idle", true},
        {0x2, "application clocks setting", true},
        {0x4, "sw power cap", false},
        {0x8, "hw slowdown", false},
        {0x10, "sync boost", false},
        {0x20, "sw thermal slowdown", false},
        {0x40, "hw thermal slowdown", false},
        {0x80, "hw power brake slowdown", false},
        {0x100, "display clock setting", true},
    };
    std::vector<std::string> names;
    uint64_t known = 0;
    for (const auto& r : kReasons) {
        known |= r.bit;
        if ((bits & r.bit) && (includeBenign || !r.benign)) {
            names.emplace_back(r.name);
        }
    }
    if (const uint64_t unknown = bits & ~known) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(unknown));
        names.emplace_back(buf);
    }
    return names;
}

} // namespace lmprof::engine
