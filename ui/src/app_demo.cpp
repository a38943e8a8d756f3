// The window's stage for demos: files opened at launch (--open) and the demo script
// (--demo, docs/DEMO.md) played one step per frame or more, on App's clock (the wall
// clock, or the recording's frames / fps), and its caption banner.

#include "app_impl.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/sweep.h"
#include "theme.h"

#include <cstdio>
#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

void App::Impl::openAtLaunch() {
    if (options.openFiles.empty()) {
        return;
    }
    ViewContext ctx = context();
    const size_t before = store.runs().size();
    std::string problems;
    for (const std::string& path : options.openFiles) {
        filesView.open(ctx, path);
        if (statusIsError) {
            std::fprintf(stderr, "lmprof: --open: %s\n", status.c_str());
            problems += (problems.empty() ? "" : "; ") + status;
        }
    }
    // Every run opened is selected, overlaid in the charts.
    const size_t opened = store.runs().size() - before;
    store.selectLast(opened);
    ctx.report(problems.empty() ? "opened " + std::to_string(opened) + " run(s), shown together"
                                : problems,
               !problems.empty());
}

void App::Impl::checkDemoTargets() {
    if (!options.demo) {
        return;
    }
    for (size_t i = 0; i < options.demo->steps.size() && !demoFailed; ++i) {
        const DemoStep& step = options.demo->steps[i];
        const std::string where = "steps[" + std::to_string(i) + "]";
        if (step.kind == DemoStep::Kind::Show && !isWindow(step.target)) {
            failDemo(where + ".window",
                     "'" + step.target + "' is not a window (" + windowTitles() + ")");
        } else if (step.kind == DemoStep::Kind::SaveChart && !findChart(step.target)) {
            failDemo(where + ".chart",
                     "'" + step.target + "' is not a chart (" + chartNames() + ")");
        }
    }
}

void App::Impl::failDemo(const std::string& where, const std::string& why) {
    demoFailed = true;
    status = "demo stopped at " + where + ": " + why;
    statusIsError = true;
    std::fprintf(stderr, "lmprof: --demo: %s\n", status.c_str());
}

void App::Impl::playDemo() {
    // Instant steps (configure, select, ...) run back to back in one frame; a step that
    // waits returns false and is asked again next frame.
    while (demoPlaying()) {
        const DemoStep& step = options.demo->steps[demoStep];
        const bool firstFrame = demoStepStartS < 0.0;
        if (firstFrame) {
            demoStepStartS = clockS;
        }
        const std::string where = "steps[" + std::to_string(demoStep) + "]";
        if (!playStep(step, where, firstFrame)) {
            return;
        }
        ++demoStep;
        demoStepStartS = -1.0;
    }
}

// The form's configuration with the step's patch, validated; nullopt after failing the demo.
std::optional<RunConfig> App::Impl::demoConfig(const DemoStep& step, const std::string& where) {
    try {
        RunConfig c = step.patch.empty()
                          ? form.config()
                          : patchConfig(form.config(), step.patch, where + ".config");
        if (const auto errors = validate(c); !errors.empty()) {
            failDemo(where + ".config", errors.front().message());
            return std::nullopt;
        }
        return c;
    } catch (const std::exception& e) {
        failDemo(where, e.what());
        return std::nullopt;
    }
}

bool App::Impl::playRun(ViewContext& ctx, const DemoStep& step, const std::string& where) {
    const auto c = demoConfig(step, where);
    if (!c) {
        return true;
    }
    form.config() = *c;
    if (session().busy()) {
        return false; // the Run button waits for the previous run too
    }
    demoRunIndex = submitRun(ctx, *c);
    if (demoRunIndex < 0) {
        failDemo(where, status);
    }
    return true;
}

bool App::Impl::playSweep(ViewContext& ctx, const DemoStep& step, const std::string& where) {
    if (session().busy() || sweepView.running()) {
        return false;
    }
    SweepSpec spec;
    spec.base = form.config();
    for (const std::string& name : step.models) {
        spec.models.push_back(*pickPreset(spec.base.model, name));
    }
    if (spec.models.empty()) {
        spec.models.push_back(spec.base.model);
    }
    spec.contexts =
        step.contexts.empty() ? std::vector<int64_t>{spec.base.contextLength} : step.contexts;
    spec.precisions =
        step.precisions.empty() ? std::vector<Precision>{spec.base.precision} : step.precisions;
    spec.modes = step.modes.empty() ? std::vector<Mode>{spec.base.mode} : step.modes;
    spec.warmups = step.warmups;
    std::vector<RunConfig> configs = expandSweep(spec);
    for (const RunConfig& c : configs) {
        if (const auto errors = validate(c); !errors.empty()) {
            failDemo(where, runLabel(c) + ": " + errors.front().message());
            return true;
        }
    }
    sweepView.start(ctx, std::move(configs));
    return true;
}

