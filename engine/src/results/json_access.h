// Private helpers shared by the JSON readers and writers of results/: strict typed reads
// that name the JSON path of the value they could not use, and the memory-related parts
// of a run (timeline, telemetry, snapshot) that memory_json.cpp encodes.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session_interface.h"
#include "results/simd_node.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine::json_io {

// ordered_json keeps the schema's field order in files people read and diff.
using json = nlohmann::ordered_json;

[[noreturn]] inline void fail(const std::string& path, const std::string& why) {
    throw ResultFormatError(path + ": " + why);
}

// The readers below take either parser's values (J: nlohmann's json, or SimdNode for the
// fast readers, simd_node.h). A member is found through lookup(): a pointer into an
// nlohmann document, a node of a simdjson one.
inline const json* lookup(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}
inline std::optional<SimdNode> lookup(const SimdNode& obj, const char* key) {
    return obj.find(key);
}

template <typename J>
auto member(const J& obj, const std::string& path, const char* key, bool required) {
    if (!obj.is_object()) {
        fail(path, "expected an object");
    }
    auto found = lookup(obj, key);
    if (!found || (found->is_null() && !required)) {
        if (required) {
            fail(path + "." + key, "missing");
        }
        return decltype(found){};
    }
    return found;
}

// An integer that fits T, or a refusal naming the JSON path and the value as written:
// "4294967297 is out of range (an integer from -2147483648 to 2147483647)". Never wraps:
// one rule for every integer lmprof reads (result sets, autosave, the protocol, settings).
template <typename T, typename J>
T integerFrom(const J& v, const std::string& where) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    const auto outOfRange = [&] {
        fail(where, v.dump() + " is out of range (an integer from " +
                        std::to_string(std::numeric_limits<T>::min()) + " to " +
                        std::to_string(std::numeric_limits<T>::max()) + ")");
    };
    if (v.is_number_unsigned()) {
        if (v.template get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            outOfRange();
        }
    } else if (v.is_number_integer()) {
        const int64_t i = v.template get<int64_t>();
        if ((i < 0 &&
             (!std::is_signed_v<T> || i < static_cast<int64_t>(std::numeric_limits<T>::min()))) ||
            (i > 0 &&
             static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
            outOfRange();
        }
    } else if (v.is_number_float() && std::isfinite(v.template get<double>()) &&
               std::floor(v.template get<double>()) == v.template get<double>() &&
               std::fabs(v.template get<double>()) >= 9.2e18) {
        outOfRange(); // beyond 64 bits: the parser kept it as a double
    } else {
        fail(where, "expected an integer");
    }
    return v.template get<T>();
}

template <typename T, typename J>
void read(const J& obj, const std::string& path, const char* key, T& out, bool required = false) {
    const auto v = member(obj, path, key, required);
    if (!v) {
        return;
    }
    // The path is spelled out only for a refusal: reading a sample is a few field reads.
    const auto where = [&] { return path + "." + key; };
    if constexpr (std::is_same_v<T, bool>) {
        if (!v->is_boolean())
            fail(where(), "expected true or false");
    } else if constexpr (std::is_integral_v<T>) {
        // In range as written: the common case, read without spelling the path.
        if (v->is_number_unsigned() &&
            v->template get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            out = v->template get<T>();
            return;
        }
        out = integerFrom<T>(*v, where()); // refused, or a negative one checked there
        return;
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v->is_number())
            fail(where(), "expected a number");
    } else {
        if (!v->is_string())
            fail(where(), "expected a string");
    }
    out = v->template get<T>();
}

// Longer than any step or run lmprof can time (about 11.6 days); a larger or non-finite
// duration in a file is refused, so that sums and ratios over it stay finite.
inline constexpr double kMaxDurationMs = 1e9;

// The most steps a watched script's run may say it ran (docs/WATCH.md): a bound on what a
// file can make a reader count, far above any real loop's.
inline constexpr int kMaxWatchedSteps = 100'000'000;

// A duration in milliseconds: a number from 0 to kMaxDurationMs.
template <typename J>
void readDuration(const J& obj, const std::string& path, const char* key, double& out,
                  bool required = false) {
    double v = out;
    read(obj, path, key, v, required);
    if (!(v >= 0.0 && v <= kMaxDurationMs)) {
        char shown[32];
        std::snprintf(shown, sizeof(shown), "%g", v);
        fail(path + "." + key,
             std::string("a duration of ") + shown + " ms is outside 0 to 1e9 ms");
    }
    out = v;
}

// A number from lo to hi (a share, a count per step, FLOPs): refused naming the path and
// the range otherwise.
template <typename T, typename J>
void readBetween(const J& obj, const std::string& path, const char* key, T& out, T lo, T hi,
                 bool required = false) {
    T v = out;
    read(obj, path, key, v, required);
    if (!(v >= lo && v <= hi)) {
        std::ostringstream shown;
        shown << v << " is outside " << lo << " to " << hi;
        fail(path + "." + key, shown.str());
    }
    out = v;
}

