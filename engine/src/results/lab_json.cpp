// The precision lab in a result set ("precision_lab", docs/RESULTS.md): the accumulation
// experiment and the dtype reports. Absent in files without them (and in older files).

#include "results/json_access.h"

#include <algorithm>
#include <cmath>

namespace lmprof::engine::json_io {

namespace {

json formatJson(NumberFormat f) {
    return std::string(toString(f));
}

json accumulationJson(const AccumulationReport& a) {
    json loops = json::array();
    for (const SeedLoop& l : a.seedLoops) {
        loops.push_back({{"label", l.label},
                         {"accumulator", formatJson(l.accumulator)},
                         {"addend", formatJson(l.addend)},
                         {"cast_per_add", l.castPerAdd},
                         {"addend_value", l.addendValue},
                         {"result", l.result}});
    }
    json series = json::array();
    for (const AccumulationSeries& s : a.series) {
        json terms = json::array();
        json sums = json::array();
        for (const auto& p : s.points) {
            terms.push_back(p.terms);
            sums.push_back(p.sum);
        }
        series.push_back(
            {{"accumulator", s.accumulator ? formatJson(*s.accumulator) : json(nullptr)},
             {"addend", formatJson(s.addend)},
             {"addend_value", s.addendValue},
             {"stall_terms", s.stallTerms ? json(*s.stallTerms) : json(nullptr)},
             {"stall_sum", nullable(s.stallSum)},
             {"terms", terms},
             {"sums", sums}});
    }
    return {{"device", a.device},         {"addend", kAddend},       {"seed_terms", kSeedTerms},
            {"max_terms", a.maxTerms},    {"seed_loops", loops},     {"series", series},
            {"error", nullable(a.error)}, {"cancelled", a.cancelled}};
}

json dtypeJson(const DtypeReport& d) {
    json rows = json::array();
    for (const DtypeRow& r : d.rows) {
        rows.push_back({{"name", r.name},
                        {"kind", r.kind},
                        {"depth", r.depth},
                        {"parameters", r.parameters},
                        {"input", r.input},
                        {"output", r.output},
                        {"gradients", r.gradients},
                        {"note", r.note}});
    }
    return {{"model", d.model},       {"precision", toString(d.precision)}, {"device", d.device},
            {"autocast", d.autocast}, {"error", nullable(d.error)},         {"rows", rows}};
}

NumberFormat formatFrom(const json& j, const std::string& path, const char* key) {
    NumberFormat f = NumberFormat::Fp32;
    readEnum(j, path, key, f, parseNumberFormat, true);
    return f;
}

// A value 0.01 can be stored as: positive and within a few percent of it.
double addendFrom(const json& j, const std::string& path) {
    double v = 0.0;
    read(j, path, "addend_value", v, true);
    if (!(std::fabs(v - kAddend) <= 0.05 * kAddend)) {
        fail(path + ".addend_value", "is not 0.01 in any format lmprof uses");
    }
    return v;
}

AccumulationReport accumulationFrom(const json& j, const std::string& path) {
    AccumulationReport a;
    read(j, path, "device", a.device);
    read(j, path, "max_terms", a.maxTerms, true);
    AccumulationRequest asked; // the rule a new request keeps
    asked.maxTerms = a.maxTerms;
    if (const auto errors = validate(asked); !errors.empty()) {
        fail(path + "." + errors.front().field, errors.front().reason);
    }
    readOptional(j, path, "error", a.error);
    read(j, path, "cancelled", a.cancelled);
    const json& loops = arrayMember(j, path, "seed_loops");
    for (size_t i = 0; i < loops.size(); ++i) {
        const std::string lp = indexed(path, "seed_loops", i);
        SeedLoop l;
        read(loops[i], lp, "label", l.label, true);
        l.accumulator = formatFrom(loops[i], lp, "accumulator");
        l.addend = formatFrom(loops[i], lp, "addend");
        read(loops[i], lp, "cast_per_add", l.castPerAdd);
        l.addendValue = addendFrom(loops[i], lp);
        read(loops[i], lp, "result", l.result, true);
        a.seedLoops.push_back(l);
    }
    const json& series = arrayMember(j, path, "series");
    for (size_t i = 0; i < series.size(); ++i) {
        const std::string sp = indexed(path, "series", i);
        const json& sj = series[i];
        AccumulationSeries s;
        if (member(sj, sp, "accumulator", false)) {
            s.accumulator = formatFrom(sj, sp, "accumulator");
        }
        s.addend = formatFrom(sj, sp, "addend");
        s.addendValue = addendFrom(sj, sp);
        readOptional(sj, sp, "stall_terms", s.stallTerms);
        readOptional(sj, sp, "stall_sum", s.stallSum);
        if (s.stallTerms.has_value() != s.stallSum.has_value()) {
            fail(sp, "stall_terms and stall_sum go together");
        }
        if (s.stallTerms && (*s.stallTerms < 1 || *s.stallTerms > a.maxTerms)) {
            fail(sp + ".stall_terms", "must be from 1 to max_terms");
        }
        const json& terms = arrayMember(sj, sp, "terms");
        const json& sums = arrayMember(sj, sp, "sums");
        if (terms.size() != sums.size()) {
            fail(sp + ".sums", std::to_string(sums.size()) + " sums for " +
                                   std::to_string(terms.size()) + " term counts");
        }
        for (size_t k = 0; k < terms.size(); ++k) {
            const std::string tp = indexed(sp, "terms", k);
            if (!sums[k].is_number()) {
                fail(indexed(sp, "sums", k), "expected a number");
            }
            const auto n = integerFrom<int64_t>(terms[k], tp);
            if (n < 1 || n > a.maxTerms || (k > 0 && n <= s.points.back().terms)) {
                fail(tp, "term counts must rise from 1 to max_terms");
            }
            s.points.push_back({n, sums[k].get<double>()});
        }
        // One grid: every series has its sums at the same term counts.
        if (!a.series.empty()) {
            const auto& first = a.series.front().points;
            const bool same =
                first.size() == s.points.size() &&
                std::equal(first.begin(), first.end(), s.points.begin(),
                           [](const auto& x, const auto& y) { return x.terms == y.terms; });
            if (!same) {
                fail(sp + ".terms", "differ from series[0]'s");
            }
        }
        a.series.push_back(std::move(s));
    }
    return a;
}

DtypeReport dtypeFrom(const json& j, const std::string& path) {
    DtypeReport d;
    read(j, path, "model", d.model, true);
    readEnum(j, path, "precision", d.precision, parsePrecision, true);
    read(j, path, "device", d.device);
    read(j, path, "autocast", d.autocast);
    readOptional(j, path, "error", d.error);
    const json& rows = arrayMember(j, path, "rows");
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string rp = indexed(path, "rows", i);
        DtypeRow r;
        read(rows[i], rp, "name", r.name, true);
        read(rows[i], rp, "kind", r.kind);
        read(rows[i], rp, "depth", r.depth);
        if (r.depth < 0 || r.depth > kMaxJsonDepth) {
            fail(rp + ".depth", "must be from 0 to " + std::to_string(kMaxJsonDepth));
        }
        read(rows[i], rp, "parameters", r.parameters);
        read(rows[i], rp, "input", r.input);
        read(rows[i], rp, "output", r.output);
        read(rows[i], rp, "gradients", r.gradients);
        read(rows[i], rp, "note", r.note);
        d.rows.push_back(std::move(r));
    }
    return d;
}

} // namespace

