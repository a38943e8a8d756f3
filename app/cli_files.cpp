// lmprof-cli's readers of saved files: show, merge, compare, ops, and columns (the CSV's
// columns from the registry). None runs a benchmark, so Ctrl+C ends them at once.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

namespace lmprof::app {

using namespace lmprof::engine;

// ---------------------------------------------------------------------------------------
// show

namespace {
// The runs of a result set or an autosave file (every run written in full); a cut last
// line of an autosave file is reported on stderr as a warning.
// A file with no readable run (empty, or every line skipped) is an error, not an empty table.
std::vector<RunResult> runsWarning(const std::string& path, std::vector<RunResult> runs,
                                   const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) {
        std::cerr << "lmprof-cli: warning: " << path << ": " << w << "\n";
    }
    if (runs.empty()) {
        throw ResultFormatError(path + (warnings.empty() ? std::string(": the file holds no run")
                                                         : ": no readable run (" +
                                                               std::to_string(warnings.size()) +
                                                               " line(s) skipped)"));
    }
    return runs;
}
std::vector<RunResult> loadRunsWarning(const std::string& path) {
    JsonlRuns loaded = loadRuns(path);
    return runsWarning(path, std::move(loaded.runs), loaded.warnings);
}
} // namespace

int showCommand(const ShowOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    const ReportFormat format = *parseReportFormat(o.format);
    try {
        // One reading: a result set (which may hold the precision lab's tables, with or
        // without runs) or an autosave file.
        ResultsFile file = loadResultsFile(o.path);
        if (!file.lab.empty()) {
            if (!file.runs.empty()) {
                writeReport(std::cout, file.runs, format);
                std::cout << "\n";
            }
            if (const auto& a = file.lab.accumulation) {
                writeAccumulationReport(std::cout, *a, format);
            }
            for (const auto& d : file.lab.dtypes) {
                std::cout << "\n";
                writeDtypeReport(std::cout, d, format);
            }
            return kExitOk;
        }
        const std::vector<RunResult> runs =
            runsWarning(o.path, std::move(file.runs), file.warnings);
        writeReport(std::cout, runs, format);
        // Data-parallel runs and watched runs' modules add their tables (CSV stays one
        // table: the runs').
        if (format != ReportFormat::Csv &&
            std::any_of(runs.begin(), runs.end(), [](const auto& r) { return r.ddp; })) {
            std::cout << "\n";
            writeDdpReport(std::cout, runs, format);
        }
        if (format != ReportFormat::Csv) {
            writeModuleReport(std::cout, runs, format);
        }
        writeVerdictReport(std::cout, runs, format);
        return kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot show " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// merge

namespace {

// Two runs measured the same thing: the same configuration, seed, step counts and device.
// A watched script's run is one of a kind: its script's process, its start.
std::string sameRunKey(const RunResult& r) {
    const std::string device = r.resolvedDevice.empty() ? r.config.device : r.resolvedDevice;
    if (r.source) {
        return pairKey(r) + " pid " + std::to_string(r.source->pid) + " " + r.source->script + " " +
               r.id + " steps " + std::to_string(r.steps.size()) + " " + device;
    }
    return configKey(r.config) + " steps " + std::to_string(r.config.warmupSteps) + "+" +
           std::to_string(r.config.measureSteps) + " " + device;
}

} // namespace

int mergeCommand(const MergeOptions& o) {
    if (!checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    std::vector<RunResult> merged;
    std::map<std::string, std::string> seen; // sameRunKey -> "id in file"
    std::map<std::string, int> ids;
    int duplicates = 0;
    try {
        for (const auto& path : o.paths) {
            for (auto& run : loadRunsWarning(path)) {
                const std::string key = sameRunKey(run);
                const std::string where = run.id + " in " + path;
                if (auto it = seen.find(key);
                    it != seen.end() && run.status != RunStatus::Skipped) {
                    std::fprintf(stderr,
                                 "lmprof-cli: merge: duplicate: %s repeats %s (same "
                                 "configuration); the first is kept\n",
                                 where.c_str(), it->second.c_str());
                    ++duplicates;
                    continue;
                }
                seen.emplace(key, where);
                // Shards number their runs from 1 each: an id that repeats gets a suffix.
                if (const int n = ++ids[run.id]; n > 1) {
                    run.id += "." + std::to_string(n);
                }
                merged.push_back(std::move(run));
            }
        }
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot merge " << e.what() << "\n";
        return kExitUsage;
    }
    if (duplicates > 0 || !o.jsonPath.empty()) {
        std::fprintf(stderr, "merged %zu run(s) from %zu file(s); %d duplicate(s) dropped\n",
                     merged.size(), o.paths.size(), duplicates);
    }
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    common.quiet = true;
    const int code = reportRuns(merged, common);
    // The merged set's outcome is the runs' own; merging itself went well.
    return code == kExitOom || code == kExitFailure ? kExitOk : code;
}

// ---------------------------------------------------------------------------------------
// compare

namespace {

// "A.json:ID": a file and one of its runs. A path that exists as it is names a file, even
// with a colon in it; else the part after the last colon is a run's id.
struct RunPick {
    std::string path;
    std::string id;
};

RunPick pickRun(const std::string& arg) {
    std::error_code ec;
    const size_t colon = arg.rfind(':');
    if (colon == std::string::npos || std::filesystem::exists(arg, ec)) {
        return {arg, {}};
    }
    return {arg.substr(0, colon), arg.substr(colon + 1)};
}

RunResult runById(const std::vector<RunResult>& runs, const RunPick& pick) {
    std::string ids;
    for (const auto& r : runs) {
        if (r.id == pick.id) {
            return r;
        }
        ids += (ids.empty() ? "" : ", ") + r.id;
    }
    throw ResultFormatError(pick.path + ": no run with id '" + pick.id + "' (its runs: " + ids +
                            ")");
}

} // namespace

int compareCommand(const CompareOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    try {
        const RunPick pickA = pickRun(o.pathA);
        const RunPick pickB = pickRun(o.pathB);
        if (pickA.id.empty() != pickB.id.empty()) {
            std::cerr << "lmprof-cli: compare: name a run on both sides (A.json:ID B.json:ID), "
                         "or on neither\n";
            return kExitUsage;
        }
        std::vector<RunResult> a = loadRunsWarning(pickA.path); // A's warnings first
        std::vector<RunResult> b = loadRunsWarning(pickB.path);
        Comparison c;
        if (!pickA.id.empty()) { // the pair the user named, whatever their configurations
            c.matched.push_back(compareTwo(runById(a, pickA), runById(b, pickB)));
            writeComparison(std::cout, c, *parseReportFormat(o.format));
            return o.failOnRegression && c.regressions() > 0 ? kExitFailure : kExitOk;
        }
        c = compareRuns(a, b);
        writeComparison(std::cout, c, *parseReportFormat(o.format));
        if (c.matched.empty()) {
            // Nothing compared is not "no regression": say so and fail.
            std::cerr << "lmprof-cli: compare: no run of " << o.pathB << " matches an ok run of "
                      << o.pathA << " (same model, context, batch, precision and mode)\n";
            return kExitFailure;
        }
        return o.failOnRegression && c.regressions() > 0 ? kExitFailure : kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot compare " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// ops

int opsCommand(const OpsOptions& o) {
    if (!checkFormat(o.format)) {
        return kExitUsage;
    }
    OpReportOptions options;
    options.top = o.top;
    if (o.by == "region") {
        options.by = OpGrouping::Region;
    } else if (o.by == "op") {
        options.by = OpGrouping::Op;
    } else if (o.by == "row") {
        options.by = OpGrouping::Row;
    } else {
        std::cerr << "lmprof-cli: --by: '" << o.by << "' is not one of region, op, row\n";
        return kExitUsage;
    }
    if (!o.phase.empty()) {
        options.phase = parsePhase(o.phase);
        if (!options.phase) {
            std::cerr << "lmprof-cli: --phase: '" << o.phase << "' is not one of "
                      << joinNames(kPhases) << "\n";
            return kExitUsage;
        }
    }
    if (o.top < 0) {
        std::cerr << "lmprof-cli: --top: must be 0 (all) or more, got " << o.top << "\n";
        return kExitUsage;
    }
    try {
        std::vector<RunResult> chosen;
        for (auto& r : loadRunsWarning(o.path)) {
            if (o.runId.empty() ? r.opProfile != nullptr : r.id == o.runId) {
                chosen.push_back(std::move(r));
            }
        }
        writeOpReport(std::cout, chosen, options, *parseReportFormat(o.format));
        if (chosen.empty()) {
            std::cerr << "lmprof-cli: " << o.path << ": "
                      << (o.runId.empty() ? std::string("no run has an op profile (run with "
                                                        "--profile-ops)")
                                          : "no run with id '" + o.runId + "'")
                      << "\n";
            return kExitUsage;
        }
        return kExitOk;
    } catch (const ResultFormatError& e) {
        std::cerr << "lmprof-cli: cannot read " << e.what() << "\n";
        return kExitUsage;
    }
}

// ---------------------------------------------------------------------------------------
// columns

int columnsCommand() {
    std::cout << "key,unit,kind,header\r\n";
    // Every run's columns, then those of each scalar a run logged, for a name NAME.
    std::vector<const RunColumn*> columns(csvLayout().begin(), csvLayout().end());
    const auto scalars = scalarCsvColumns("NAME");
    columns.insert(columns.end(), scalars.begin(), scalars.end());
    for (const RunColumn* c : columns) {
        std::cout << csvQuote(c->key) << "," << csvQuote(c->unit) << "," << toString(c->kind) << ","
                  << csvQuote(c->header) << "\r\n";
    }
    return kExitOk;
}

// ---------------------------------------------------------------------------------------
// The entries (cli_registry.h)

CliCommand mergeEntry() {
    return {"merge", "join result sets or autosave files (sweep shards) into one result set", false,
            [](CLI::App& cmd) {
                auto o = std::make_shared<MergeOptions>();
                cmd.add_option("files", o->paths, "result sets (.json) or autosave files (.jsonl)")
                    ->required();
                addText(cmd, "--json", o->jsonPath, "write the merged result set (.json)");
                addText(cmd, "--format", o->format, "table|markdown|csv");
                return std::function<int()>([o] { return mergeCommand(*o); });
            }};
}

CliCommand showEntry() {
    return {"show", "print a saved result set", false, [](CLI::App& cmd) {
                auto o = std::make_shared<ShowOptions>();
                cmd.add_option("file", o->path, "result set (.json) or autosave file (.jsonl)")
                    ->required();
                addText(cmd, "--format", o->format, "table|markdown|csv");
                return std::function<int()>([o] { return showCommand(*o); });
            }};
}

CliCommand compareEntry() {
    return {"compare", "compare two result sets run by run (B against A)", false,
            [](CLI::App& cmd) {
                auto o = std::make_shared<CompareOptions>();
                cmd.add_option("a", o->pathA,
                               "baseline result set (.json), or FILE:ID for one of its runs")
                    ->required();
                cmd.add_option("b", o->pathB,
                               "result set to compare (.json), or FILE:ID: the pair named")
                    ->required();
                addText(cmd, "--format", o->format, "table|markdown|csv");
                cmd.add_flag("--fail-on-regression", o->failOnRegression,
                             "exit 1 if a run of B is slower beyond noise");
                return std::function<int()>([o] { return compareCommand(*o); });
            }};
}

CliCommand opsEntry() {
    return {"ops", "print the op/kernel profile of a saved run (--profile-ops)", false,
            [](CLI::App& cmd) {
                auto o = std::make_shared<OpsOptions>();
                cmd.add_option("file", o->path, "result set (.json) or autosave file (.jsonl)")
                    ->required();
                addText(cmd, "--run", o->runId, "only this run id (default: every profiled run)");
                addText(cmd, "--by", o->by,
                        "region|op|row: group by region, by op/kernel name, or one row per "
                        "(region, name)");
                addNumber(cmd, "--top", o->top, "most rows per phase (0: all)");
                addText(cmd, "--phase", o->phase, "only this phase (forward|backward|optimizer)");
                addText(cmd, "--format", o->format, "table|markdown|csv");
                return std::function<int()>([o] { return opsCommand(*o); });
            }};
}

CliCommand columnsEntry() {
    return {"columns", "list the CSV export's columns with their units", false,
            [](CLI::App&) { return std::function<int()>([] { return columnsCommand(); }); }};
}

} // namespace lmprof::app
