// The run configuration's declared fields (config.h): the choice fields (execution
// variants) and the plain numbers and flags, each declared once here.

#include "lmprof/engine/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

namespace lmprof::engine {

// ---------------------------------------------------------------------------------------
// The choice fields (ChoiceField, config.h), each declared once

namespace {

const std::vector<std::string> kOffOn = {"off", "on"};

std::vector<std::string> attentionNames() {
    std::vector<std::string> out;
    for (AttentionKind a : kAttentionKinds) {
        out.emplace_back(toString(a));
    }
    return out;
}

std::vector<ChoiceField> buildFields() {
    std::vector<ChoiceField> f;

    ChoiceField attention;
    attention.key = "attention";
    attention.flag = "--attention";
    attention.label = "Attention";
    attention.help = "naive (the CS336 math) or sdpa (scaled_dot_product_attention; on CUDA "
                     "also sdpa-flash, sdpa-efficient, sdpa-math, sdpa-cudnn)";
    attention.values = attentionNames();
    attention.shortNames = {"naive", "sdpa", "sdpa flash", "sdpa eff.", "sdpa math", "sdpa cudnn"};
    attention.get = [](const RunConfig& c) { return std::string(toString(c.attention)); };
    attention.set = [](RunConfig& c, const std::string& v) { c.attention = *parseAttention(v); };
    attention.deviceRefusal = [](const std::string& v, bool cuda) -> std::optional<std::string> {
        if (!cuda && v != "naive" && v != "sdpa") {
            return "'" + v +
                   "' forces a CUDA backend of scaled_dot_product_attention; on the "
                   "CPU use sdpa (LibTorch chooses)";
        }
        return std::nullopt;
    };
    f.push_back(std::move(attention));

    ChoiceField tf32;
    tf32.key = "tf32";
    tf32.flag = "--tf32";
    tf32.label = "TF32";
    tf32.help = "fp32 matmuls on TF32 tensor cores (CUDA; MFU then uses the TF32 peak)";
    tf32.values = kOffOn;
    tf32.shortNames = {"no tf32", "tf32"};
    tf32.get = [](const RunConfig& c) { return std::string(c.tf32 ? "on" : "off"); };
    tf32.set = [](RunConfig& c, const std::string& v) { c.tf32 = v == "on"; };
    tf32.deviceRefusal = [](const std::string& v, bool cuda) -> std::optional<std::string> {
        if (!cuda && v == "on") {
            return std::string("TF32 is a mode of CUDA tensor cores; the CPU computes fp32 "
                               "matmuls in fp32");
        }
        return std::nullopt;
    };
    f.push_back(std::move(tf32));

    ChoiceField graphs;
    graphs.key = "cuda_graphs";
    graphs.flag = "--cuda-graphs";
    graphs.label = "CUDA graphs";
    graphs.help = "capture the whole step once after the warmup and replay it for the "
                  "measured steps (CUDA; needs 2 warmup steps)";
    graphs.values = kOffOn;
    graphs.shortNames = {"eager", "graphs"};
    graphs.get = [](const RunConfig& c) { return std::string(c.cudaGraphs ? "on" : "off"); };
    graphs.set = [](RunConfig& c, const std::string& v) { c.cudaGraphs = v == "on"; };
    graphs.deviceRefusal = [](const std::string& v, bool cuda) -> std::optional<std::string> {
        if (!cuda && v == "on") {
            return std::string("CUDA graphs record and replay GPU work; the CPU has none to "
                               "replay (use a CUDA device, or cuda_graphs off)");
        }
        return std::nullopt;
    };
    f.push_back(std::move(graphs));
    return f;
}

} // namespace

std::string ChoiceField::shortName(const RunConfig& c) const {
    const std::string v = get(c);
    const auto it = std::find(values.begin(), values.end(), v);
    return it == values.end() ? v : shortNames[static_cast<size_t>(it - values.begin())];
}

std::optional<std::string> ChoiceField::unknown(const std::string& value) const {
    if (std::find(values.begin(), values.end(), value) != values.end()) {
        return std::nullopt;
    }
    std::string names;
    for (const auto& v : values) {
        names += (names.empty() ? "" : ", ") + v;
    }
    return "'" + value + "' is not one of " + names;
}

const std::vector<ChoiceField>& choiceFields() {
    static const std::vector<ChoiceField> fields = buildFields();
    return fields;
}

const ChoiceField* choiceField(std::string_view key) {
    for (const auto& f : choiceFields()) {
        if (f.key == key) {
            return &f;
        }
    }
    return nullptr;
}

std::vector<ConfigError> choiceRefusals(const RunConfig& config, bool cuda) {
    std::vector<ConfigError> errors;
    for (const auto& f : choiceFields()) {
        if (auto why = f.deviceRefusal(f.get(config), cuda)) {
            errors.push_back({f.key, *why});
        }
    }
    return errors;
}

// ---------------------------------------------------------------------------------------
// The plain fields (ValueField, config.h), each declared once

namespace {

std::vector<ValueField> buildValueFields() {
    using S = ValueField::Section;
    std::vector<ValueField> f;
    f.push_back(
        {"seed", "--seed", "seed", "seed for weights and tokens", &RunConfig::seed, S::Run});
    f.back().sweepAxis = true;       // the spread of a step over seeds
    f.back().inComparisonKey = true; // a row and a pair per seed
    f.push_back({"threads", "--threads", "threads", "CPU intra-op threads (0: LibTorch default)",
                 &RunConfig::threads, S::Run, 0.0, 4096.0});
    f.back().sweepAxis = true;       // a step's time by the CPU threads it has
    f.back().inComparisonKey = true; // one thread or four: two configurations
    f.push_back({"sample_hz", "--sample-hz", "sample Hz",
                 "memory sampler rate in Hz, 0: phase boundaries only", &RunConfig::sampleHz,
                 S::Sampling, 0.0, 1000.0, "must be between 0 (phase boundaries only) and 1000",
                 10.0});
    f.push_back({"telemetry_hz", "--telemetry-hz", "telemetry Hz",
                 "GPU (NVML) / CPU telemetry rate in Hz, at most 10; 0: off",
                 &RunConfig::telemetryHz, S::Sampling, 0.0, 10.0,
                 "must be between 0 (off) and 10"});
    f.push_back({"grad_norms", "--grad-norms", "gradient norms",
                 "record each layer's gradient norm after every backward, for the precision "
                 "lab (taken between the backward and optimizer phases: in the step's total, "
                 "not in its phases)",
                 &RunConfig::gradNorms, S::Instruments});
    return f;
}

// A field's declaration that cannot work, refused where it is made: a sweep lists whole
// numbers (SweepSpec::values), so a flag or a decimal cannot be a sweep axis.
void checkDeclaration(const ValueField& f) {
    const bool whole = std::holds_alternative<int RunConfig::*>(f.member) ||
                       std::holds_alternative<uint64_t RunConfig::*>(f.member);
    if (f.sweepAxis && !whole) {
        throw std::logic_error("configuration field '" + f.key +
                               "' is a sweep axis but not a whole number");
    }
}

std::vector<ValueField>& valueFieldTable() {
    static std::vector<ValueField> fields = [] {
        std::vector<ValueField> declared = buildValueFields();
        for (const ValueField& f : declared) {
            checkDeclaration(f);
        }
        return declared;
    }();
    return fields;
}

std::string shownNumber(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) {
        return std::to_string(static_cast<long long>(v));
    }
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return text;
}

} // namespace