// An array that must be there, and is never null.
template <typename J>
void arrayOrFail(const J& obj, const std::string& path, const char* key) {
    if (!obj.is_object()) {
        fail(path, "expected an object");
    }
    const auto found = lookup(obj, key);
    if (!found || !found->is_array()) {
        fail(path + "." + key, !found ? "missing" : "expected an array");
    }
}

template <typename T, typename J>
void readOptional(const J& obj, const std::string& path, const char* key, std::optional<T>& out) {
    T value{};
    if (member(obj, path, key, false)) {
        read(obj, path, key, value);
        out = value;
    }
}

template <typename Enum, typename Parser, typename J>
void readEnum(const J& obj, const std::string& path, const char* key, Enum& out, Parser parse,
              bool required = false) {
    std::string text;
    if (!member(obj, path, key, required)) {
        return;
    }
    read(obj, path, key, text);
    const auto parsed = parse(text);
    if (!parsed) {
        fail(path + "." + key, "unknown value '" + text + "'");
    }
    out = *parsed;
}

// An array member, empty when absent or null.
inline const json& arrayMember(const json& obj, const std::string& path, const char* key) {
    static const json kEmpty = json::array();
    const json* v = member(obj, path, key, false);
    if (!v) {
        return kEmpty;
    }
    if (!v->is_array()) {
        fail(path + "." + key, "expected an array");
    }
    return *v;
}
inline std::vector<SimdNode> arrayMember(const SimdNode& obj, const std::string& path,
                                         const char* key) {
    const auto v = member(obj, path, key, false);
    if (!v) {
        return {};
    }
    if (!v->is_array()) {
        fail(path + "." + key, "expected an array");
    }
    return v->elements();
}

// "$.runs[0].steps[3]": the path of an array element, for messages.
inline std::string indexed(const std::string& path, const char* key, size_t i) {
    return path + "." + key + "[" + std::to_string(i) + "]";
}

// The steps of a run (or of one rank of it): at most the config's `total` steps, each index
// within 0..total-1. `path` is the array's; `stepPath` the element's.
inline void checkStepCount(size_t count, const std::string& path, int total) {
    if (count > static_cast<size_t>(total)) {
        fail(path, std::to_string(count) + " steps, but the config runs " + std::to_string(total));
    }
}
inline void checkStepIndex(int index, const std::string& stepPath, int total) {
    if (index < 0 || index >= total) {
        fail(stepPath + ".index", "step " + std::to_string(index) +
                                      " is outside the config's steps 0.." +
                                      std::to_string(total - 1));
    }
}

// A document within the readers' limits (kMaxJsonDepth, kMaxObjectMembers): a hostile file
// nested thousands deep is refused before anything recurses over it, one with an object of
// a million members before its reading turns quadratic.
inline json parseDocument(std::string_view text) {
    checkJsonDepth(text);
    std::vector<size_t> members; // of each open object or array (arrays are not counted)
    const auto count = [&members](int, json::parse_event_t event, json&) {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start:
            members.push_back(0);
            break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            members.pop_back();
            break;
        case json::parse_event_t::key:
            if (++members.back() > kMaxObjectMembers) {
                throw ResultFormatError("not an lmprof file: an object with more than " +
                                        std::to_string(kMaxObjectMembers) + " members");
            }
            break;
        default:
            break;
        }
        return true;
    };
    try {
        return json::parse(text.begin(), text.end(), count);
    } catch (const json::parse_error& e) {
        throw ResultFormatError(std::string("not valid JSON (") + e.what() + ")");
    } catch (const json::out_of_range& e) { // a number beyond double's range, e.g. 1e400
        throw ResultFormatError(std::string("a value out of range (") + e.what() + ")");
    } catch (const json::exception& e) {
        throw ResultFormatError(std::string("not readable JSON (") + e.what() + ")");
    }
}

// A number that may have overflowed (a loss, a gradient norm): finite values as numbers,
// the others as "nan", "inf" or "-inf", which JSON has no numbers for.
inline json numberOrName(double v) {
    if (std::isfinite(v)) {
        return v;
    }
    return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}
template <typename J>
double numberOrNameFrom(const J& v, const std::string& where) {
    if (v.is_number()) {
        return v.template get<double>();
    }
    if (v.is_string()) {
        const std::string s = v.template get<std::string>();
        if (s == "nan") {
            return std::numeric_limits<double>::quiet_NaN();
        }
        if (s == "inf" || s == "-inf") {
            return s == "inf" ? std::numeric_limits<double>::infinity()
                              : -std::numeric_limits<double>::infinity();
        }
    }
    fail(where, "expected a number, \"nan\", \"inf\" or \"-inf\"");
}

