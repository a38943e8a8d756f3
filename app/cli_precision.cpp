// lmprof-cli precision accumulate / dtypes: the precision lab's experiments from the command
// line (docs/PRECISION_LAB.md). Tables to stdout; --json saves a result set holding them.
// Each experiment is a request to the engine, this process's or (--connect) a server's.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

namespace lmprof::app {

using namespace lmprof::engine;

namespace {

// The flag a request field comes from.
std::string flagOf(const std::string& field) {
    return "--" + (field == "max_terms" ? std::string("max-terms") : field);
}

// False after printing every problem of the request, each naming its flag.
bool refuse(const std::vector<ConfigError>& errors) {
    for (const auto& e : errors) {
        std::cerr << "lmprof-cli: " << flagOf(e.field) << ": " << e.reason << "\n";
    }
    return errors.empty();
}

int save(const PrecisionOptions& o, PrecisionLab lab, const SessionInterface& engine) {
    if (o.jsonPath.empty()) {
        return kExitOk;
    }
    try {
        const Environment environment = engine.environment(o.device);
        ResultSet set = makeSet({}, o.device, &environment);
        set.precisionLab = std::move(lab);
        saveResultSetAtomic(set, o.jsonPath);
        if (!o.quiet) {
            std::fprintf(stderr, "saved the precision lab to %s\n", o.jsonPath.c_str());
        }
        return kExitOk;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: " << e.what() << "\n";
        return kExitFailure;
    }
}

} // namespace

int precisionAccumulateCommand(const PrecisionOptions& o) {
    AccumulationRequest request;
    request.device = o.device;
    request.maxTerms = o.maxTerms;
    if (!refuse(validate(request)) || !checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.connect, o.tokenFile, o.quiet);
    if (!engine) {
        return kExitFailure; // said why: no engine here, or a server that did not answer
    }
    AccumulationReport report = std::get<AccumulationReport>(runOnEngine(*engine, request));
    writeAccumulationReport(std::cout, report, *parseReportFormat(o.format));
    const bool failed = report.error.has_value();
    PrecisionLab lab;
    lab.accumulation = std::move(report);
    const int saved = save(o, std::move(lab), *engine);
    return failed ? kExitFailure : saved;
}

int precisionDtypesCommand(const PrecisionOptions& o) {
    std::vector<Precision> precisions;
    if (o.precision == "all") {
        precisions.assign(kPrecisions.begin(), kPrecisions.end());
    } else if (auto p = parsePrecision(o.precision)) {
        precisions.push_back(*p);
    } else {
        std::cerr << "lmprof-cli: --precision: '" << o.precision << "' is not one of all, "
                  << joinNames(kPrecisions) << "\n";
        return kExitUsage;
    }
    DtypeRequest request;
    request.model = o.model;
    request.device = o.device;
    if (!refuse(validate(request)) || !checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    const auto engine = openEngine(o.connect, o.tokenFile, o.quiet);
    if (!engine) {
        return kExitFailure; // said why: no engine here, or a server that did not answer
    }
    const ReportFormat format = *parseReportFormat(o.format);
    PrecisionLab lab;
    bool failed = false;
    for (Precision p : precisions) {
        request.precision = p;
        if (interrupted()) {
            break;
        }
        DtypeReport report = std::get<DtypeReport>(runOnEngine(*engine, request));
        if (format != ReportFormat::Csv && !lab.dtypes.empty()) {
            std::cout << "\n";
        }
        writeDtypeReport(std::cout, report, format, lab.dtypes.empty());
        failed = failed || report.error.has_value();
        lab.dtypes.push_back(std::move(report));
    }
    const int saved = save(o, std::move(lab), *engine);
    return failed || interrupted() ? kExitFailure : saved;
}

CliCommand precisionEntry() {
    return {"precision", "the precision lab: accumulation error, and dtypes under autocast", true,
            [](CLI::App& cmd) {
                auto o = std::make_shared<PrecisionOptions>();
                cmd.require_subcommand(1);
                CLI::App* accumulate = cmd.add_subcommand(
                    "accumulate",
                    "add 0.01 in fp32/fp16/bf16 accumulators: the CS336 study's loops and a grid");
                CLI::App* dtypes = cmd.add_subcommand(
                    "dtypes",
                    "the dtype of every module's parameters, input, output and gradients");
                for (CLI::App* sub : {accumulate, dtypes}) {
                    addText(*sub, "--device", o->device, "auto|cpu|cuda|cuda:N");
                    addText(*sub, "--json", o->jsonPath, "save the tables in a result set (.json)");
                    addText(*sub, "--format", o->format, "table|markdown|csv");
                    addConnectOptions(*sub, o->connect, o->tokenFile);
                    sub->add_flag("--quiet,-q", o->quiet, "no progress lines on stderr");
                }
                addNumberIn(*accumulate, "--max-terms", o->maxTerms, kMinGridTerms, kMaxGridTerms,
                            "the grid's largest number of terms");
                addChoice(*dtypes, "--model", o->model, dtypeModelNames(),
                          "the CS336 study's ToyModel or an LM preset [toy]");
                std::vector<std::string> precisions{"all"};
                for (auto p : kPrecisions) {
                    precisions.emplace_back(toString(p));
                }
                addChoice(*dtypes, "--precision", o->precision, precisions,
                          "one precision, or all of them [all]");
                return std::function<int()>([o, accumulate] {
                    return accumulate->parsed() ? precisionAccumulateCommand(*o)
                                                : precisionDtypesCommand(*o);
                });
            }};
}

} // namespace lmprof::app
