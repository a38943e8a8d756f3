// The file dialog's icons are textures of the window's OpenGL context (file_pick.h), and a
// study draws its charts in that context too (OffscreenCharts, chart_export.h). After the
// charts, an icon made before still holds its pixels and one made after reads as given:
// the charts leave no texture or pixel-store state behind that would show the dialog's
// icons as garbage (issue 60). Real ImGui, ImPlot and OpenGL 3.3, without a display.

#include "chart_export.h"
#include "headless_gl.h"
#include "views/file_pick.h"

#include <GL/gl.h>
#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>
#include <unistd.h>
#include <vector>

using namespace lmprof;

namespace {

// An icon 17 × 13 pixels, RGBA, no two rows of which are alike: a row of 68 bytes is
// misread under any unpack alignment but 1, 2 and 4, or a row length left set.
constexpr int kWidth = 17;
constexpr int kHeight = 13;
std::vector<uint8_t> pattern() {
    std::vector<uint8_t> pixels(kWidth * kHeight * 4);
    for (size_t i = 0; i < pixels.size(); ++i) {
        pixels[i] = static_cast<uint8_t>((i * 7 + i / 128) % 251);
    }
    return pixels;
}

std::vector<uint8_t> pixelsOf(ImTextureID texture) {
    std::vector<uint8_t> pixels(kWidth * kHeight * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1); // read back whatever the charts left
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture));
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    return pixels;
}

// One frame of the window's own context, rendered as the window renders it.
void windowFrame() {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    ImGui::Begin("window");
    ImGui::TextUnformatted("a frame of the window");
    ImGui::End();
    ImGui::Render();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

} // namespace

TEST(FileDialogIcons, AStudysChartsLeaveTheWindowsTexturesAlone) {
    const ui::HeadlessGl gl;
    ImGuiContext* window = ImGui::CreateContext();
    ImPlotContext* plots = ImPlot::CreateContext();
    ImGui::GetIO().DisplaySize = ImVec2(800, 600);
    ImGui::GetIO().IniFilename = nullptr;
    ASSERT_TRUE(ImGui_ImplOpenGL3_Init("#version 330"));
    windowFrame();
    const std::vector<uint8_t> icon = pattern();
    const ImTextureID before = ui::fileDialogTexture(icon.data(), kWidth, kHeight, 1);
    ASSERT_EQ(pixelsOf(before), icon);

    const auto png = std::filesystem::temp_directory_path() /
                     ("lmprof-dialog-textures-" + std::to_string(getpid()) + ".png");
    {
        ui::OffscreenCharts charts(false, 1.0f);
        for (int i = 0; i < 2; ++i) { // two charts of the study, of two sizes
            charts.render(png, 320 + 80 * i, 200, false, "a study's chart", "its runs", [] {
                if (ImPlot::BeginPlot("chart", ImVec2(-1, -1))) {
                    const double x[3] = {0, 1, 2};
                    const double y[3] = {3, 1, 2};
                    ImPlot::PlotLine("times", x, y, 3);
                    ImPlot::EndPlot();
                }
            });
        }
    }
    std::filesystem::remove(png);
    windowFrame();

    EXPECT_EQ(pixelsOf(before), icon) << "an icon made before the charts was overwritten";
    const ImTextureID after = ui::fileDialogTexture(icon.data(), kWidth, kHeight, 1);
    EXPECT_EQ(pixelsOf(after), icon) << "an icon made after the charts reads otherwise";
    std::vector<uint8_t> bgra = icon; // the dialog's own icons come as BGRA
    for (size_t i = 0; i < bgra.size(); i += 4) {
        std::swap(bgra[i], bgra[i + 2]);
    }
    const ImTextureID swapped = ui::fileDialogTexture(bgra.data(), kWidth, kHeight, 0);
    EXPECT_EQ(pixelsOf(swapped), icon);

    for (const ImTextureID t : {before, after, swapped}) {
        ui::deleteFileDialogTexture(t);
    }
    ImGui_ImplOpenGL3_Shutdown();
    ImPlot::DestroyContext(plots);
    ImGui::DestroyContext(window);
}
