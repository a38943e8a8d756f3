// An OpenGL 3.3 core context with no window and no display server, through EGL: the
// context a chart is drawn in on a server (study_charts.h). Rendering goes to framebuffer
// objects; the context has no default framebuffer.
#pragma once

#include <string>

namespace lmprof::ui {

class HeadlessGl {
public:
    // Made current on this thread. Tries each EGL device (a GPU driver's, or Mesa's
    // software device), then Mesa's surfaceless platform. Throws std::runtime_error naming
    // what each attempt lacked.
    HeadlessGl();
    ~HeadlessGl();
    HeadlessGl(const HeadlessGl&) = delete;
    HeadlessGl& operator=(const HeadlessGl&) = delete;

    // "NVIDIA Corporation, NVIDIA H100 ... (EGL device)": who draws.
    const std::string& renderer() const { return m_renderer; }

private:
    void* m_display = nullptr; // EGLDisplay
    void* m_context = nullptr; // EGLContext
    std::string m_renderer;
};

} // namespace lmprof::ui
