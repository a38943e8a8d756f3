// Configure draws a widget for each plain configuration field of a section, from its
// declaration (ValueField, config.h): a throwaway field gets one more row in its section, in
// a real ImGui frame without a display (tests/engine/throwaway_field.h).

#include "throwaway_field.h"
#include "value_inputs.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <imgui.h>
#include <optional>

using namespace lmprof;

namespace {

// The keys drawn in `section` and the height they took, in a window of their own.
std::pair<std::vector<std::string>, float> drawSection(const char* window,
                                                       engine::ValueField::Section section) {
    ImGui::Begin(window);
    engine::RunConfig c;
    const float top = ImGui::GetCursorPosY();
    auto drawn = ui::valueInputs(section, c, {});
    const float height = ImGui::GetCursorPosY() - top;
    ImGui::End();
    return {drawn, height};
}

} // namespace

TEST(ValueInputs, AThrowawayFieldGetsAWidgetInItsSection) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(800, 600);
    unsigned char* pixels = nullptr;
    int width = 0;
    int height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
    ImGui::NewFrame();
    const auto [before, beforeHeight] = drawSection("before", engine::ValueField::Section::Run);
    std::optional<engine::ExtraValueField> declared(engine::test::throwawayField());
    const auto [after, afterHeight] = drawSection("after", engine::ValueField::Section::Run);
    declared.reset();
    const float row = ImGui::GetFrameHeightWithSpacing();
    ImGui::EndFrame();
    ImGui::DestroyContext();

    EXPECT_EQ(std::find(before.begin(), before.end(), "throwaway_steps"), before.end());
    EXPECT_NE(std::find(after.begin(), after.end(), "throwaway_steps"), after.end());
    EXPECT_NE(std::find(after.begin(), after.end(), "seed"), after.end());
    EXPECT_EQ(std::find(after.begin(), after.end(), "sample_hz"), after.end()); // Sampling
    EXPECT_FLOAT_EQ(afterHeight - beforeHeight, row); // one more number box
}
