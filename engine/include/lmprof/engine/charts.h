// The window's exportable charts, by the name everything outside the window uses for them
// (docs/WINDOW.md, "Exporting charts"): the stem of a chart's PNG, what --export-plots and a
// demo's save_chart name, and the charts of the study's report (study.h). The window's view
// registry (ui/src/views/registry.cpp) draws each of these and no other, and the report can
// only name one of these: a chart is asked for by its ChartId, never by a string. The test
// ChartRegistry.IsTheWindowsChartsBothWays (tests/ui) checks both directions.
#pragma once

#include <array>
#include <string_view>

namespace lmprof::engine {

struct ChartId {
    const char* name;
    bool operator==(const ChartId& other) const { return std::string_view(name) == other.name; }
};

namespace chart {
inline constexpr ChartId kStepTimes{"step-times"};
inline constexpr ChartId kDistribution{"distribution"};
inline constexpr ChartId kThroughput{"throughput"};
inline constexpr ChartId kMemory{"memory"};
inline constexpr ChartId kMemoryBreakdown{"memory-breakdown"};
inline constexpr ChartId kTelemetry{"telemetry"};
inline constexpr ChartId kModules{"modules"};
inline constexpr ChartId kOpsAttention{"ops-attention"};
inline constexpr ChartId kDdpStrategies{"ddp-strategies"};
inline constexpr ChartId kDdpLanes{"ddp-lanes"};
inline constexpr ChartId kAccumulation{"accumulation"};
inline constexpr ChartId kLoss{"loss"};
inline constexpr ChartId kLossScale{"loss-scale"};
inline constexpr ChartId kGradNorms{"grad-norms"};
} // namespace chart

inline constexpr std::array kChartIds{
    chart::kStepTimes,       chart::kDistribution, chart::kThroughput,   chart::kMemory,
    chart::kMemoryBreakdown, chart::kTelemetry,    chart::kModules,      chart::kOpsAttention,
    chart::kDdpStrategies,   chart::kDdpLanes,     chart::kAccumulation, chart::kLoss,
    chart::kLossScale,       chart::kGradNorms,
};

} // namespace lmprof::engine
