// The names of a verdict's kind, severity and certainty (run_verdict.h).

#include "lmprof/engine/run_verdict.h"

#include "enum_names.h"

namespace lmprof::engine {

namespace {

constexpr EnumNames<VerdictKind, 11> kKindNames{{
    {VerdictKind::InputBound, "input-bound"},
    {VerdictKind::OptimizerBound, "optimizer-bound"},
    {VerdictKind::HostBound, "host-bound"},
    {VerdictKind::MemoryCreep, "memory-creep"},
    {VerdictKind::MemoryPressure, "memory-pressure"},
    {VerdictKind::Recompiles, "recompiles"},
    {VerdictKind::PeriodicStalls, "periodic-stalls"},
    {VerdictKind::Straggler, "straggler"},
    {VerdictKind::Noisy, "noisy"},
    {VerdictKind::Drift, "drift"},
    {VerdictKind::ComputeBound, "compute-bound"},
}};
constexpr EnumNames<Severity, 3> kSeverityNames{
    {{Severity::Info, "info"}, {Severity::Warn, "warn"}, {Severity::Critical, "critical"}}};
constexpr EnumNames<Certainty, 3> kCertaintyNames{{{Certainty::Firm, "firm"},
                                                   {Certainty::Likely, "likely"},
                                                   {Certainty::Abstained, "abstained"}}};

} // namespace

std::string_view toString(VerdictKind kind) {
    return nameIn(kKindNames, kind);
}
std::optional<VerdictKind> parseVerdictKind(std::string_view name) {
    return parseByName(name, kVerdictKinds);
}
std::string_view toString(Severity severity) {
    return nameIn(kSeverityNames, severity);
}
std::optional<Severity> parseSeverity(std::string_view name) {
    return parseByName(name, kSeverities);
}
std::string_view toString(Certainty certainty) {
    return nameIn(kCertaintyNames, certainty);
}
std::optional<Certainty> parseCertainty(std::string_view name) {
    return parseByName(name, kCertainties);
}

} // namespace lmprof::engine
