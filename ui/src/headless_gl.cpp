// HeadlessGl (see headless_gl.h). EGL 1.5 with three extensions looked up at run time:
// EGL_EXT_device_enumeration / EGL_EXT_platform_device (a display per GPU, and Mesa's
// software device) and EGL_MESA_platform_surfaceless; EGL_KHR_surfaceless_context lets the
// context be current with no surface at all.

#include "headless_gl.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <stdexcept>
#include <vector>

namespace lmprof::ui {

namespace {

std::string eglErrorName(EGLint code) {
    switch (code) {
    case EGL_NOT_INITIALIZED:
        return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
        return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
        return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
        return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG:
        return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT:
        return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY:
        return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
        return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER:
        return "EGL_BAD_PARAMETER";
    default:
        return "EGL error " + std::to_string(code);
    }
}

// A 3.3 core context current on `display`, or null with `why` saying what failed.
EGLContext makeContext(EGLDisplay display, std::string& why) {
    EGLint major = 0, minor = 0;
    if (!eglInitialize(display, &major, &minor)) {
        why = "eglInitialize: " + eglErrorName(eglGetError());
        return EGL_NO_CONTEXT;
    }
    const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
    if (!extensions ||
        std::string(extensions).find("EGL_KHR_surfaceless_context") == std::string::npos) {
        why = "no EGL_KHR_surfaceless_context";
        eglTerminate(display);
        return EGL_NO_CONTEXT;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        why = "no desktop OpenGL (eglBindAPI: " + eglErrorName(eglGetError()) + ")";
        eglTerminate(display);
        return EGL_NO_CONTEXT;
    }
    // Any config that renders desktop OpenGL; the surface type does not matter (none is made).
    const EGLint configAttributes[] = {EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                       EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    if (!eglChooseConfig(display, configAttributes, &config, 1, &configs) || configs < 1) {
        config = nullptr; // EGL_KHR_no_config_context: a context without one
    }
    const EGLint contextAttributes[] = {EGL_CONTEXT_MAJOR_VERSION,
                                        3,
                                        EGL_CONTEXT_MINOR_VERSION,
                                        3,
                                        EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                        EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                        EGL_NONE};
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttributes);
    if (context == EGL_NO_CONTEXT) {
        why = "no OpenGL 3.3 core context (eglCreateContext: " + eglErrorName(eglGetError()) + ")";
        eglTerminate(display);
        return EGL_NO_CONTEXT;
    }
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        why = "eglMakeCurrent: " + eglErrorName(eglGetError());
        eglDestroyContext(display, context);
        eglTerminate(display);
        return EGL_NO_CONTEXT;
    }
    return context;
}

template <typename F>
F lookUp(const char* name) {
    return reinterpret_cast<F>(eglGetProcAddress(name));
}

} // namespace

HeadlessGl::HeadlessGl() {
    std::string tried;
    const auto attempt = [&](EGLDisplay display, const std::string& what) {
        if (display == EGL_NO_DISPLAY) {
            tried += (tried.empty() ? "" : "; ") + what + ": no display";
            return false;
        }
        std::string why;
        EGLContext context = makeContext(display, why);
        if (context == EGL_NO_CONTEXT) {
            tried += (tried.empty() ? "" : "; ") + what + ": " + why;
            return false;
        }
        m_display = display;
        m_context = context;
        const auto* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
        const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
        m_renderer = std::string(vendor ? vendor : "?") + ", " + (renderer ? renderer : "?") +
                     " (" + what + ")";
        return true;
    };

    const auto getPlatformDisplay =
        lookUp<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT");
    const auto queryDevices = lookUp<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT");
    if (!getPlatformDisplay) {
        throw std::runtime_error(
            "no headless OpenGL: EGL has no eglGetPlatformDisplayEXT (is libEGL.so.1 and a "
            "vendor library, a GPU driver's or Mesa's, installed?)");
    }
    // Each device: a GPU's driver renders on the GPU; Mesa lists a software device last.
    if (queryDevices) {
        EGLint count = 0;
        if (queryDevices(0, nullptr, &count) && count > 0) {
            std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
            queryDevices(count, devices.data(), &count);
            for (EGLint i = 0; i < count; ++i) {
                if (attempt(getPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr),
                            "EGL device " + std::to_string(i))) {
                    return;
                }
            }
        } else {
            tried = "EGL lists no device";
        }
    }
    if (attempt(getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr),
                "Mesa surfaceless")) {
        return;
    }
    throw std::runtime_error("no headless OpenGL context (" + tried +
                             "): it needs a GPU driver's EGL or Mesa's (Debian: libegl-mesa0)");
}

HeadlessGl::~HeadlessGl() {
    eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(m_display, m_context);
    eglTerminate(m_display);
    eglReleaseThread(); // this thread's EGL state
}

} // namespace lmprof::ui
