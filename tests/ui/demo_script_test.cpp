// Demo scripts (docs/DEMO.md) are read whole before they play: each kind of step, each
// mistake named by its step and field, and the shipped demos.

#include "lmprof/ui/demo_script.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

using namespace lmprof;
using namespace lmprof::ui;

namespace {

// Why a script of these steps is refused, or "accepted".
std::string refusalOf(const std::string& steps) {
    try {
        parseDemoScript(R"({"lmprof_demo": 1, "steps": [)" + steps + "]}");
    } catch (const DemoScriptError& e) {
        return std::string(e.what());
    }
    return std::string("accepted");
}

} // namespace

// A demo script is read whole before it plays: every kind of step, and what each keeps.
TEST(DemoScript, EveryKindOfStepParses) {
    const DemoScript ok = parseDemoScript(R"({"lmprof_demo": 1, "steps": [
        {"do": "configure", "config": {"context_length": 32}},
        {"do": "run", "config": {"warmup_steps": 5}},
        {"do": "wait", "for": "run", "timeout_s": 60},
        {"do": "sweep", "contexts": [16, 32], "precisions": ["fp32", "bf16"], "warmups": [0, 2]},
        {"do": "select", "last": 2},
        {"do": "select", "runs": [1, 3]},
        {"do": "show", "window": "Memory"},
        {"do": "pause", "seconds": 1.5},
        {"do": "save_chart", "chart": "step-times", "path": "a.png"},
        {"do": "caption", "text": ""},
        {"do": "theme", "theme": "light"},
        {"do": "study", "device": "cpu", "budget": "90s"},
        {"do": "wait", "for": "study"},
        {"do": "screenshot", "path": "tab.png"},
        {"do": "layout", "path": "layout.json"}]})");
    ASSERT_EQ(ok.steps.size(), 15u);
    EXPECT_EQ(ok.steps[13].kind, DemoStep::Kind::Screenshot);
    EXPECT_EQ(ok.steps[13].path, "tab.png");
    EXPECT_EQ(ok.steps[14].kind, DemoStep::Kind::Layout);
    EXPECT_EQ(ok.steps[14].path, "layout.json");
    EXPECT_EQ(ok.steps[11].kind, DemoStep::Kind::Study);
    EXPECT_EQ(ok.steps[11].target, "cpu");
    EXPECT_EQ(ok.steps[11].text, "90s");
    EXPECT_EQ(ok.steps[12].target, "study");
    EXPECT_EQ(ok.steps[0].kind, DemoStep::Kind::Configure);
    EXPECT_EQ(ok.steps[2].seconds, 60.0);
    EXPECT_EQ(ok.steps[3].contexts, (std::vector<int64_t>{16, 32}));
    EXPECT_EQ(ok.steps[3].precisions.size(), 2u);
    EXPECT_EQ(ok.steps[4].last, 2);
    EXPECT_EQ(ok.steps[5].runs, (std::vector<int>{1, 3}));
    EXPECT_EQ(ok.steps[7].seconds, 1.5);
    EXPECT_EQ(ok.steps[8].path, "a.png");
}

