// lmprof-cli run and sweep: one configuration, or every combination of lists, on the engine
// (this process's or, with --connect, a server's), with progress, reports and result sets.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/sweep.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace lmprof::app {

using namespace lmprof::engine;

// ---------------------------------------------------------------------------------------
// run

std::optional<RunConfig> buildRunConfig(const RunOptions& o, std::optional<DdpRequest> ddp,
                                        const SessionInterface* engine) {
    if (o.snapshotPath.empty()) {
        return buildConfig(o.model, o.ctx, o.precision, o.mode, o.common, std::nullopt, ddp,
                           engine);
    }
    SnapshotRequest snap = defaultSnapshotRequest(o.snapshotPath, o.common.warmup);
    if (o.snapshotStep >= 0) {
        snap.firstStep = o.snapshotStep;
    }
    snap.stepCount = o.snapshotSteps;
    snap.maxEntries = o.snapshotMaxEntries;
    return buildConfig(o.model, o.ctx, o.precision, o.mode, o.common, snap, ddp, engine);
}

int runCommand(const RunOptions& o) {
    if (!checkFormat(o.common.format) || !checkJsonTarget(o.common.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.common);
    if (!engine) {
        return kExitFailure;
    }
    auto config = buildRunConfig(o, std::nullopt, engine.get());
    if (!config) {
        return kExitUsage;
    }
    std::vector<RunConfig> configs{*config};
    assignTracePaths(configs, o.common);
    auto runs = runAll(*engine, configs, o.common.quiet, false, {});
    const Environment environment = engine->environment(o.common.device);
    const int code = reportRuns(runs, o.common, &environment);
    if (!runs.empty() && runs.front().opProfile) {
        if (*parseReportFormat(o.common.format) == ReportFormat::Csv) {
            // stdout is one CSV table; the profile's own CSV is one command away.
            std::fprintf(stderr, "op profile: lmprof-cli ops %s --format csv\n",
                         o.common.jsonPath.empty() ? "FILE.json (save with --json)"
                                                   : o.common.jsonPath.c_str());
        } else {
            std::cout << "\n";
            writeOpReport(std::cout, runs, {}, *parseReportFormat(o.common.format));
        }
    }
    for (const auto& r : runs) {
        if (const auto& snap = r.memorySnapshot) {
            if (snap->error) {
                std::cerr << "lmprof-cli: --memory-snapshot: " << *snap->error << "\n";
                return code == kExitOk ? kExitFailure : code;
            }
            std::fprintf(
                stderr, "memory snapshot of step(s) %d..%d: %lld events%s, written to %s\n",
                snap->firstStep, snap->firstStep + snap->stepCount - 1,
                static_cast<long long>(snap->entries),
                snap->truncated ? " (limit reached, later ones dropped)" : "", snap->path.c_str());
        }
    }
    return code;
}

// ---------------------------------------------------------------------------------------
// sweep

namespace {

// The lists of the execution variants and of the plain fields a sweep can list into
// spec.choices and spec.values, each value checked, the first of each list into `common`
// (the base's); false when one is refused (said on stderr).
bool addFieldLists(const CommonOptions& given, CommonOptions& common, SweepSpec& spec) {
    // The variants' lists: each value checked here, the first one the base's.
    for (const auto& [key, values] : given.choices) {
        if (values.empty()) {
            continue;
        }
        for (const auto& v : values) {
            if (auto why = choiceField(key)->unknown(v)) {
                printConfigErrors({{key, *why}});
                return false;
            }
        }
        common.choices[key] = {values.front()};
        spec.choices.emplace_back(key, values);
    }
    // The plain fields' lists: each value one its field holds, the first one the base's (which
    // the engine checks with the rest of the base).
    for (const auto& [key, values] : given.valueLists) {
        if (values.empty()) {
            continue;
        }
        const ValueField& field = *valueField(key);
        if (auto why = field.listError(values)) {
            printConfigErrors({{key, *why}});
            return false;
        }
        field.set(common.values, values.front());
        spec.values.emplace_back(key, values);
    }
    return true;
}

// The lists as a SweepSpec. Each model is built once with the first of the other lists
// (which checks the model flags); the other list entries are parsed one by one.
std::optional<SweepSpec> buildSweep(const SweepOptions& o, const SessionInterface& engine) {
    for (auto [empty, flag] : {std::pair{o.models.empty(), "--models"},
                               {o.ctx.empty(), "--ctx"},
                               {o.batches.empty(), "--batch"},
                               {o.precisions.empty(), "--precision"},
                               {o.modes.empty(), "--mode"},
                               {o.warmups.empty(), "--warmup"}}) {
        if (empty) {
            std::cerr << "lmprof-cli: " << flag << ": the list is empty\n";
            return std::nullopt;
        }
    }
    CommonOptions common = o.common;
    common.warmup = o.warmups.front();
    common.batch = o.batches.front();
    SweepSpec spec;
    if (!addFieldLists(o.common, common, spec)) {
        return std::nullopt;
    }
    // The base is checked in a mode with a backward when one is listed, so --grad-norms
    // goes with forward,train (expandSweep leaves it out of the forward runs).
    std::string baseMode = o.modes.front();
    if (common.values.gradNorms) {
        const auto withBackward = std::find_if(o.modes.begin(), o.modes.end(),
                                               [](const std::string& m) { return m != "forward"; });
        baseMode = withBackward != o.modes.end() ? *withBackward : baseMode;
    }
    for (const auto& model : o.models) {
        auto c = buildConfig(model, o.ctx.front(), o.precisions.front(), baseMode, common,
                             std::nullopt, std::nullopt, &engine);
        if (!c) {
            return std::nullopt;
        }
        spec.base = *c;
        spec.models.push_back(c->model);
    }
    for (const auto& p : o.precisions) {
        if (auto precision = parsePrecision(p)) {
            spec.precisions.push_back(*precision);
        } else {
            printConfigErrors(
                {{"precision", "'" + p + "' is not one of " + joinNames(kPrecisions)}});
            return std::nullopt;
        }
    }
    for (const auto& m : o.modes) {
        if (auto mode = parseMode(m)) {
            spec.modes.push_back(*mode);
        } else {
            printConfigErrors({{"mode", "'" + m + "' is not one of " + joinNames(kModes)}});
            return std::nullopt;
        }
    }
    spec.contexts = o.ctx;
    spec.warmups = o.warmups;
    spec.batches = o.batches;
    return spec;
}

} // namespace

int sweepCommand(const SweepOptions& o) {
    if (!checkFormat(o.common.format) || !checkJsonTarget(o.common.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.common);
    if (!engine) {
        return kExitFailure;
    }
    const auto spec = buildSweep(o, *engine);
    if (!spec) {
        return kExitUsage;
    }
    std::vector<RunConfig> configs = expandSweep(*spec); // cheapest first
    if (!o.shard.empty()) {
        int index = 0;
        int count = 0;
        char extra = 0;
        if (std::sscanf(o.shard.c_str(), "%d/%d%c", &index, &count, &extra) != 2 || count < 1 ||
            count > 100000 || index < 1 || index > count) {
            std::cerr << "lmprof-cli: --shard: '" << o.shard
                      << "' is not i/n with 1 <= i <= n (e.g. 2/4: the second of four shards)\n";
            return kExitUsage;
        }
        const size_t all = configs.size();
        configs = sweepShard(configs, index, count);
        if (!o.common.quiet) {
            std::fprintf(stderr, "shard %d/%d: %zu of the sweep's %zu configurations\n", index,
                         count, configs.size(), all);
        }
    }
    assignTracePaths(configs, o.common);
    for (const auto& c : configs) {
        if (!acceptConfig(c, engine.get())) {
            return kExitUsage;
        }
    }
    // A failed autosave (full disk, missing folder) is said once; the sweep goes on and its
    // table and --json are still written.
    bool autosaveFailed = false;
    auto finished = [&](const RunResult& r) {
        if (o.autosavePath.empty() || r.status == RunStatus::Skipped) {
            return;
        }
        try {
            appendRunJsonl(o.autosavePath, r);
        } catch (const std::exception& e) {
            if (!autosaveFailed) {
                std::cerr << "lmprof-cli: --autosave: " << e.what()
                          << "; the sweep goes on without it\n";
            }
            autosaveFailed = true;
        }
    };
    try {
        auto runs = runAll(*engine, configs, o.common.quiet, !o.keepAfterOom, finished);
        const Environment environment = engine->environment(o.common.device);
        const int code = reportRuns(runs, o.common, &environment);
        return autosaveFailed && code == kExitOk ? kExitFailure : code;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: " << e.what() << "\n";
        return kExitFailure;
    }
}

// ---------------------------------------------------------------------------------------
// The entries (cli_registry.h)

CliCommand runEntry() {
    return {"run", "benchmark one configuration", true, [](CLI::App& cmd) {
                auto o = std::make_shared<RunOptions>();
                addRunOptions(cmd, *o);
                addConnectOptions(cmd, o->common);
                return std::function<int()>([o] { return runCommand(*o); });
            }};
}

CliCommand sweepEntry() {
    return {"sweep", "benchmark every combination of lists", true, [](CLI::App& cmd) {
                auto o = std::make_shared<SweepOptions>();
                addList(cmd, "--models", o->models, "comma-separated presets");
                addList(cmd, "--ctx", o->ctx, "comma-separated context lengths");
                addList(cmd, "--batch", o->batches, "comma-separated batch sizes");
                addList(cmd, "--precision", o->precisions,
                        "comma-separated, of " + joinNames(kPrecisions, ","));
                addList(cmd, "--mode", o->modes, "comma-separated, of " + joinNames(kModes, ","));
                addList(cmd, "--warmup", o->warmups, "comma-separated warmup step counts");
                addText(cmd, "--autosave", o->autosavePath,
                        "append each finished run to FILE.jsonl (fsynced)");
                cmd.add_flag("--keep-after-oom", o->keepAfterOom,
                             "also run larger configurations after an out-of-memory run");
                addText(cmd, "--shard", o->shard,
                        "i/n: run every n-th configuration from the i-th (split a sweep across "
                        "machines)");
                addCommonOptions(cmd, o->common, /*sweepLists=*/true);
                addConnectOptions(cmd, o->common);
                return std::function<int()>([o] { return sweepCommand(*o); });
            }};
}

} // namespace lmprof::app
