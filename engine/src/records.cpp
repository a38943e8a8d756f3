// Names of run statuses as they appear in JSON and reports.

#include "lmprof/engine/records.h"

#include "enum_names.h"

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

} // namespace lmprof::engine