inline json nullable(const std::optional<std::string>& v) {
    return v ? json(*v) : json(nullptr);
}
inline json nullable(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

// The reference readings, by nlohmann, whose answers and messages the fast ones (simdjson,
// SimdReader) give: parseResultSet and parseRun fall back to them on anything unusual, and
// tests/engine/result_reading_test.cpp holds the two to the same answers.
ResultSet readResultSetReference(std::string_view text);
RunResult readRunReference(std::string_view text);
// How many readings so far fell back to the reference one (a document the fast path did
// not take): the tests see that valid documents are read fast.
size_t referenceReadings();

// toJson (result_io.h) piece by piece: the set's members around its runs, and each run
// made and written on its own; the same bytes as one dump of the whole document.
void writeResultSetJson(const ResultSet& set, int indent,
                        const std::function<void(std::string_view)>& write);

// parseResultSet (result_io.h) for a mapped file: `consumed` hears, as runs are read, the
// offset up to which the text has been read, so its pages can be let go (result_file.cpp).
ResultSet parseResultSetReleasing(std::string_view text,
                                  const std::function<void(size_t)>& consumed);

// The records of a result set, one object each (result_json.cpp): what the remote engine's
// messages carry (remote_protocol.cpp) besides the files. `path` names the place in a
// document for errors ("$.runs[2]").
json configJson(const RunConfig& c, const std::string& resolvedDevice);
RunConfig configFrom(const json& j, const std::string& path, std::string& resolvedDevice);
json stepJson(const StepRecord& s);
StepRecord stepFrom(const json& j, const std::string& path);
json runJson(const RunResult& r);
RunResult runFrom(const json& j, const std::string& path);
RunResult runFrom(const SimdNode& j, const std::string& path); // the fast readers' run
json environmentJson(const Environment& e);
Environment environmentFrom(const json& e, const std::string& path);
json toolJson(const ToolInfo& t);
ToolInfo toolFrom(const json& t, const std::string& path);
// One element of a run's "memory_timeline" and "telemetry" (memory_json.cpp).
json memorySampleJson(const MemorySample& m);
MemorySample memorySampleFrom(const json& j, const std::string& path);
json telemetrySampleJson(const TelemetrySample& t);
TelemetrySample telemetrySampleFrom(const json& j, const std::string& path);

// The parts of a run and a set that have files of their own, called from the run's and the
// set's field lists (fields.h) in both directions: the memory parts ("memory_timeline",
// "telemetry", "memory_snapshot"; memory_json.cpp), the op profile ("op_profile", absent
// when none; op_profile_json.cpp; its request is part of the config), a data-parallel
// run's ranks ("ddp", absent when none; ddp_json.cpp) and the set's precision lab
// ("precision_lab", absent when empty; lab_json.cpp).
struct Writer;
template <typename J>
struct BasicReader;
using Reader = BasicReader<json>;
using SimdReader = BasicReader<SimdNode>; // a run read by the fast readers
// A run (an object) dumped with `indent`, each of its sample columns (columns.h) on one line:
// thousands of numbers, each on a line of its own and indented, would be most of the file.
// `mark` is a string no value of the run holds. memory_json.cpp.
std::string dumpWithColumnsInline(json run, int indent, const std::string& mark);
void memoryFields(Writer& io, const RunResult& r);
void memoryFields(Reader& io, RunResult& r);
void memoryFields(SimdReader& io, RunResult& r);
void opProfileFields(Writer& io, const RunResult& r);
void opProfileFields(Reader& io, RunResult& r);
void opProfileFields(SimdReader& io, RunResult& r);
void ddpFields(Writer& io, const RunResult& r);
void ddpFields(Reader& io, RunResult& r);
void ddpFields(SimdReader& io, RunResult& r);
void verdictFields(Writer& io, const RunResult& r);
void verdictFields(Reader& io, RunResult& r);
void verdictFields(SimdReader& io, RunResult& r);
void setVerdictFields(Writer& io, const std::optional<std::vector<RunVerdict>>& verdicts);
void setVerdictFields(Reader& io, std::optional<std::vector<RunVerdict>>& verdicts);
void precisionLabFields(Writer& io, const PrecisionLab& lab);
void precisionLabFields(Reader& io, PrecisionLab& lab);
// A lab experiment's request and its report, as the remote engine's messages carry them:
// {"experiment": "accumulation" | "dtypes", ...the request's fields} and
// {"experiment": ..., "report": the object the result set's precision_lab holds}.
json labRequestJson(const LabRequest& request);
LabRequest labRequestFrom(const json& j, const std::string& path);
json labReportJson(const LabReport& report);
LabReport labReportFrom(const json& j, const std::string& path);

} // namespace lmprof::engine::json_io
