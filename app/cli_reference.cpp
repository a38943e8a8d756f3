// lmprof-cli watch --against-reference (docs/WATCH.md, "Against the reference"): the user's
// implementation against lmprof's engine at the same size, precision and batch.

#include "cli_commands.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <iostream>

namespace lmprof::app {

using namespace lmprof::engine;

namespace {
// The engine's measured steps: as many as the script's, within the engine's default and a
// bound that keeps the reference short beside a long training run.
constexpr int kMinReferenceSteps = 10;
constexpr int kMaxReferenceSteps = 50;
} // namespace

std::vector<RunResult> runReferences(const std::vector<RunResult>& watched,
                                     const CommonOptions& options, std::ostream& out) {
    std::vector<RunConfig> configs;
    std::vector<const RunResult*> pairedWith;
    for (const RunResult& run : watched) {
        std::string why;
        const int steps = std::clamp(static_cast<int>(measuredStepTimes(run.steps).size()),
                                     kMinReferenceSteps, kMaxReferenceSteps);
        if (auto config = referenceConfig(run, steps, why)) {
            configs.push_back(*config);
            pairedWith.push_back(&run);
        } else {
            std::cerr << "lmprof-cli: watch: no reference for " << why << "\n";
        }
    }
    if (configs.empty()) {
        return {};
    }
    CommonOptions engineOptions = options;
    engineOptions.jsonPath.clear();
    const auto engine = openEngine(engineOptions);
    if (!engine) {
        return {};
    }
    std::fprintf(stderr,
                 "lmprof-cli: watch: running lmprof's engine at the script's size "
                 "(%zu run(s))\n",
                 configs.size());
    std::vector<RunResult> references = runAll(*engine, configs, options.quiet, false, {});
    Comparison c;
    for (size_t i = 0; i < references.size() && i < pairedWith.size(); ++i) {
        c.matched.push_back(compareTwo(references[i], *pairedWith[i]));
    }
    const ReportFormat format = *parseReportFormat(options.format);
    out << "\nYour implementation (B) against lmprof's reference engine (A):\n";
    writeComparison(out, c, format);
    for (const ComparedRun& m : c.matched) {
        out << "\n" << m.b.id << " against " << m.a.id << ", per phase:\n";
        writeRows(out, phaseComparisonRows(comparePhases(m.a, m.b)), format, 1);
    }
    for (size_t i = 0; i < pairedWith.size(); ++i) {
        const auto& source = pairedWith[i]->source;
        if (source && source->optimizer && *source->optimizer != "AdamW") {
            out << "Note: " << pairedWith[i]->id << " steps " << *source->optimizer
                << "; the reference steps AdamW, so their optimizer phases differ by design.\n";
        }
    }
    out << "\n";
    return references;
}

} // namespace lmprof::app
