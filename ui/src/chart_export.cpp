// OffscreenCharts (see chart_export.h).

#define GL_GLEXT_PROTOTYPES 1
#include "chart_export.h"

#include "lmprof/engine/config.h"
#include "lmprof/ui/app.h"
#include "lmprof/ui/run_store.h"
#include "theme.h"
#include "views/chart_book.h"
#include "views/plot_helpers.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <algorithm>
#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>
#include <implot.h>
#include <stdexcept>
#include <vector>

namespace lmprof::ui {

using engine::RunResult;

namespace {

// Makes the export contexts current for a scope and puts the window's back after it.
class ContextSwitch {
public:
    ContextSwitch(ImGuiContext* imgui, ImPlotContext* implot)
        : m_imgui(ImGui::GetCurrentContext()), m_implot(ImPlot::GetCurrentContext()) {
        ImGui::SetCurrentContext(imgui);
        ImPlot::SetCurrentContext(implot);
    }
    ~ContextSwitch() {
        ImGui::SetCurrentContext(m_imgui);
        ImPlot::SetCurrentContext(m_implot);
    }
    ContextSwitch(const ContextSwitch&) = delete;
    ContextSwitch& operator=(const ContextSwitch&) = delete;

private:
    ImGuiContext* m_imgui;
    ImPlotContext* m_implot;
};

} // namespace

std::string chartRunsLine(const std::vector<RunView*>& runs) {
    if (runs.size() == 1) {
        const RunResult& r = runs.front()->result;
        if (r.source) {
            return r.id + " (" + engine::runModelLabel(r) + ", " +
                   std::to_string(r.config.measureSteps) + " measured steps on " +
                   r.source->device + ")";
        }
        return r.id + " (batch " + std::to_string(r.config.batchSize) + ", " +
               std::to_string(r.config.measureSteps) + " measured steps on " +
               (r.resolvedDevice.empty() ? r.config.device : r.resolvedDevice) + ")";
    }
    if (runs.empty()) {
        return "no run selected";
    }
    // A few runs by name; more are counted. Not "named in the legend": a chart too narrow
    // for its legend hides it (plot::setupLegendOf), and says so itself.
    constexpr size_t kNamed = 3;
    const size_t named = runs.size() <= kNamed + 1 ? runs.size() : kNamed;
    std::string line;
    for (size_t i = 0; i < named; ++i) {
        line += (line.empty() ? "" : " / ") + plot::legendName(*runs[i]);
    }
    if (named < runs.size()) {
        line += " and " + std::to_string(runs.size() - named) + " more";
    }
    const bool oneModel = std::all_of(runs.begin(), runs.end(), [&](const RunView* r) {
        return engine::runModelLabel(r->result) == engine::runModelLabel(runs.front()->result);
    });
    return std::to_string(runs.size()) + " runs" +
           (oneModel ? " of " + engine::runModelLabel(runs.front()->result) : std::string()) +
           ": " + line;
}

OffscreenCharts::OffscreenCharts(bool dark, float fontScale) : m_dark(dark) {
    ImGuiContext* window = ImGui::GetCurrentContext();
    ImPlotContext* windowPlot = ImPlot::GetCurrentContext();
    m_imgui = ImGui::CreateContext();
    m_implot = ImPlot::CreateContext(); // becomes current
    ImGui::SetCurrentContext(window);
    ImPlot::SetCurrentContext(windowPlot);
    const bool windowPalette = paletteIsDark();
    ContextSwitch use(m_imgui, m_implot);
    ChartBook::current().drawsForFile = true; // its charts' axes show what the window shows
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    loadFonts(1.0f);
    ImGui::GetStyle().FontScaleMain = fontScale;
    applyTheme(dark, 1.0f);
    usePalette(windowPalette);
    if (!ImGui_ImplOpenGL3_Init("#version 330")) { // before it holds anything
        ImPlot::DestroyContext(m_implot);
        ImGui::DestroyContext(m_imgui);
        throw std::runtime_error("the OpenGL 3.3 renderer could not start (no OpenGL loaded)");
    }
}

OffscreenCharts::~OffscreenCharts() {
    {
        ContextSwitch use(m_imgui, m_implot);
        ImGui_ImplOpenGL3_Shutdown();
    }
    if (m_framebuffer) {
        glDeleteFramebuffers(1, &m_framebuffer);
        glDeleteTextures(1, &m_color);
    }
    ImPlot::DestroyContext(m_implot);
    ImGuiContext* window = ImGui::GetCurrentContext();
    ImGui::DestroyContext(m_imgui);
    ImGui::SetCurrentContext(window);
}

bool OffscreenCharts::sizeFramebuffer(int width, int height) {
    if (m_framebuffer && width == m_width && height == m_height) {
        return true;
    }
    if (m_framebuffer) {
        glDeleteFramebuffers(1, &m_framebuffer);
        glDeleteTextures(1, &m_color);
    }
    glGenTextures(1, &m_color);
    glBindTexture(GL_TEXTURE_2D, m_color);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    glGenFramebuffers(1, &m_framebuffer);
    glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_color, 0);
    const GLenum state = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    m_width = state == GL_FRAMEBUFFER_COMPLETE ? width : 0; // an incomplete one is made again
    m_height = state == GL_FRAMEBUFFER_COMPLETE ? height : 0;
    return state == GL_FRAMEBUFFER_COMPLETE;
}

