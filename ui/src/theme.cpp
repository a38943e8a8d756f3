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

ImVec4 rgb(int hex, float alpha = 1.0f) {
    return ImVec4(static_cast<float>((hex >> 16) & 0xff) / 255.0f,
                  static_cast<float>((hex >> 8) & 0xff) / 255.0f,
                  static_cast<float>(hex & 0xff) / 255.0f, alpha);
}

// Meaningful colours per theme: the light theme's are darker so text stays readable on
// its near-white background.
const Palette kDarkPalette{
    rgb(0xF25A4D),       // error
    rgb(0xEB9E33),       // warning
    rgb(0x66CC66),       // ok
    rgb(0xCCCC66),       // skipped
    rgb(0x66B3FF),       // live
    rgb(0xE64D4D),       // peak
    rgb(0xE64040, 0.5f), // throttle
    rgb(0x991A1A, 0.45f) // regression
};
const Palette kLightPalette{
    rgb(0xC0281C),       // error
    rgb(0xA65E00),       // warning
    rgb(0x1E7A1E),       // ok
    rgb(0x7A7A00),       // skipped
    rgb(0x1F5FBF),       // live
    rgb(0xC02020),       // peak
    rgb(0xE64040, 0.5f), // throttle
    rgb(0xE08080, 0.45f) // regression
};

bool g_dark = true;
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

bool paletteIsDark() {
    return g_dark;
}

void usePalette(bool dark) {
    g_dark = dark;
}

void applyTheme(bool dark, float contentScale) {
    g_dark = dark;
    ImGuiStyle& style = ImGui::GetStyle();
    const float fontScale = style.FontScaleDpi;
    const float fontMain = style.FontScaleMain; // --font-scale
    const float fontBase = style.FontSizeBase;
    style = ImGuiStyle();
    if (dark) {
        ImGui::StyleColorsDark(&style);
        ImPlot::StyleColorsDark();
    } else {
        ImGui::StyleColorsLight(&style);
        ImPlot::StyleColorsLight();
    }
    // Progress bars fill with PlotHistogram; ImGui's default (yellow on the dark theme)
    // leaves the white progress text unreadable. A blue with white text reads on both.
    style.Colors[ImGuiCol_PlotHistogram] = dark ? rgb(0x2F6DB5) : rgb(0x5B9BE0);
    style.Colors[ImGuiCol_PlotHistogramHovered] = dark ? rgb(0x3F85D6) : rgb(0x3F85D6);
    style.WindowRounding = 4.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.WindowPadding = ImVec2(10, 8);
    style.FramePadding = ImVec2(6, 4);
    style.ItemSpacing = ImVec2(8, 6);
    style.ScaleAllSizes(contentScale * fontMain); // paddings grow with the text
    style.FontScaleMain = fontMain;
    style.FontScaleDpi = fontScale;
    style.FontSizeBase = fontBase;
}

const Palette& palette() {
    return g_dark ? kDarkPalette : kLightPalette;
}

ImVec4 runColor(int index) {
    // Okabe & Ito (2008), "Color Universal Design": orange, sky blue, bluish green, yellow,
    // blue, vermillion, reddish purple; then grey. Yellow is darkened on the light theme.
    static const int kColors[kRunColorCount] = {0xE69F00, 0x56B4E9, 0x009E73, 0xF0E442,
                                                0x0072B2, 0xD55E00, 0xCC79A7, 0x999999};
    const int i = ((index % kRunColorCount) + kRunColorCount) % kRunColorCount;
    if (!g_dark && kColors[i] == 0xF0E442) {
        return rgb(0xB8A600);
    }
    if (i == kRunColorCount - 1) {
        return g_dark ? rgb(0xBBBBBB) : rgb(0x666666);
    }
    return rgb(kColors[i]);
}

ImVec4 phaseColor(engine::Phase phase) {
    // Pale tones apart from the saturated run colours: cyan, rose, sand (Paul Tol's "muted").
    switch (phase) {
    case engine::Phase::Forward:
        return g_dark ? rgb(0x88CCEE) : rgb(0x3A8DB8);
    case engine::Phase::Backward:
        return g_dark ? rgb(0xCC6677) : rgb(0xB03A50);
    case engine::Phase::Optimizer:
        return g_dark ? rgb(0xDDCC77) : rgb(0x8C7A1E);
    }
    return rgb(0x888888);
}

ImVec4 seriesColor(int index) {
    static const int kDark[] = {0xAAAAAA, 0x9988DD, 0x99AA55};
    static const int kLight[] = {0x707070, 0x4B3C9E, 0x6B7A22};
    const int i = ((index % 3) + 3) % 3;
    return rgb(g_dark ? kDark[i] : kLight[i]);
}

ImVec4 withAlpha(ImVec4 c, float alpha) {
    c.w = alpha;
    return c;
}

} // namespace lmprof::ui
