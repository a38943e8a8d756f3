// The window's stage for demos: files opened at launch (--open) and the demo script
// (--demo, docs/DEMO.md) played one step per frame or more, on App's clock (the wall
// clock, or the recording's frames / fps), and its caption banner.

#include "app_parts.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/sweep.h"
#include "theme.h"

#include <cstdio>
#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

void App::Parts::openAtLaunch() {
    if (options.openFiles.empty()) {
        return;
    }
    ViewContext ctx = context();
    const size_t before = ws.store.runs().size();
    std::string problems;
    for (const std::string& path : options.openFiles) {
        windows.files.open(ctx, path);
        if (ws.statusIsError) {
            std::fprintf(stderr, "lmprof: --open: %s\n", ws.status.c_str());
            problems += (problems.empty() ? "" : "; ") + ws.status;
        }
    }
    // Every run opened is selected, overlaid in the charts.
    const size_t opened = ws.store.runs().size() - before;
    ws.store.selectLast(opened);
    ctx.report(problems.empty() ? "opened " + std::to_string(opened) + " run(s), shown together"
                                : problems,
               !problems.empty());
}

void DemoPlayer::checkTargets() {
    if (!m_options.demo) {
        return;
    }
    for (size_t i = 0; i < m_options.demo->steps.size() && !m_failed; ++i) {
        const DemoStep& step = m_options.demo->steps[i];
        const std::string where = "steps[" + std::to_string(i) + "]";
        if (step.kind == DemoStep::Kind::Show && !m_windows.isWindow(step.target)) {
            fail(where + ".window",
                 "'" + step.target + "' is not a window (" + m_windows.windowTitles() + ")");
        } else if (step.kind == DemoStep::Kind::SaveChart && !m_windows.findChart(step.target)) {
            fail(where + ".chart",
                 "'" + step.target + "' is not a chart (" + m_windows.chartNames() + ")");
        }
    }
}

void DemoPlayer::fail(const std::string& where, const std::string& why) {
    m_failed = true;
    m_ws.report("demo stopped at " + where + ": " + why, true);
    std::fprintf(stderr, "lmprof: --demo: %s\n", m_ws.status.c_str());
}

void DemoPlayer::play() {
    // Instant steps (configure, select, ...) run back to back in one frame; a step that
    // waits returns false and is asked again next frame.
    while (playing()) {
        const DemoStep& step = m_options.demo->steps[m_step];
        const bool firstFrame = m_stepStartS < 0.0;
        if (firstFrame) {
            m_stepStartS = clockS;
        }
        const std::string where = "steps[" + std::to_string(m_step) + "]";
        if (!playStep(step, where, firstFrame)) {
            return;
        }
        ++m_step;
        m_stepStartS = -1.0;
    }
}

// The form's configuration with the step's patch, validated; nullopt after failing the demo.
std::optional<RunConfig> DemoPlayer::demoConfig(const DemoStep& step, const std::string& where) {
    try {
        RunConfig c = step.patch.empty()
                          ? m_ws.form.config()
                          : patchConfig(m_ws.form.config(), step.patch, where + ".config");
        m_ws.form.followWarmup(c, step.patch); // a changed warmup moves the steps not picked
        if (const auto errors = validate(c); !errors.empty()) {
            fail(where + ".config", errors.front().message());
            return std::nullopt;
        }
        return c;
    } catch (const std::exception& e) {
        fail(where, e.what());
        return std::nullopt;
    }
}

bool DemoPlayer::playRun(ViewContext& ctx, const DemoStep& step, const std::string& where) {
    const auto c = demoConfig(step, where);
    if (!c) {
        return true;
    }
    m_ws.form.config() = *c;
    if (m_ws.session().busy()) {
        return false; // the Run button waits for the previous run too
    }
    m_runIndex = submitRun(ctx, *c);
    if (m_runIndex < 0) {
        fail(where, m_ws.status);
    }
    return true;
}

bool DemoPlayer::playSweep(ViewContext& ctx, const DemoStep& step, const std::string& where) {
    if (m_ws.session().busy() || m_windows.sweep.running()) {
        return false;
    }
    SweepSpec spec;
    spec.base = m_ws.form.config();
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
    spec.values = step.values;
    std::vector<RunConfig> configs = expandSweep(spec);
    for (const RunConfig& c : configs) {
        if (const auto errors = validate(c); !errors.empty()) {
            fail(where, runLabel(c) + ": " + errors.front().message());
            return true;
        }
    }
    m_windows.sweep.start(ctx, std::move(configs));
    return true;
}

bool DemoPlayer::playWait(const DemoStep& step, const std::string& where, double elapsed) {
    bool done = false;
    if (step.target == "run") {
        // A run step came before (parseDemoScript checks it) and started, or the demo
        // stopped there: m_runIndex is the run's.
        const RunView* v = m_ws.store.findBySessionIndex(m_runIndex);
        done = v && v->finished;
    } else if (step.target == "open") {
        done = !m_windows.files.opening();
    } else if (step.target == "script") {
        // The window watches a script (lmprof -- python train.py): its run has ended.
        const auto& runs = m_ws.store.runs();
        done = std::any_of(runs.begin(), runs.end(), [](const RunView& r) {
            return r.finished && r.result.source.has_value();
        });
    } else if (step.target == "engine") {
        done = m_ws.session().info().connected; // a server that was not up yet (--connect)
    } else if (step.target == "study") {
        done = !m_windows.study.busy();
        if (done && !m_windows.study.message().empty()) {
            fail(where, "the study stopped: " + m_windows.study.message());
            return true;
        }
    } else {
        done = !m_windows.sweep.running() && !m_ws.session().busy();
    }
    if (!done && elapsed > step.seconds) {
        fail(where, "still waiting after " + formatFixed(step.seconds, 0) + " s");
        return true;
    }
    return done;
}