void OffscreenCharts::render(const std::filesystem::path& path, int width, int height, bool dark,
                             const std::string& title, const std::string& subtitle,
                             const std::function<void()>& chart) {
    const auto fail = [&](const std::string& why) {
        throw std::runtime_error("cannot save " + path.string() + ": " + why);
    };
    if (width <= 0 || height <= 0) {
        fail("the chart has no size");
    }
    if (!sizeFramebuffer(width, height)) {
        fail("no offscreen framebuffer of " + std::to_string(width) + "x" + std::to_string(height));
    }
    const bool themeChanged = dark != m_dark;
    // The window's palette (run colours, phases, warnings) is its own again afterwards.
    struct RestorePalette {
        bool dark = paletteIsDark();
        ~RestorePalette() { usePalette(dark); }
    } restorePalette;
    ContextSwitch use(m_imgui, m_implot);
    if (themeChanged) {
        applyTheme(dark, 1.0f);
        m_dark = dark;
    }
    usePalette(dark);
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
    io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
    io.DeltaTime = 1.0f / 60.0f;
    // Whatever happens below, the window draws into its own framebuffer again afterwards.
    // (A headless context has no default framebuffer: its read buffer is GL_NONE.)
    struct RestoreWindowTarget {
        GLint viewport[4];
        GLint readBuffer = GL_BACK;
        RestoreWindowTarget() {
            glGetIntegerv(GL_VIEWPORT, viewport);
            glGetIntegerv(GL_READ_BUFFER, &readBuffer);
        }
        ~RestoreWindowTarget() {
            glBindFramebuffer(GL_FRAMEBUFFER, 0);
            glReadBuffer(static_cast<GLenum>(readBuffer));
            glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
        }
    } restore;
    try {
        drawFrames(width, height, title, subtitle, chart);
    } catch (const std::exception& e) {
        if (ImGui::GetCurrentContext()->WithinFrameScope) {
            ImGui::EndFrame(); // the next export starts a frame of its own
        }
        fail(std::string("drawing the chart failed: ") + e.what());
    }
    while (glGetError() != GL_NO_ERROR) {
        // errors left from the window's own frame are not this read's
    }
    std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    if (glGetError() != GL_NO_ERROR) {
        fail("reading the offscreen framebuffer failed");
    }
    writeGlPixelsPng(path, width, height, pixels);
}

void OffscreenCharts::drawFrames(int width, int height, const std::string& title,
                                 const std::string& subtitle, const std::function<void()>& chart) {
    ImGuiIO& io = ImGui::GetIO();
    for (int frame = 0; frame < 2; ++frame) {
        ImGui_ImplOpenGL3_NewFrame();
        ImGui::NewFrame();
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(io.DisplaySize);
        ImGui::Begin("##chart", nullptr,
                     ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings |
                         ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoScrollWithMouse);
        ImGui::PushFont(nullptr, ImGui::GetStyle().FontSizeBase * 1.3f);
        ImGui::TextUnformatted(title.c_str());
        ImGui::PopFont();
        if (!subtitle.empty()) { // wrapped: overlaid runs' names can be long
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("%s", subtitle.c_str());
            ImGui::PopStyleColor();
        }
        chart();
        ImGui::End();
        ImGui::Render();
        glBindFramebuffer(GL_FRAMEBUFFER, m_framebuffer);
        glViewport(0, 0, width, height);
        const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
        glClearColor(bg.x, bg.y, bg.z, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    }
}

} // namespace lmprof::ui
