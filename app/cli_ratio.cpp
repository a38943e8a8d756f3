// lmprof-cli ratio: the project's log-ratio test (stats.h, meanRatio) for numbers measured
// outside a result set, such as the per-round means of a benchmark that alternates two
// programs in fresh processes (bench/gpu_bench.py). B/A with its 95% interval, the test of
// "the ratio is 1" and the verdict compare uses (within noise unless p < 0.05).
#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/stats.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace lmprof::app {

namespace {

// "1.5,2,2.5" -> values; every entry a positive finite number (a mean time or rate).
std::optional<std::vector<double>> parseValues(const std::string& flag, const std::string& text) {
    std::vector<double> out;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        const std::string item =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        char* end = nullptr;
        errno = 0;
        const double v = item.empty() ? 0.0 : std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || errno == ERANGE ||
            !std::isfinite(v) || v <= 0.0) {
            std::cerr << "lmprof-cli ratio: " << flag << ": entry " << out.size() + 1 << " '"
                      << item << "' is not a positive finite number\n";
            return std::nullopt;
        }
        out.push_back(v);
        if (comma == std::string::npos) {
            return out;
        }
        start = comma + 1;
    }
}

} // namespace

int ratioCommand(const RatioOptions& o) {
    const auto a = parseValues("--a", o.a);
    const auto b = parseValues("--b", o.b);
    if (!a || !b) {
        return kExitUsage;
    }
    const engine::RatioInterval r = engine::meanRatio(*a, *b);
    const engine::Verdict verdict = engine::verdictOf(r, a->size(), b->size());
    // compare's words, but its "too few steps" would misname what is missing here.
    const std::string said = verdict == engine::Verdict::Untestable
                                 ? "untestable (fewer than 2 values a side)"
                                 : std::string(toString(verdict));
    if (o.format == "json") {
        nlohmann::json j{{"ratio", r.ratio}, {"low", r.low},    {"high", r.high},
                         {"p", r.test.p},    {"df", r.test.df}, {"n_a", a->size()},
                         {"n_b", b->size()}, {"verdict", said}};
        std::cout << j.dump() << "\n";
    } else {
        std::cout << std::fixed << std::setprecision(4) << "B/A " << r.ratio << "  95% interval ["
                  << r.low << ", " << r.high << "]  p " << r.test.p << "  (" << a->size() << " and "
                  << b->size() << " values)  " << said << "\n";
    }
    return kExitOk;
}

CliCommand ratioEntry() {
    return {
        "ratio", "mean(B)/mean(A) of two lists of measurements, 95% interval and verdict", false,
        [](CLI::App& cmd) {
            auto o = std::make_shared<RatioOptions>();
            addText(cmd, "--a", o->a, "comma-separated positive values (the baseline)")->required();
            addText(cmd, "--b", o->b, "comma-separated positive values (compared with A)")
                ->required();
            addChoice(cmd, "--format", o->format, {"table", "json"}, "table|json [table]");
            return std::function<int()>([o] { return ratioCommand(*o); });
        }};
}

} // namespace lmprof::app