bool App::Impl::playWait(const DemoStep& step, const std::string& where, double elapsed) {
    bool done = false;
    if (step.target == "run") {
        // A run step came before (parseDemoScript checks it) and started, or the demo
        // stopped there: demoRunIndex is the run's.
        const RunView* v = store.findBySessionIndex(demoRunIndex);
        done = v && v->finished;
    } else if (step.target == "open") {
        done = !filesView.opening();
    } else if (step.target == "study") {
        done = !studyView.busy();
        if (done && !studyView.message().empty()) {
            failDemo(where, "the study stopped: " + studyView.message());
            return true;
        }
    } else {
        done = !sweepView.running() && !session().busy();
    }
    if (!done && elapsed > step.seconds) {
        failDemo(where, "still waiting after " + formatFixed(step.seconds, 0) + " s");
        return true;
    }
    return done;
}

void App::Impl::playSelect(const DemoStep& step, const std::string& where) {
    const int count = static_cast<int>(store.runs().size());
    std::vector<int> chosen;
    if (step.last > 0) {
        if (step.last > count) {
            failDemo(where + ".last", "there are " + std::to_string(count) + " run(s)");
            return;
        }
        for (int i = count - step.last; i < count; ++i) {
            chosen.push_back(i);
        }
    }
    for (int number : step.runs) {
        if (number > count) {
            failDemo(where + ".runs", "there is no run " + std::to_string(number) + " (" +
                                          std::to_string(count) + " run(s))");
            return;
        }
        chosen.push_back(number - 1);
    }
    store.selection() = chosen;
}

bool App::Impl::playSaveChart(const DemoStep& step, const std::string& where, bool firstFrame) {
    if (firstFrame) {
        PngRequest request = exportRequest(step.target, step.path);
        request.origin = PngRequest::Origin::Demo;
        demoExportError.clear();
        pngRequests.push_back(request);
        return false;
    }
    if (!pngRequests.empty()) {
        return false;
    }
    if (!demoExportError.empty()) {
        failDemo(where, demoExportError);
    }
    return true;
}

bool App::Impl::playStep(const DemoStep& step, const std::string& where, bool firstFrame) {
    using Kind = DemoStep::Kind;
    ViewContext ctx = context();
    const double elapsed = clockS - demoStepStartS;
    switch (step.kind) {
    case Kind::Configure:
        if (const auto c = demoConfig(step, where)) {
            form.config() = *c;
            ctx.report("configured " + runLabel(*c), false);
        }
        return true;
    case Kind::Run:
        return playRun(ctx, step, where);
    case Kind::Sweep:
        return playSweep(ctx, step, where);
    case Kind::Wait:
        return playWait(step, where, elapsed);
    case Kind::Select:
        playSelect(step, where);
        return true;
    case Kind::Show:
        // One window per frame: focusing two docked windows in one frame leaves only the
        // last one's tab in front (as --show does).
        if (firstFrame) {
            ImGui::SetWindowFocus(step.target.c_str());
            return false;
        }
        return true;
    case Kind::Pause:
        return elapsed >= step.seconds;
    case Kind::SaveChart:
        return playSaveChart(step, where, firstFrame);
    case Kind::Caption:
        caption = step.text;
        return true;
    case Kind::Screenshot:
        // Taken after this frame renders (afterRender), before the next step.
        if (firstFrame) {
            screenshotPath = step.path;
            screenshotRequested = true;
            return false;
        }
        return !screenshotRequested;
    case Kind::Layout:
        try {
            writeLayoutReport(step.path);
        } catch (const std::exception& e) {
            failDemo(where, e.what());
        }
        return true;
    case Kind::Theme:
        themeOverride = step.target == "dark";
        applyTheme(*themeOverride, ImGui::GetStyle().FontScaleDpi);
        return true;
    case Kind::Open:
        if (filesView.opening()) {
            return false; // one file at a time, as the menu
        }
        filesView.openInBackground(ctx, step.path);
        return true;
    case Kind::Study:
        if (session().busy() || sweepView.running() || studyView.busy()) {
            return false; // as the Plan button, it waits for the engine
        }
        studyView.start(ctx, step.target, step.text);
        if (!studyView.busy()) {
            failDemo(where, studyView.message());
        }
        return true;
    }
    return true;
}

void App::Impl::drawCaption() {
    if (caption.empty()) {
        return;
    }
    // A banner across the bottom of the window, above everything, for recorded demos.
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float pad = ImGui::GetFontSize() * 0.8f;
    const float wrap = vp->WorkSize.x * 0.7f;
    const ImVec2 size = ImGui::CalcTextSize(caption.c_str(), nullptr, false, wrap);
    const ImVec2 box(size.x + 2 * pad, size.y + 2 * pad);
    const ImVec2 at(vp->WorkPos.x + (vp->WorkSize.x - box.x) / 2.0f,
                    vp->WorkPos.y + vp->WorkSize.y - box.y - pad * 2.0f);
    ImDrawList* draw = ImGui::GetForegroundDrawList();
    draw->AddRectFilled(at, ImVec2(at.x + box.x, at.y + box.y), IM_COL32(20, 20, 28, 225),
                        pad * 0.6f);
    draw->AddText(nullptr, 0.0f, ImVec2(at.x + pad, at.y + pad), IM_COL32(255, 255, 255, 255),
                  caption.c_str(), nullptr, wrap);
}

} // namespace lmprof::ui
