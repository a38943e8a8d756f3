// Demo script parsing (see demo_script.h and docs/DEMO.md).

#include "lmprof/ui/demo_script.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/run_verdict.h"
#include "lmprof/engine/study.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

namespace {

using nlohmann::json;
using Kind = DemoStep::Kind;

// Each step's name and the fields it may have ("do" aside): any other field is a mistake
// (a "timeout" meant as "timeout_s" would otherwise wait the default hour).
struct KindName {
    const char* name;
    Kind kind;
    std::initializer_list<const char*> fields;
};
const KindName kKinds[] = {
    {"configure", Kind::Configure, {"config"}},
    {"run", Kind::Run, {"config"}},
    {"sweep", Kind::Sweep, {"models", "contexts", "precisions", "modes", "warmups"}},
    {"wait", Kind::Wait, {"for", "timeout_s"}},
    {"select", Kind::Select, {"runs", "last"}},
    {"show", Kind::Show, {"window"}},
    {"pause", Kind::Pause, {"seconds"}},
    {"save_chart", Kind::SaveChart, {"chart", "path"}},
    {"caption", Kind::Caption, {"text"}},
    {"theme", Kind::Theme, {"theme"}},
    {"study", Kind::Study, {"device", "budget"}},
    {"screenshot", Kind::Screenshot, {"path"}},
    {"layout", Kind::Layout, {"path"}},
    {"open", Kind::Open, {"path"}},
    {"verdict", Kind::Verdict, {"kind"}},
    {"cancel", Kind::Cancel, {}},
};

// The most a script may hold, and the longest a wait or pause may last: a demo, not a job.
constexpr size_t kMaxSteps = 10000;
constexpr double kMaxSeconds = 24 * 3600.0;

[[noreturn]] void fail(const std::string& where, const std::string& why) {
    throw DemoScriptError(where + ": " + why);
}

std::string kindList() {
    std::string out;
    for (const auto& k : kKinds) {
        out += (out.empty() ? "" : ", ") + std::string(k.name);
    }
    return out;
}

const json& field(const json& step, const std::string& where, const char* name) {
    if (!step.contains(name)) {
        fail(where, std::string("needs \"") + name + "\"");
    }
    return step[name];
}

std::string text(const json& step, const std::string& where, const char* name, bool allowEmpty) {
    const json& v = field(step, where, name);
    if (!v.is_string() || (!allowEmpty && v.get<std::string>().empty())) {
        fail(where + "." + name, allowEmpty ? "must be a string" : "must be a non-empty string");
    }
    return v.get<std::string>();
}

double seconds(const json& step, const std::string& where, const char* name) {
    const json& v = field(step, where, name);
    if (!v.is_number() || !(v.get<double>() >= 0.0) || v.get<double>() > kMaxSeconds) {
        fail(where + "." + name, "must be a number of seconds from 0 to " +
                                     std::to_string(static_cast<int>(kMaxSeconds)));
    }
    return v.get<double>();
}

// A list of T from an array of JSON values, each converted by `read` (which fails itself).
template <typename T, typename Read>
std::vector<T> list(const json& step, const std::string& where, const char* name, Read read) {
    std::vector<T> out;
    if (!step.contains(name)) {
        return out;
    }
    const json& v = step[name];
    if (!v.is_array() || v.empty()) {
        fail(where + "." + name, "must be a non-empty array");
    }
    for (size_t i = 0; i < v.size(); ++i) {
        out.push_back(read(v[i], where + "." + name + "[" + std::to_string(i) + "]"));
    }
    return out;
}

int64_t wholeNumber(const json& v, const std::string& where, int64_t lo, int64_t hi) {
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
        fail(where,
             "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    }
    return v.get<int64_t>();
}

// The configuration patch: checked against a default configuration now (fields and types);
// its values are validated when it is played, against the form's configuration then.
std::string configPatch(const json& v, const std::string& where) {
    const std::string patch = v.dump();
    try {
        (void)engine::patchConfig(engine::RunConfig{}, patch, where);
    } catch (const engine::ResultFormatError& e) {
        throw DemoScriptError(e.what());
    }
    return patch;
}

// The step's kind, by its "do"; a field that is not one of that kind's is refused, naming
// the kind's fields.
const KindName& kindOf(const json& j, const std::string& where) {
    if (!j.is_object()) {
        fail(where, "must be an object such as {\"do\": \"run\"}");
    }
    const std::string name = text(j, where, "do", false);
    const auto kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                   [&](const KindName& k) { return name == k.name; });
    if (kind == std::end(kKinds)) {
        fail(where + ".do", "'" + name + "' is not a step; the steps are " + kindList());
    }
    // A sweep also lists the plain fields a sweep can list, by their keys (config.h).
    std::vector<std::string> fields(kind->fields.begin(), kind->fields.end());
    if (kind->kind == Kind::Sweep) {
        for (const engine::ValueField& f : engine::valueFields()) {
            if (f.sweepAxis) {
                fields.push_back(f.key);
            }
        }
    }
    for (const auto& item : j.items()) {
        const std::string& key = item.key();
        const bool known =
            key == "do" || std::find(fields.begin(), fields.end(), key) != fields.end();
        if (!known) {
            std::string names;
            for (const std::string& f : fields) {
                names += (names.empty() ? "" : ", ") + f;
            }
            fail(where + "." + key, "is not a field of '" + name + "' (its fields: " + names + ")");
        }
    }
    return *kind;
}

// A sweep step's lists: the models, contexts, precisions, modes, warmups and plain fields
// (seed, threads) to cross.
void parseSweepLists(const json& j, const std::string& where, DemoStep& s) {
    s.models = list<std::string>(j, where, "models", [](const json& v, const std::string& w) {
        if (!v.is_string() || !engine::presetModel(v.get<std::string>())) {
            fail(w, "must name a preset model");
        }
        return v.get<std::string>();
    });
    s.contexts = list<int64_t>(j, where, "contexts", [](const json& v, const std::string& w) {
        return wholeNumber(v, w, 1, 1 << 20);
    });
    s.precisions =
        list<engine::Precision>(j, where, "precisions", [](const json& v, const std::string& w) {
            const auto p =
                v.is_string() ? engine::parsePrecision(v.get<std::string>()) : std::nullopt;
            if (!p) {
                fail(w, "must name a precision");
            }
            return *p;
        });
    s.modes = list<engine::Mode>(j, where, "modes", [](const json& v, const std::string& w) {
        const auto m = v.is_string() ? engine::parseMode(v.get<std::string>()) : std::nullopt;
        if (!m) {
            fail(w, "must name a mode");
        }
        return *m;
    });
    s.warmups = list<int>(j, where, "warmups", [](const json& v, const std::string& w) {
        return static_cast<int>(wholeNumber(v, w, 0, 100000));
    });
    for (const engine::ValueField& f : engine::valueFields()) {
        if (!f.sweepAxis || !j.contains(f.key)) {
            continue;
        }
        auto values =
            list<int64_t>(j, where, f.key.c_str(), [&f](const json& v, const std::string& w) {
                const bool fits =
                    v.is_number_integer() &&
                    !(v.is_number_unsigned() &&
                      v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
                if (!fits) {
                    fail(w, "must be a whole number");
                }
                if (auto why = f.valueError(v.get<int64_t>())) {
                    fail(w, *why);
                }
                return v.get<int64_t>();
            });
        s.values.emplace_back(f.key, std::move(values));
    }
}

// A select step's runs: the last few, or run numbers as in the Runs table, none twice.
void parseSelection(const json& j, const std::string& where, DemoStep& s) {
    if (j.contains("last") && j.contains("runs")) {
        fail(where, "give \"runs\" or \"last\", not both");
    }
    if (j.contains("last")) {
        s.last = static_cast<int>(wholeNumber(j["last"], where + ".last", 1, 100000));
        return;
    }
    s.runs = list<int>(j, where, "runs", [](const json& v, const std::string& w) {
        return static_cast<int>(wholeNumber(v, w, 1, 100000));
    });
    if (s.runs.empty()) {
        fail(where, "needs \"runs\" (run numbers as in the Runs table) or \"last\"");
    }
    for (size_t i = 1; i < s.runs.size(); ++i) {
        if (std::find(s.runs.begin(), s.runs.begin() + i, s.runs[i]) != s.runs.begin() + i) {
            fail(where + ".runs[" + std::to_string(i) + "]",
                 "repeats run " + std::to_string(s.runs[i]));
        }
    }
}

DemoStep parseStep(const json& j, const std::string& where) {
    DemoStep s;
    s.kind = kindOf(j, where).kind;
    switch (s.kind) {
    case Kind::Configure:
        s.patch = configPatch(field(j, where, "config"), where + ".config");
        break;
    case Kind::Run:
        if (j.contains("config")) {
            s.patch = configPatch(j["config"], where + ".config");
        }
        break;
    case Kind::Sweep:
        parseSweepLists(j, where, s);
        break;
    case Kind::Wait:
        s.target = text(j, where, "for", false);
        if (s.target != "run" && s.target != "sweep" && s.target != "study" && s.target != "open" &&
            s.target != "script" && s.target != "engine") {
            fail(where + ".for", "'" + s.target +
                                     "' is not \"run\", \"sweep\", \"study\", \"open\", "
                                     "\"script\" or \"engine\"");
        }
        s.seconds = j.contains("timeout_s") ? seconds(j, where, "timeout_s") : 3600.0;
        break;
    case Kind::Select:
        parseSelection(j, where, s);
        break;
    case Kind::Show:
        s.target = text(j, where, "window", false);
        break;
    case Kind::Verdict:
        s.target = text(j, where, "kind", false);
        if (!engine::parseVerdictKind(s.target)) {
            fail(where + ".kind", "'" + s.target + "' is no verdict kind (docs/VERDICTS.md)");
        }
        break;
    case Kind::Pause:
        s.seconds = seconds(j, where, "seconds");
        break;
    case Kind::SaveChart:
        s.target = text(j, where, "chart", false);
        s.path = text(j, where, "path", false);
        break;
    case Kind::Screenshot:
    case Kind::Layout:
    case Kind::Open:
        s.path = text(j, where, "path", false);
        break;
    case Kind::Caption:
        s.text = text(j, where, "text", true);
        break;
    case Kind::Cancel:
        break;
    case Kind::Theme:
        s.target = text(j, where, "theme", false);
        if (s.target != "dark" && s.target != "light") {
            fail(where + ".theme", "'" + s.target + "' is not \"dark\" or \"light\"");
        }
        break;
    case Kind::Study:
        s.target = j.contains("device") ? text(j, where, "device", false) : "auto";
        s.text = text(j, where, "budget", false);
        if (!engine::parseStudyBudget(s.text)) {
            fail(where + ".budget", "'" + s.text + "' is not a time (e.g. 20m, 90s, 1h)");
        }
        break;
    }
    return s;
}

} // namespace

DemoScript parseDemoScript(std::string_view text) {
    try {
        engine::checkJsonDepth(text);
    } catch (const engine::ResultFormatError& e) {
        throw DemoScriptError(e.what()); // the one error a demo script's reader throws
    }
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw DemoScriptError(std::string("not JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("lmprof_demo")) {
        throw DemoScriptError("not an lmprof demo script: the top level must be an object with "
                              "\"lmprof_demo\": 1 and \"steps\"");
    }
    if (j["lmprof_demo"] != 1) {
        throw DemoScriptError("lmprof_demo: version " + j["lmprof_demo"].dump() +
                              " is not supported (this lmprof reads version 1)");
    }
    const json& steps = j.contains("steps") ? j["steps"] : json();
    if (!steps.is_array() || steps.empty() || steps.size() > kMaxSteps) {
        throw DemoScriptError("steps: must be an array of 1 to " + std::to_string(kMaxSteps) +
                              " steps");
    }
    DemoScript script;
    bool runStarted = false;
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::string where = "steps[" + std::to_string(i) + "]";
        script.steps.push_back(parseStep(steps[i], where));
        const DemoStep& s = script.steps.back();
        runStarted = runStarted || s.kind == Kind::Run;
        if (s.kind == Kind::Wait && s.target == "run" && !runStarted) {
            throw DemoScriptError(where + ".for: no step before it starts a run");
        }
    }
    return script;
}

DemoScript loadDemoScript(const std::filesystem::path& path) {
    try {
        return parseDemoScript(engine::readInputFile(path, 1 << 20));
    } catch (const std::exception& e) {
        throw DemoScriptError(path.string() + ": " + e.what());
    }
}

} // namespace lmprof::ui
