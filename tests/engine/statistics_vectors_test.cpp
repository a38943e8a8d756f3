// The engine against tests/data/statistics_vectors.json, the step times and statistics the
// Python watcher is held to as well (python/tests/test_statistics_vectors.py): a rule changed
// in one language alone fails one of the two.

#include "lmprof/engine/records.h"
#include "lmprof/engine/stats.h"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace lmprof::engine;
using nlohmann::json;

namespace {

json vectors() {
    std::ifstream in(std::string(LMPROF_SOURCE_DIR) + "/tests/data/statistics_vectors.json");
    return json::parse(in); // throws, failing the test, when missing or broken
}

// Equal to a part in 10^12 (the two languages sum in the same order, so most figures are
// bit-equal; a quantile's interpolation may round in the last place).
void expectClose(double actual, double expected, const std::string& what) {
    EXPECT_NEAR(actual, expected, 1e-12 * std::max(1.0, std::fabs(expected))) << what;
}

void expectStats(const PhaseStats& s, const json& e, const std::string& what) {
    EXPECT_EQ(s.n, e.at("n").get<int>()) << what;
    expectClose(s.mean, e.at("mean").get<double>(), what + ": mean");
    expectClose(s.std, e.at("std").get<double>(), what + ": std");
    expectClose(s.median, e.at("median").get<double>(), what + ": median");
    expectClose(s.min, e.at("min").get<double>(), what + ": min");
    expectClose(s.max, e.at("max").get<double>(), what + ": max");
    expectClose(s.p95, e.at("p95").get<double>(), what + ": p95");
    expectClose(s.cv, e.at("cv").get<double>(), what + ": cv");
    expectClose(s.iqr, e.at("iqr").get<double>(), what + ": iqr");
    EXPECT_EQ(s.noisy, e.at("noisy").get<bool>()) << what << ": noisy";
}

} // namespace

TEST(StatisticsVectors, TheRulesAreTheEngines) {
    const json rules = vectors().at("rules");
    EXPECT_EQ(rules.at("noisy_iqr_ratio").get<double>(), kNoisyIqrRatio);
    EXPECT_EQ(rules.at("exact_values").get<size_t>(), PhaseTally::kExactValues);
    EXPECT_EQ(rules.at("bins_per_octave").get<int>(), PhaseTally::kBinsPerOctave);
}

// computeStats for the few values a run keeps; PhaseTally's log bins past kExactValues.
TEST(StatisticsVectors, PhaseStatistics) {
    const json doc = vectors(); // held: a range over a temporary's member would dangle
    for (const json& c : doc.at("phase_cases")) {
        const auto name = c.at("name").get<std::string>();
        const auto values = c.at("values").get<std::vector<double>>();
        const int repeat = c.value("repeat", 1);
        PhaseTally tally;
        std::vector<double> all;
        for (int r = 0; r < repeat; ++r) {
            for (double v : values) {
                tally.add(v);
                all.push_back(v);
            }
        }
        EXPECT_EQ(tally.binned(), all.size() > PhaseTally::kExactValues) << name;
        expectStats(tally.stats(), c.at("expected"), name);
        if (!tally.binned()) {
            expectStats(computeStats(all), c.at("expected"), name + " (computeStats)");
        }
    }
}

// summarize: which steps are measured, and where the peaks come from.
TEST(StatisticsVectors, RunSummaries) {
    const json doc = vectors();
    for (const json& c : doc.at("run_cases")) {
        std::vector<StepRecord> steps;
        for (const json& j : c.at("steps")) {
            StepRecord s;
            s.index = j.at("index").get<int>();
            s.warmup = j.at("warmup").get<bool>();
            s.opProfiled = j.at("op_profiled").get<bool>();
            s.memorySnapshot = j.at("memory_snapshot").get<bool>();
            s.dataMs = j.at("data_ms").get<double>();
            s.forwardMs = j.at("forward_ms").get<double>();
            s.backwardMs = j.at("backward_ms").get<double>();
            s.optimizerMs = j.at("optimizer_ms").get<double>();
            s.restMs = j.at("rest_ms").get<double>();
            s.totalMs = j.at("total_ms").get<double>();
            const json& peaks = j.at("peak_allocated_by_phase");
            s.phasePeakBytes = {peaks.at("forward").get<int64_t>(),
                                peaks.at("backward").get<int64_t>(),
                                peaks.at("optimizer").get<int64_t>()};
            steps.push_back(s);
        }
        const RunSummary summary = summarize(RunConfig{}, steps, std::nullopt);
        const json& e = c.at("expected");
        const auto name = c.at("name").get<std::string>();
        expectStats(summary.forwardMs, e.at("forward_ms"), name + ": forward_ms");
        expectStats(summary.backwardMs, e.at("backward_ms"), name + ": backward_ms");
        expectStats(summary.optimizerMs, e.at("optimizer_ms"), name + ": optimizer_ms");
        expectStats(summary.totalMs, e.at("total_ms"), name + ": total_ms");
        ASSERT_TRUE(summary.dataMs && summary.restMs) << name << ": a watched run's phases";
        expectStats(*summary.dataMs, e.at("data_ms"), name + ": data_ms");
        expectStats(*summary.restMs, e.at("rest_ms"), name + ": rest_ms");
        const json& peaks = e.at("peak_bytes");
        EXPECT_EQ(summary.peakBytes.forward, peaks.at("forward").get<int64_t>()) << name;
        EXPECT_EQ(summary.peakBytes.backward, peaks.at("backward").get<int64_t>()) << name;
        EXPECT_EQ(summary.peakBytes.optimizer, peaks.at("optimizer").get<int64_t>()) << name;
    }
}
