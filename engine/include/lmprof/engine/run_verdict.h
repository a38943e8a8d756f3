// A verdict as a record (docs/VERDICTS.md): its kind, severity, certainty, value with its
// interval, and the words for people. What judges a run is verdicts.h; this is what a run
// record holds, so records.h needs nothing more.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// The kinds' names are the interface (JSON, CLI, the window): "input-bound", ...
enum class VerdictKind {
    InputBound,
    OptimizerBound,
    HostBound,
    MemoryCreep,
    MemoryPressure,
    Recompiles,
    PeriodicStalls,
    Straggler,
    Noisy,
    Drift,
    ComputeBound,
};
inline constexpr std::array kVerdictKinds{
    VerdictKind::InputBound,     VerdictKind::OptimizerBound, VerdictKind::HostBound,
    VerdictKind::MemoryCreep,    VerdictKind::MemoryPressure, VerdictKind::Recompiles,
    VerdictKind::PeriodicStalls, VerdictKind::Straggler,      VerdictKind::Noisy,
    VerdictKind::Drift,          VerdictKind::ComputeBound};
std::string_view toString(VerdictKind kind);
std::optional<VerdictKind> parseVerdictKind(std::string_view name);

enum class Severity { Info, Warn, Critical };
inline constexpr std::array kSeverities{Severity::Info, Severity::Warn, Severity::Critical};
std::string_view toString(Severity severity);
std::optional<Severity> parseSeverity(std::string_view name);

// Firm: the whole 95% interval is past the threshold. Likely: only the estimate is (then
// the severity is info). Abstained: too few steps to say (evidence says how many it needs).
enum class Certainty { Firm, Likely, Abstained };
inline constexpr std::array kCertainties{Certainty::Firm, Certainty::Likely, Certainty::Abstained};
std::string_view toString(Certainty certainty);
std::optional<Certainty> parseCertainty(std::string_view name);

struct RunVerdict {
    VerdictKind kind = VerdictKind::ComputeBound;
    Severity severity = Severity::Info;
    Certainty certainty = Certainty::Firm;
    double value = 0.0;
    std::string unit; // "share", "bytes/100 steps", "steps", ...
    double low = 0.0; // the value's 95% interval (docs/VERDICTS.md says how, per kind)
    double high = 0.0;
    double threshold = 0.0; // the warning threshold in the value's unit
    std::string rule;       // the rule in one sentence
    std::string evidence;   // the figures behind it, with the steps they cover
    std::string advice;     // the next thing to try
    std::string chart;      // the chart that shows it (charts.h)
    int firstStep = 0;      // the steps it covers
    int lastStep = 0;
    // A verdict about several runs together (ResultSet::verdicts: a straggler among a
    // watched script's ranks): their ids. Empty on a run's own verdicts.
    std::vector<std::string> runs;
};

} // namespace lmprof::engine
