// File dialogs (ImFileDialog) for the File menu and the views that take a path (Compare's A
// and B): opened by a key, drawn opaque over the charts, and read back once done.
#pragma once

#include <cstdint>
#include <filesystem>
#include <imgui.h>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

// The filter of a dialog that opens result sets and autosave files.
inline constexpr const char* kResultFilter = "Result sets and autosave files (*.json;*.jsonl)"
                                             "{.json,.jsonl},.*";

// Opens the dialog `key` to pick files (`multiple`: several), starting in `folder`.
void openFileDialog(const char* key, const char* title, const char* filter, bool multiple,
                    const std::string& folder);
// Opens the dialog `key` to name a file to save, starting in `folder`.
void saveFileDialog(const char* key, const char* title, const char* filter,
                    const std::string& folder);
// Draws the dialog `key` while it is open (call every frame). Once done: the files picked
// (none when cancelled), and the dialog is closed; until then nullopt.
std::optional<std::vector<std::filesystem::path>> fileDialogResult(const char* key);

// The textures ImFileDialog draws its icons and previews with, made and freed for it: plain
// RGBA (`format` 1) or BGRA (0) textures of the window's OpenGL context, which must be
// current.
ImTextureID fileDialogTexture(const uint8_t* data, int width, int height, char format);
void deleteFileDialogTexture(ImTextureID texture);

} // namespace lmprof::ui
