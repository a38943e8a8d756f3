// Names of run statuses as they appear in JSON and reports.

#include "lmprof/engine/records.h"

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
    for (auto v : {RunStatus::Ok, RunStatus::Oom, RunStatus::Error, RunStatus::Cancelled,
                   RunStatus::Skipped}) {
        if (toString(v) == s) {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace lmprof::engine