json labRequestJson(const LabRequest& request) {
    if (const auto* a = std::get_if<AccumulationRequest>(&request)) {
        return {{"experiment", "accumulation"}, {"device", a->device}, {"max_terms", a->maxTerms}};
    }
    const auto& d = std::get<DtypeRequest>(request);
    return {{"experiment", "dtypes"},
            {"model", d.model},
            {"precision", std::string(toString(d.precision))},
            {"device", d.device}};
}

LabRequest labRequestFrom(const json& j, const std::string& path) {
    std::string experiment;
    read(j, path, "experiment", experiment, true);
    if (experiment == "accumulation") {
        AccumulationRequest a;
        read(j, path, "device", a.device, true);
        readBetween(j, path, "max_terms", a.maxTerms, kMinGridTerms, kMaxGridTerms, true);
        return a;
    }
    if (experiment == "dtypes") {
        DtypeRequest d;
        read(j, path, "model", d.model, true);
        readEnum(j, path, "precision", d.precision, parsePrecision, true);
        read(j, path, "device", d.device, true);
        return d;
    }
    fail(path + ".experiment", "expected \"accumulation\" or \"dtypes\", got \"" + experiment + "\"");
}

json labReportJson(const LabReport& report) {
    if (const auto* a = std::get_if<AccumulationReport>(&report)) {
        return {{"experiment", "accumulation"}, {"report", accumulationJson(*a)}};
    }
    return {{"experiment", "dtypes"}, {"report", dtypeJson(std::get<DtypeReport>(report))}};
}

LabReport labReportFrom(const json& j, const std::string& path) {
    std::string experiment;
    read(j, path, "experiment", experiment, true);
    const json& report = *member(j, path, "report", true);
    if (experiment == "accumulation") {
        return accumulationFrom(report, path + ".report");
    }
    if (experiment == "dtypes") {
        return dtypeFrom(report, path + ".report");
    }
    fail(path + ".experiment", "expected \"accumulation\" or \"dtypes\", got \"" + experiment + "\"");
}

void writePrecisionLab(json& set, const PrecisionLab& lab) {
    if (lab.empty()) {
        return;
    }
    json j = json::object();
    if (lab.accumulation) {
        j["accumulation"] = accumulationJson(*lab.accumulation);
    }
    if (!lab.dtypes.empty()) {
        json dtypes = json::array();
        for (const auto& d : lab.dtypes) {
            dtypes.push_back(dtypeJson(d));
        }
        j["dtypes"] = dtypes;
    }
    set["precision_lab"] = j;
}

PrecisionLab readPrecisionLab(const json& set) {
    PrecisionLab lab;
    const json* j = member(set, "$", "precision_lab", false);
    if (!j) {
        return lab;
    }
    const std::string path = "$.precision_lab";
    if (const json* a = member(*j, path, "accumulation", false)) {
        lab.accumulation = accumulationFrom(*a, path + ".accumulation");
    }
    const json& dtypes = arrayMember(*j, path, "dtypes");
    for (size_t i = 0; i < dtypes.size(); ++i) {
        lab.dtypes.push_back(dtypeFrom(dtypes[i], indexed(path, "dtypes", i)));
    }
    return lab;
}

} // namespace lmprof::engine::json_io