void DemoPlayer::playSelect(const DemoStep& step, const std::string& where) {
    const int count = static_cast<int>(m_ws.store.runs().size());
    std::vector<int> chosen;
    if (step.last > 0) {
        if (step.last > count) {
            fail(where + ".last", "there are " + std::to_string(count) + " run(s)");
            return;
        }
        for (int i = count - step.last; i < count; ++i) {
            chosen.push_back(i);
        }
    }
    for (int number : step.runs) {
        if (number > count) {
            fail(where + ".runs", "there is no run " + std::to_string(number) + " (" +
                                      std::to_string(count) + " run(s))");
            return;
        }
        chosen.push_back(number - 1);
    }
    m_ws.store.selection() = chosen;
}

bool DemoPlayer::playSaveChart(const DemoStep& step, const std::string& where, bool firstFrame) {
    if (firstFrame) {
        PngRequest request = m_exports.request(step.target, step.path);
        request.origin = PngRequest::Origin::Demo;
        m_exports.demoError.clear();
        m_exports.requests.push_back(request);
        return false;
    }
    if (!m_exports.requests.empty()) {
        return false;
    }
    if (!m_exports.demoError.empty()) {
        fail(where, m_exports.demoError);
    }
    return true;
}

bool DemoPlayer::playStep(const DemoStep& step, const std::string& where, bool firstFrame) {
    using Kind = DemoStep::Kind;
    ViewContext ctx = m_context();
    const double elapsed = clockS - m_stepStartS;
    switch (step.kind) {
    case Kind::Configure:
        if (const auto c = demoConfig(step, where)) {
            m_ws.form.config() = *c;
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
    case Kind::Verdict:
        return playVerdict(step, where, firstFrame);
    case Kind::Pause:
        return elapsed >= step.seconds;
    case Kind::Cancel:
        cancelRun(ctx);
        return true;
    case Kind::SaveChart:
        return playSaveChart(step, where, firstFrame);
    case Kind::Caption:
        m_caption = step.text;
        return true;
    case Kind::Screenshot:
        // Taken after this frame renders (afterRender), before the next step.
        if (firstFrame) {
            m_screenshot.path = step.path;
            m_screenshot.requested = true;
            return false;
        }
        return !m_screenshot.requested;
    case Kind::Layout:
        try {
            m_windows.writeLayoutReport(step.path, m_ws.verdictMark, m_ws.store.selectedIds());
        } catch (const std::exception& e) {
            fail(where, e.what());
        }
        return true;
    case Kind::Theme:
        m_ws.themeOverride = step.target == "dark";
        applyTheme(*m_ws.themeOverride, ImGui::GetStyle().FontScaleDpi);
        return true;
    case Kind::Open:
        if (m_windows.files.opening()) {
            return false; // one file at a time, as the menu
        }
        m_windows.files.openInBackground(ctx, step.path);
        return true;
    case Kind::Study:
        if (m_ws.session().busy() || m_windows.sweep.running() || m_windows.study.busy()) {
            return false; // as the Plan button, it waits for the engine
        }
        m_windows.study.start(ctx, step.target, step.text);
        if (!m_windows.study.busy()) {
            fail(where, m_windows.study.message());
        }
        return true;
    }
    return true;
}

void DemoPlayer::drawCaption() const {
    if (m_caption.empty()) {
        return;
    }
    // A banner across the bottom of the window, above everything, for recorded demos.
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float pad = ImGui::GetFontSize() * 0.8f;
    const float wrap = vp->WorkSize.x * 0.7f;
    const ImVec2 size = ImGui::CalcTextSize(m_caption.c_str(), nullptr, false, wrap);
    const ImVec2 box(size.x + 2 * pad, size.y + 2 * pad);
    const ImVec2 at(vp->WorkPos.x + (vp->WorkSize.x - box.x) / 2.0f,
                    vp->WorkPos.y + vp->WorkSize.y - box.y - pad * 2.0f);
    ImDrawList* draw = ImGui::GetForegroundDrawList();
    draw->AddRectFilled(at, ImVec2(at.x + box.x, at.y + box.y), IM_COL32(20, 20, 28, 225),
                        pad * 0.6f);
    draw->AddText(nullptr, 0.0f, ImVec2(at.x + pad, at.y + pad), IM_COL32(255, 255, 255, 255),
                  m_caption.c_str(), nullptr, wrap);
}

// As a click on the chip: its steps marked, and its chart's window brought forward on the
// next frame (one window per frame, as Show).
bool DemoPlayer::playVerdict(const DemoStep& step, const std::string& where, bool firstFrame) {
    if (!firstFrame) {
        return true;
    }
    const std::optional<std::string> window =
        m_windows.verdicts.select(step.target, m_ws.store, m_ws.verdictMark);
    if (!window) {
        fail(where, "the verdict strip has no '" + step.target +
                        "' verdict with a chart (it shows: " +
                        m_windows.verdicts.kindsShown(m_ws.store) + ")");
        return true;
    }
    m_windows.show(*window);
    return false;
}

} // namespace lmprof::ui
