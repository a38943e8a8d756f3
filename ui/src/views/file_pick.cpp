// File dialogs through ImFileDialog (file_pick.h).

#include "file_pick.h"

#include <GL/gl.h>
#include <ImFileDialog/ImFileDialog.h>
#include <imgui.h>

namespace lmprof::ui {

ImTextureID fileDialogTexture(const uint8_t* data, int width, int height, char format) {
    GLuint texture = 0;
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, width, height, 0, format == 0 ? GL_BGRA : GL_RGBA,
                 GL_UNSIGNED_BYTE, data);
    glBindTexture(GL_TEXTURE_2D, 0);
    return static_cast<ImTextureID>(texture);
}

void deleteFileDialogTexture(ImTextureID texture) {
    const auto id = static_cast<GLuint>(texture);
    glDeleteTextures(1, &id);
}

namespace {

void giveFileDialogTextures() {
    static bool given = false;
    if (given) {
        return;
    }
    given = true;
    auto& dialog = ifd::FileDialog::Instance();
    dialog.CreateTexture = [](uint8_t* data, int w, int h, char fmt) {
        return fileDialogTexture(data, w, h, fmt);
    };
    dialog.DeleteTexture = deleteFileDialogTexture;
}

} // namespace

void openFileDialog(const char* key, const char* title, const char* filter, bool multiple,
                    const std::string& folder) {
    giveFileDialogTextures();
    ifd::FileDialog::Instance().Open(key, title, filter, multiple, folder);
}

void saveFileDialog(const char* key, const char* title, const char* filter,
                    const std::string& folder) {
    giveFileDialogTextures();
    ifd::FileDialog::Instance().Save(key, title, filter, folder);
}

std::optional<std::vector<std::filesystem::path>> fileDialogResult(const char* key) {
    auto& dialog = ifd::FileDialog::Instance();
    // The dialogs are modal popups: opaque, not the popups' 94% over the charts' lines.
    ImVec4 opaque = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    opaque.w = 1.0f;
    ImGui::PushStyleColor(ImGuiCol_PopupBg, opaque);
    const bool done = dialog.IsDone(key);
    ImGui::PopStyleColor();
    if (!done) {
        return std::nullopt;
    }
    std::vector<std::filesystem::path> picked;
    if (dialog.HasResult()) {
        picked = dialog.GetResults();
    }
    dialog.Close();
    return picked;
}

} // namespace lmprof::ui