// Each mistake in a step names its step and field, and says what would do.
TEST(DemoScript, MistakesNameTheStepAndField) {
    const auto refusal = refusalOf;
    const auto says = [&](const std::string& steps, const std::string& part) {
        const std::string why = refusal(steps);
        EXPECT_NE(why.find(part), std::string::npos) << why;
    };
    says(R"({"do": "pause", "seconds": 1}, {"do": "rn"})", "steps[1].do: 'rn' is not a step");
    says(R"({"do": "pause"})", "steps[0]: needs \"seconds\"");
    says(R"({"do": "pause", "seconds": -1})", "steps[0].seconds");
    says(R"({"do": "wait", "for": "lunch"})", "steps[0].for");
    says(R"({"do": "configure", "config": {"contxt": 1}})", "steps[0].config.contxt");
    says(R"({"do": "sweep", "precisions": ["fp64"]})", "steps[0].precisions[0]");
    says(R"({"do": "sweep", "contexts": []})", "steps[0].contexts: must be a non-empty array");
    says(R"({"do": "select"})", "steps[0]: needs \"runs\"");
    says(R"({"do": "theme", "theme": "pink"})", "steps[0].theme");
    says(R"({"do": "study", "budget": "soon"})", "steps[0].budget: 'soon' is not a time");
    says(R"({"do": "study"})", "steps[0]: needs \"budget\"");
    says(R"({"do": "layout"})", "steps[0]: needs \"path\"");
    says(R"({"do": "screenshot", "path": ""})", "steps[0].path");
    says(R"(7)", "steps[0]: must be an object");
    // A field the step does not have (a typo would otherwise be ignored: "timeout" for
    // "timeout_s" waited the default hour), both ways of selecting, a repeated run, and a
    // wait for a run that no step before it starts.
    says(R"({"do": "run"}, {"do": "wait", "for": "run", "timeout": 60})",
         "steps[1].timeout: is not a field of 'wait' (its fields: for, timeout_s)");
    says(R"({"do": "select", "last": 2, "runs": [1]})", "not both");
    says(R"({"do": "select", "runs": [1, 2, 1]})", "steps[0].runs[2]: repeats run 1");
    says(R"({"do": "pause", "seconds": 1}, {"do": "wait", "for": "run"})",
         "steps[1].for: no step before it starts a run");
    EXPECT_NE(std::string(refusal("")).find("steps: must be an array of 1"), std::string::npos);
}

// A sweep step lists the plain fields a sweep can list by their keys (ValueField::sweepAxis),
// each value checked by its field, and names them among its fields.
TEST(DemoScript, ASweepListsSeedsAndThreadsByTheirFields) {
    const DemoScript ok = parseDemoScript(R"({"lmprof_demo": 1, "steps": [
        {"do": "sweep", "seed": [0, 7], "threads": [1, 2]}]})");
    ASSERT_EQ(ok.steps.size(), 1u);
    using Values = std::vector<std::pair<std::string, std::vector<int64_t>>>;
    EXPECT_EQ(ok.steps[0].values, (Values{{"seed", {0, 7}}, {"threads", {1, 2}}}));
    const auto refusal = refusalOf;
    EXPECT_NE(refusal(R"({"do": "sweep", "threads": [1, 5000]})")
                  .find("steps[0].threads[1]: must be between 0 and 4096, got 5000"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"do": "sweep", "seed": [-1]})").find("steps[0].seed[0]: must not be"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"do": "sweep", "seed": ["one"]})")
                  .find("steps[0].seed[0]: must be a whole number"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"do": "sweep", "sample_hz": [1]})").find("seed, threads"),
              std::string::npos);
}

// A file that is not a demo script, of another version, or nested too deep is refused as a
// whole; the demos the repository ships parse.
TEST(DemoScript, WholeFilesAreCheckedAndTheShippedDemosParse) {
    const auto whole = [](const char* text) {
        try {
            parseDemoScript(text);
        } catch (const DemoScriptError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(whole("{").find("not JSON"), std::string::npos);
    EXPECT_NE(whole(R"({"steps": []})").find("not an lmprof demo script"), std::string::npos);
    EXPECT_NE(whole(R"({"lmprof_demo": 2, "steps": []})").find("version 2"), std::string::npos);
    // Nesting beyond the readers' limit is a DemoScriptError too (found by fuzz_demo_script).
    const std::string deep = R"({"lmprof_demo": 1, "steps": [)" + std::string(200, '[');
    EXPECT_NE(whole(deep.c_str()).find("nest"), std::string::npos) << whole(deep.c_str());
    // The shipped demos parse.
    for (const char* name : {"two-runs.json", "sweep.json"}) {
        EXPECT_NO_THROW(
            loadDemoScript(std::filesystem::path(LMPROF_SOURCE_DIR) / "docs" / "demos" / name))
            << name;
    }
}
