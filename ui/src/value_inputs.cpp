#include "value_inputs.h"

#include "theme.h"

#include <imgui.h>
#include <variant>

namespace lmprof::ui {

using engine::RunConfig;
using engine::ValueField;

namespace {

void input(const ValueField& f, bool& v) {
    ImGui::Checkbox(f.label.c_str(), &v);
}
void input(const ValueField& f, int& v) {
    ImGui::InputInt(f.label.c_str(), &v, static_cast<int>(f.step));
}
void input(const ValueField& f, uint64_t& v) {
    ImGui::InputScalar(f.label.c_str(), ImGuiDataType_U64, &v);
}
void input(const ValueField& f, double& v) {
    ImGui::InputDouble(f.label.c_str(), &v, f.step, 10.0 * f.step, "%g");
}

} // namespace

std::vector<std::string> valueInputs(ValueField::Section section, RunConfig& c,
                                     const std::map<std::string, std::string>& errors) {
    std::vector<std::string> drawn;
    for (const ValueField& f : engine::valueFields()) {
        if (f.section != section) {
            continue;
        }
        std::visit([&](auto member) { input(f, c.*member); }, f.member);
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("%s", f.help.c_str());
        }
        fieldError(errors, f.key.c_str());
        drawn.push_back(f.key);
    }
    return drawn;
}

void fieldError(const std::map<std::string, std::string>& errors, const char* field) {
    if (auto it = errors.find(field); it != errors.end()) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
        ImGui::TextWrapped("%s", it->second.c_str());
        ImGui::PopStyleColor();
    }
}

} // namespace lmprof::ui
