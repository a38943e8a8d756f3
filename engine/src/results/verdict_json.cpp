// A run's verdicts in the result set (docs/VERDICTS.md, docs/RESULTS.md): "verdicts", an
// array of records written from judgeRun and read back as written; a run without the
// member (a file older than verdicts) is judged from its steps as it is read.

#include "lmprof/engine/charts.h"
#include "lmprof/engine/verdicts.h"
#include "results/fields.h"

namespace lmprof::engine::json_io {

namespace {

// Every value a rule produces is a share, a byte count per 100 steps or a count.
constexpr double kMaxValue = 1e18;

} // namespace

template <typename Io>
void fields(Io& io, Ref<RunVerdict, Io> v) {
    io.enumeration("kind", v.kind, parseVerdictKind, true);
    io.enumeration("severity", v.severity, parseSeverity, true);
    io.enumeration("certainty", v.certainty, parseCertainty, true);
    io.between("value", v.value, -kMaxValue, kMaxValue, true);
    io.field("unit", v.unit);
    if constexpr (Io::kReads) {
        const auto& a = arrayMember(io.in, io.path, "interval");
        if (a.size() != 2) {
            io.refuse("interval", "expected [low, high]");
        }
        double bounds[2] = {0.0, 0.0};
        forEachElement(a, [&](const auto& e, size_t i) {
            if (!e.is_number() || !(std::abs(e.template get<double>()) <= kMaxValue)) {
                fail(indexed(io.path, "interval", i), "expected a number");
            }
            bounds[i] = e.template get<double>();
        });
        if (bounds[0] > bounds[1]) {
            io.refuse("interval", "its low end is above its high end");
        }
        v.low = bounds[0];
        v.high = bounds[1];
    } else {
        io.slot("interval") = json::array({v.low, v.high});
    }
    io.between("threshold", v.threshold, -kMaxValue, kMaxValue);
    io.field("rule", v.rule);
    io.field("evidence", v.evidence);
    io.field("advice", v.advice);
    io.field("chart", v.chart);
    if constexpr (Io::kReads) {
        if (!v.chart.empty() && std::none_of(kChartIds.begin(), kChartIds.end(),
                                             [&](ChartId c) { return v.chart == c.name; })) {
            io.refuse("chart", "\"" + v.chart + "\" is not a chart of lmprof's");
        }
    }
    io.group("steps", [&](auto& steps) {
        steps.between("first", v.firstStep, 0, kMaxWatchedSteps);
        steps.between("last", v.lastStep, 0, kMaxWatchedSteps);
    });
    if constexpr (Io::kReads) {
        if (io.has("runs")) {
            io.strings("runs", v.runs);
        }
    } else if (!v.runs.empty()) {
        io.strings("runs", v.runs);
    }
    if constexpr (Io::kReads) {
        if (v.firstStep > v.lastStep) {
            io.refuse("steps", "its first step is after its last");
        }
    }
}

void verdictFields(Writer& io, const RunResult& r) {
    io.array("verdicts", r.verdicts.empty() ? judgeRun(r) : r.verdicts);
}

template <typename J>
void readVerdictFields(BasicReader<J>& io, RunResult& r) {
    if (io.has("verdicts")) {
        io.array("verdicts", r.verdicts);
    } else {
        r.verdicts = judgeRun(r);
    }
}
void verdictFields(Reader& io, RunResult& r) {
    readVerdictFields(io, r);
}
void verdictFields(SimdReader& io, RunResult& r) {
    readVerdictFields(io, r);
}

void setVerdictFields(Writer& io, const std::optional<std::vector<RunVerdict>>& verdicts) {
    if (verdicts && !verdicts->empty()) {
        io.array("verdicts", *verdicts);
    }
}
void setVerdictFields(Reader& io, std::optional<std::vector<RunVerdict>>& verdicts) {
    if (io.has("verdicts")) {
        verdicts.emplace();
        io.array("verdicts", *verdicts);
    }
}

} // namespace lmprof::engine::json_io