double ValueField::number(const RunConfig& c) const {
    return std::visit([&](auto m) { return static_cast<double>(c.*m); }, member);
}

std::string ValueField::text(const RunConfig& c) const {
    return std::visit(
        [&](auto m) {
            using T = std::decay_t<decltype(c.*m)>;
            if constexpr (std::is_same_v<T, double>) {
                return shownNumber(c.*m);
            } else if constexpr (std::is_same_v<T, bool>) {
                return std::string(c.*m ? "on" : "off");
            } else {
                return std::to_string(c.*m);
            }
        },
        member);
}

std::optional<std::string> ValueField::valueError(int64_t v) const {
    const double d = static_cast<double>(v);
    if (!isFlag() && min != max && (d < min || d > max)) {
        return rangeReason.empty() ? "must be between " + shownNumber(min) + " and " +
                                         shownNumber(max) + ", got " + std::to_string(v)
                                   : rangeReason;
    }
    // What the member holds: a value is never narrowed to another.
    const auto [lowest, highest] = std::visit(
        [](auto m) -> std::pair<double, double> {
            using T = std::decay_t<std::remove_reference_t<decltype(RunConfig{}.*m)>>;
            if constexpr (std::is_same_v<T, bool>) {
                return {0.0, 1.0};
            } else if constexpr (std::is_same_v<T, double>) {
                return {-9.0e15, 9.0e15}; // whole numbers a double holds exactly
            } else {
                return {static_cast<double>(std::numeric_limits<T>::lowest()),
                        static_cast<double>(std::numeric_limits<T>::max())};
            }
        },
        member);
    if (d < lowest && lowest == 0.0) {
        return "must not be negative, got " + std::to_string(v);
    }
    if (d < lowest || d > highest) {
        return "must be between " + shownNumber(lowest) + " and " + shownNumber(highest) +
               ", got " + std::to_string(v);
    }
    return std::nullopt;
}

std::optional<std::string> ValueField::listError(const std::vector<int64_t>& values) const {
    for (int64_t v : values) {
        if (auto why = valueError(v)) {
            return why;
        }
    }
    return std::nullopt;
}

void ValueField::set(RunConfig& c, int64_t v) const {
    std::visit(
        [&](auto m) {
            using T = std::decay_t<decltype(c.*m)>;
            c.*m = std::is_same_v<T, bool> ? T(v != 0) : static_cast<T>(v);
        },
        member);
}

std::optional<std::string> ValueField::rangeError(const RunConfig& c) const {
    const double v = number(c);
    if (isFlag() || min == max || (v >= min && v <= max)) {
        return std::nullopt;
    }
    if (!rangeReason.empty()) {
        return rangeReason;
    }
    return "must be between " + shownNumber(min) + " and " + shownNumber(max) + ", got " +
           shownNumber(v);
}

const std::vector<ValueField>& valueFields() {
    return valueFieldTable();
}

const ValueField* valueField(std::string_view key) {
    for (const auto& f : valueFields()) {
        if (f.key == key) {
            return &f;
        }
    }
    return nullptr;
}

ExtraValueField::ExtraValueField(ValueField field) : m_key(field.key) {
    if (valueField(m_key) || choiceField(m_key)) {
        throw std::invalid_argument("a configuration field '" + m_key + "' exists already");
    }
    checkDeclaration(field);
    valueFieldTable().push_back(std::move(field));
}

ExtraValueField::~ExtraValueField() {
    auto& fields = valueFieldTable();
    if (!fields.empty() && fields.back().key == m_key) { // scoped: the last one added
        fields.pop_back();
    }
}

} // namespace lmprof::engine
