// The torch-free half of the precision lab: number formats, errors in ulps, the grid's term
// counts and request validation (precision_lab.h). The experiments are in accumulation.cpp
// and dtype_inspector.cpp.

#include "lmprof/engine/precision_lab.h"

#include "enum_names.h"

#include <cmath>

namespace lmprof::engine {

namespace {

struct FormatFacts {
    int significandBits; // with the implicit leading bit
    int minExponent;     // of the smallest normal value
};

FormatFacts factsOf(NumberFormat f) {
    switch (f) {
    case NumberFormat::Fp16:
        return {11, -14};
    case NumberFormat::Bf16:
        return {8, -126};
    case NumberFormat::Fp32:
        break;
    }
    return {24, -126};
}

} // namespace

constexpr EnumNames<NumberFormat, 3> kNumberFormatNames{{
    {NumberFormat::Fp32, "fp32"},
    {NumberFormat::Fp16, "fp16"},
    {NumberFormat::Bf16, "bf16"},
}};

std::string_view toString(NumberFormat f) {
    return nameIn(kNumberFormatNames, f);
}

std::optional<NumberFormat> parseNumberFormat(std::string_view s) {
    return parseByName(s, kNumberFormats);
}

double ulpOf(NumberFormat format, double v) {
    const FormatFacts facts = factsOf(format);
    int exponent = 0; // |v| = m · 2^exponent with m in [0.5, 1)
    std::frexp(std::fabs(v), &exponent);
    const int e = std::max(exponent - 1, facts.minExponent); // subnormals share the last ulp
    return std::ldexp(1.0, e - (facts.significandBits - 1));
}

double SeedLoop::ulps() const {
    return std::fabs(error()) / ulpOf(accumulator, exactSum());
}

std::string AccumulationSeries::label() const {
    if (!accumulator) {
        return "sum() of " + std::string(toString(addend));
    }
    return std::string(toString(*accumulator)) + " += " + std::string(toString(addend));
}

double relativeError(const AccumulationSeries& series, const AccumulationPoint& point,
                     bool intended) {
    const double exact =
        static_cast<double>(point.terms) * (intended ? kAddend : series.addendValue);
    return exact == 0.0 ? 0.0 : std::fabs(point.sum - exact) / exact;
}

std::vector<int64_t> gridTerms(int64_t maxTerms) {
    std::vector<int64_t> terms;
    for (int k = 0;; ++k) {
        const auto n = static_cast<int64_t>(
            std::llround(static_cast<double>(kMinGridTerms) * std::pow(10.0, k / 4.0)));
        if (n >= maxTerms) {
            break;
        }
        terms.push_back(n);
    }
    terms.push_back(maxTerms);
    return terms;
}

std::vector<ConfigError> validate(const AccumulationRequest& request) {
    std::vector<ConfigError> errors;
    if (request.maxTerms < kMinGridTerms || request.maxTerms > kMaxGridTerms) {
        errors.push_back({"max_terms", "must be from " + std::to_string(kMinGridTerms) + " to " +
                                           std::to_string(kMaxGridTerms) + ", got " +
                                           std::to_string(request.maxTerms)});
    }
    if (auto e = deviceError(request.device)) {
        errors.push_back(*e);
    }
    return errors;
}

std::vector<std::string> dtypeModelNames() {
    std::vector<std::string> names{std::string(kToyModel)};
    for (const auto& p : presetNames()) {
        names.push_back(p);
    }
    return names;
}

std::vector<ConfigError> validate(const DtypeRequest& request) {
    std::vector<ConfigError> errors;
    if (request.model != kToyModel && !presetModel(request.model)) {
        std::string names;
        for (const auto& n : dtypeModelNames()) {
            names += (names.empty() ? "" : ", ") + n;
        }
        errors.push_back({"model", "'" + request.model + "' is not one of " + names});
    }
    if (auto e = deviceError(request.device)) {
        errors.push_back(*e);
    }
    return errors;
}

bool isReducedDtype(std::string_view dtype) {
    return dtype == "fp16" || dtype == "bf16";
}

} // namespace lmprof::engine
