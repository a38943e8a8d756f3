// Theme and fonts (see theme.h).

#include "theme.h"

#include <filesystem>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

namespace {
constexpr float kBaseFontSize = 15.0f;
const char* const kFontCandidates[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
};
} // namespace

void loadFonts(float contentScale) {
    ImGuiIO& io = ImGui::GetIO();
    ImGuiStyle& style = ImGui::GetStyle();
    style.FontSizeBase = kBaseFontSize;
    style.FontScaleDpi = contentScale;
    for (const char* path : kFontCandidates) {
        if (std::filesystem::exists(path) && io.Fonts->AddFontFromFileTTF(path, kBaseFontSize)) {
            return;
        }
    }
    io.Fonts->AddFontDefault();
}

void applyTheme(bool dark, float contentScale) {
    ImGuiStyle& style = ImGui::GetStyle();
    const float fontScale = style.FontScaleDpi;
    const float fontBase = style.FontSizeBase;
    style = ImGuiStyle();
    if (dark) {
        ImGui::StyleColorsDark(&style);
        ImPlot::StyleColorsDark();
    } else {
        ImGui::StyleColorsLight(&style);
        ImPlot::StyleColorsLight();
    }
    style.WindowRounding = 4.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.WindowPadding = ImVec2(10, 8);
    style.FramePadding = ImVec2(6, 4);
    style.ItemSpacing = ImVec2(8, 6);
    style.ScaleAllSizes(contentScale);
    style.FontScaleDpi = fontScale;
    style.FontSizeBase = fontBase;
}

const Palette& palette() {
    static const Palette p{
        ImVec4(0.95f, 0.35f, 0.30f, 1.0f), // error
        ImVec4(0.92f, 0.62f, 0.20f, 1.0f), // warning
        ImVec4(0.40f, 0.80f, 0.40f, 1.0f), // ok
        ImVec4(0.80f, 0.80f, 0.40f, 1.0f), // skipped
        ImVec4(0.40f, 0.70f, 1.00f, 1.0f), // live
        ImVec4(0.90f, 0.30f, 0.30f, 1.0f), // peak
        ImVec4(0.90f, 0.25f, 0.25f, 0.5f), // throttle
        ImVec4(0.60f, 0.10f, 0.10f, 0.45f) // regression
    };
    return p;
}

} // namespace lmprof::ui
