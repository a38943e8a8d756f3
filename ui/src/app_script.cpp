// The scripted side of App: tracking the --autorun run, --export-plots and PNG requests
// (Save PNG, F12, --screenshot) taken after a frame is rendered, and --frame-stats.

#include "app_impl.h"
#include "lmprof/engine/result_io.h"

#include <ctime>
#include <imgui.h>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {
// lmprof-<stem>-<unix time>.png in the working directory.
std::filesystem::path timestampedPng(const std::string& stem) {
    return "lmprof-" + stem + "-" + std::to_string(std::time(nullptr)) + ".png";
}
} // namespace

void App::Impl::trackAutorun() {
    if (autorunIndex < 0 || autorunAnswered) {
        return;
    }
    if (const RunView* v = store.findBySessionIndex(autorunIndex); v && v->finished) {
        autorunAnswered = true;
        autorunOk = v->result.status == RunStatus::Ok; // the status line says it (frame())
    }
}

void App::Impl::queueExports() {
    exportsQueued = true;
    for (const std::string& stem : options.exportPlots) {
        const auto it = plotRects.find(stem);
        if (it == plotRects.end()) {
            // Its window is hidden behind another tab, or no chart has that name.
            std::fprintf(stderr, "lmprof: --export-plots: no chart '%s' was drawn\n", stem.c_str());
            exportsOk = false;
            continue;
        }
        PngRequest request = it->second;
        request.framesToWait = 1;
        request.path = (options.exportDir / (stem + ".png")).string();
        pngRequests.push_back(request);
    }
}

bool App::pngPending() const {
    return !m_impl->pngRequests.empty() ||
           (!m_impl->options.exportPlots.empty() && !m_impl->exportsQueued);
}

bool App::animating() const {
    const Impl& s = *m_impl;
    return s.session.busy() || s.sweepView.running() || !autorunSettled() || pngPending() ||
           s.demoPlaying() || s.screenshotRequested ||
           s.frameNumber < static_cast<int>(s.options.showWindows.size()) + kSettleFrames;
}

bool App::exportsSucceeded() const {
    return m_impl->exportsOk;
}

void App::afterRender(int fbWidth, int fbHeight) {
    auto& requests = m_impl->pngRequests;
    const ImGuiIO& io = ImGui::GetIO();
    const float scaleX = io.DisplaySize.x > 0 ? fbWidth / io.DisplaySize.x : 1.0f;
    const float scaleY = io.DisplaySize.y > 0 ? fbHeight / io.DisplaySize.y : 1.0f;
    for (auto it = requests.begin(); it != requests.end();) {
        if (--it->framesToWait > 0) {
            ++it;
            continue;
        }
        const int x = static_cast<int>(it->x * scaleX);
        const int w = static_cast<int>(it->width * scaleX);
        const int h = static_cast<int>(it->height * scaleY);
        const int y = fbHeight - static_cast<int>(it->y * scaleY) - h; // OpenGL counts from below
        const std::filesystem::path path = std::filesystem::absolute(
            !it->path.empty() ? std::filesystem::path(it->path) : timestampedPng(it->fileStem));
        try {
            writeFramebufferRegionPng(path, x, y, w, h);
            setStatus("plot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            m_impl->exportsOk = false;
            setStatus(e.what(), true);
        }
        it = requests.erase(it);
    }
    if (std::exchange(m_impl->screenshotRequested, false)) {
        const std::filesystem::path path = std::filesystem::absolute(timestampedPng("screenshot"));
        try {
            writeFramebufferPng(path, fbWidth, fbHeight);
            setStatus("screenshot saved to " + path.string(), false);
        } catch (const std::exception& e) {
            setStatus(e.what(), true);
        }
    }
}

bool App::autorunSettled() const {
    return !m_impl->options.autorun ||
           (m_impl->autorunAnswered && m_impl->framesSinceAnswer >= kSettleFrames);
}

bool App::autorunSucceeded() const {
    return m_impl->autorunOk;
}

void App::recordFrameTime(double uiMs, double ms) {
    size_t held = 0;
    for (const auto& r : m_impl->store.runs()) {
        held += r.result.steps.size();
    }
    m_impl->frames.push_back({uiMs, ms, held, m_impl->store.active() != nullptr});
}

void App::writeFrameStats(const std::filesystem::path& path) const {
    nlohmann::json frames = nlohmann::json::array();
    for (const auto& f : m_impl->frames) {
        frames.push_back(
            {{"ui_ms", f.uiMs}, {"ms", f.ms}, {"steps_held", f.stepsHeld}, {"running", f.running}});
    }
    writeFileAtomic(path, nlohmann::json{{"frames", frames}}.dump() + "\n");
}

} // namespace lmprof::ui
