// The precision lab in a result set ("precision_lab", docs/RESULTS.md): the accumulation
// experiment and the dtype reports. Absent in files without them (and in older files).

#include "results/fields.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <variant>

namespace lmprof::engine::json_io {

namespace {

// A value 0.01 can be stored as: positive and within a few percent of it.
template <typename Io>
void addendValue(Io& io, Ref<double, Io> v) {
    io.required("addend_value", v);
    if constexpr (Io::kReads) {
        if (!(std::fabs(v - kAddend) <= 0.05 * kAddend)) {
            io.refuse("addend_value", "is not 0.01 in any format lmprof uses");
        }
    }
}

// The experiments by their index in LabRequest and LabReport.
constexpr const char* kExperiments[] = {"accumulation", "dtypes"};

// {"experiment": name, ...}: writes the name of the variant's experiment, or reads it and
// makes the variant that experiment; then `each(alternative)` does the rest.
template <typename Io, typename Variant, typename Each>
void experiment(Io& io, Ref<Variant, Io> v, Each&& each) {
    static_assert(std::variant_size_v<Variant> == std::size(kExperiments));
    if constexpr (Io::kReads) {
        std::string name;
        io.required("experiment", name);
        if (name == kExperiments[0]) {
            v.template emplace<0>();
        } else if (name == kExperiments[1]) {
            v.template emplace<1>();
        } else {
            io.refuse("experiment",
                      "expected \"accumulation\" or \"dtypes\", got \"" + name + "\"");
        }
    } else {
        io.required("experiment", std::string(kExperiments[v.index()]));
    }
    std::visit(each, v);
}

} // namespace

// The records' fields, outside the unnamed namespace so that toObject and fromObject find
// them.

template <typename Io>
void fields(Io& io, Ref<SeedLoop, Io> l) {
    io.required("label", l.label);
    io.enumeration("accumulator", l.accumulator, parseNumberFormat, true);
    io.enumeration("addend", l.addend, parseNumberFormat, true);
    io.field("cast_per_add", l.castPerAdd);
    addendValue(io, l.addendValue);
    io.required("result", l.result);
}

// The points are two parallel arrays, "terms" and "sums"; `maxTerms` bounds the terms.
template <typename Io>
void fields(Io& io, Ref<AccumulationSeries, Io> s, int64_t maxTerms) {
    io.nullableEnumeration("accumulator", s.accumulator, parseNumberFormat);
    io.enumeration("addend", s.addend, parseNumberFormat, true);
    addendValue(io, s.addendValue);
    io.nullable("stall_terms", s.stallTerms);
    io.nullable("stall_sum", s.stallSum);
    if constexpr (Io::kReads) {
        if (s.stallTerms.has_value() != s.stallSum.has_value()) {
            io.refuse("", "stall_terms and stall_sum go together");
        }
        if (s.stallTerms && (*s.stallTerms < 1 || *s.stallTerms > maxTerms)) {
            io.refuse("stall_terms", "must be from 1 to max_terms");
        }
        const auto& terms = arrayMember(io.in, io.path, "terms");
        const auto& sums = arrayMember(io.in, io.path, "sums");
        if (terms.size() != sums.size()) {
            io.refuse("sums", std::to_string(sums.size()) + " sums for " +
                                  std::to_string(terms.size()) + " term counts");
        }
        for (size_t k = 0; k < terms.size(); ++k) {
            if (!sums[k].is_number()) {
                io.refuse("sums", k, "", "expected a number");
            }
            const auto n = integerFrom<int64_t>(terms[k], indexed(io.path, "terms", k));
            if (n < 1 || n > maxTerms || (k > 0 && n <= s.points.back().terms)) {
                io.refuse("terms", k, "", "term counts must rise from 1 to max_terms");
            }
            s.points.push_back({n, sums[k].template get<double>()});
        }
    } else {
        json terms = json::array();
        json sums = json::array();
        for (const auto& p : s.points) {
            terms.push_back(p.terms);
            sums.push_back(p.sum);
        }
        io.out["terms"] = std::move(terms);
        io.out["sums"] = std::move(sums);
    }
}

template <typename Io>
void fields(Io& io, Ref<AccumulationReport, Io> a) {
    io.field("device", a.device);
    io.derived("addend", [] { return kAddend; });
    io.derived("seed_terms", [] { return kSeedTerms; });
    io.required("max_terms", a.maxTerms);
    if constexpr (Io::kReads) {
        AccumulationRequest asked; // the rule a new request keeps
        asked.maxTerms = a.maxTerms;
        if (const auto errors = validate(asked); !errors.empty()) {
            io.refuse(errors.front().field, errors.front().reason);
        }
    }
    io.array("seed_loops", a.seedLoops);
    io.array("series", a.series, a.maxTerms);
    if constexpr (Io::kReads) {
        // One grid: every series has its sums at the same term counts.
        for (size_t i = 1; i < a.series.size(); ++i) {
            const auto& first = a.series.front().points;
            const auto& these = a.series[i].points;
            const bool same =
                first.size() == these.size() &&
                std::equal(first.begin(), first.end(), these.begin(),
                           [](const auto& x, const auto& y) { return x.terms == y.terms; });
            if (!same) {
                io.refuse("series", i, "terms", "differ from series[0]'s");
            }
        }
    }
    io.nullable("error", a.error);
    io.field("cancelled", a.cancelled);
}

template <typename Io>
void fields(Io& io, Ref<DtypeRow, Io> r) {
    io.required("name", r.name);
    io.field("kind", r.kind);
    io.between("depth", r.depth, 0, kMaxJsonDepth);
    io.field("parameters", r.parameters);
    io.field("input", r.input);
    io.field("output", r.output);
    io.field("gradients", r.gradients);
    io.field("note", r.note);
}

template <typename Io>
void fields(Io& io, Ref<DtypeReport, Io> d) {
    io.required("model", d.model);
    io.enumeration("precision", d.precision, parsePrecision, true);
    io.field("device", d.device);
    io.field("autocast", d.autocast);
    io.nullable("error", d.error);
    io.array("rows", d.rows);
}

// The set's "precision_lab": the accumulation experiment, omitted when not run, and the
// dtype reports, omitted when none.
template <typename Io>
void fields(Io& io, Ref<PrecisionLab, Io> lab) {
    io.optionalObject("accumulation", lab.accumulation);
    if (Io::kReads || !lab.dtypes.empty()) {
        io.array("dtypes", lab.dtypes);
    }
}

template <typename Io>
void fields(Io& io, Ref<AccumulationRequest, Io> a) {
    io.required("device", a.device);
    io.between("max_terms", a.maxTerms, kMinGridTerms, kMaxGridTerms, true);
}

template <typename Io>
void fields(Io& io, Ref<DtypeRequest, Io> d) {
    io.required("model", d.model);
    io.enumeration("precision", d.precision, parsePrecision, true);
    io.required("device", d.device);
}

// A request's fields sit beside "experiment"; a report is its "report" member.
struct LabRequestRecord {
    LabRequest request;
};
struct LabReportRecord {
    LabReport report;
};

template <typename Io>
void fields(Io& io, Ref<LabRequestRecord, Io> r) {
    experiment<Io, LabRequest>(io, r.request, [&](auto& request) { fields(io, request); });
}

template <typename Io>
void fields(Io& io, Ref<LabReportRecord, Io> r) {
    experiment<Io, LabReport>(io, r.report,
                              [&](auto& report) { io.object("report", report, true); });
}

void precisionLabFields(Writer& io, const PrecisionLab& lab) {
    if (!lab.empty()) {
        io.object("precision_lab", lab);
    }
}
void precisionLabFields(Reader& io, PrecisionLab& lab) {
    io.object("precision_lab", lab);
}

json labRequestJson(const LabRequest& request) {
    return toObject(LabRequestRecord{request});
}
LabRequest labRequestFrom(const json& j, const std::string& path) {
    return fromObject<LabRequestRecord>(j, path).request;
}
json labReportJson(const LabReport& report) {
    return toObject(LabReportRecord{report});
}
LabReport labReportFrom(const json& j, const std::string& path) {
    return fromObject<LabReportRecord>(j, path).report;
}

} // namespace lmprof::engine::json_io
