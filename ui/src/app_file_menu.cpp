// The File menu (Open and Save as through ImFileDialog, Save, Recent, Studies, Quit) and the
// window's keyboard shortcuts: Ctrl+Enter runs the Configure form, Escape cancels the run,
// Ctrl+O opens, Ctrl+S saves, F12 takes a screenshot, Ctrl+Q quits.

#include "app_parts.h"
#include "lmprof/engine/local_engine.h"
#include "views/file_pick.h"

#include <algorithm>
#include <imgui.h>

namespace lmprof::ui {

namespace fs = std::filesystem;

namespace {

constexpr const char* kOpenDialog = "lmprof-open";
constexpr const char* kSaveDialog = "lmprof-save-as";
constexpr size_t kStudiesListed = 12;

// Where a dialog starts: the folder of the file last used, else the working directory.
std::string startingFolder(const Settings& settings) {
    const std::string& last =
        settings.recentFiles.empty() ? settings.savePath : settings.recentFiles.front();
    std::error_code ec;
    const fs::path folder = fs::absolute(fs::path(last), ec).parent_path();
    return !ec && fs::is_directory(folder, ec) ? folder.string() : fs::current_path(ec).string();
}

// The newest study folders first (their names are their start times).
std::vector<fs::path> pastStudies(const fs::path& studies) {
    std::vector<fs::path> found;
    std::error_code ec;
    for (fs::directory_iterator it(studies, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec)) {
            found.push_back(it->path());
        }
    }
    std::sort(found.begin(), found.end(), std::greater<>());
    return found;
}

} // namespace

void FileMenu::openFileDialog() {
    ui::openFileDialog(kOpenDialog, "Open result sets", kResultFilter, true,
                       startingFolder(m_ws.settings));
}

void FileMenu::saveAsDialog() {
    saveFileDialog(kSaveDialog, "Save the finished runs as", "Result set (*.json){.json}",
                   startingFolder(m_ws.settings));
}

void FileMenu::drawMenu() {
    ViewContext ctx = m_context();
    const bool anyFinished = std::any_of(m_ws.store.runs().begin(), m_ws.store.runs().end(),
                                         [](const RunView& v) { return v.finished; });
    if (ImGui::MenuItem("Open...", "Ctrl+O")) {
        openFileDialog();
    }
    if (ImGui::BeginMenu("Open recent", !m_ws.settings.recentFiles.empty())) {
        const std::vector<std::string> recent = m_ws.settings.recentFiles; // open() reorders it
        for (const std::string& path : recent) {
            if (ImGui::MenuItem(path.c_str())) {
                m_windows.files.openInBackground(ctx, path);
            }
        }
        ImGui::EndMenu();
    }
    const std::vector<fs::path> studies = pastStudies(ctx.studyDir);
    if (ImGui::BeginMenu("Open study", !studies.empty())) {
        for (size_t i = 0; i < studies.size() && i < kStudiesListed; ++i) {
            const bool reported = fs::exists(studies[i] / "report.md");
            if (ImGui::MenuItem(studies[i].filename().c_str(), reported ? "report" : "unfinished",
                                false, !m_windows.study.busy())) {
                m_windows.study.openFolder(ctx, studies[i]);
                ImGui::SetWindowFocus(StudyView::kTitle);
            }
        }
        ImGui::TextDisabled("in %s", ctx.studyDir.c_str());
        ImGui::EndMenu();
    }
    ImGui::Separator();
    const std::string saveLabel = "Save to " + fs::path(m_ws.settings.savePath).filename().string();
    if (ImGui::MenuItem(saveLabel.c_str(), "Ctrl+S", false, anyFinished)) {
        m_windows.files.requestSave(ctx, m_ws.settings.savePath);
    }
    if (ImGui::MenuItem("Save as...", nullptr, false, anyFinished)) {
        saveAsDialog();
    }
    if (ImGui::MenuItem("Screenshot", "F12")) {
        m_screenshot.requested = true;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Connect...")) {
        m_engines.openDialog();
    }
    if (ImGui::MenuItem("Use the local engine", nullptr, false, m_ws.session().info().remote)) {
        if (m_engines.switchTo(
                [](int first) { return std::make_shared<engine::LocalSession>(first); })) {
            m_ws.report("driving the local engine", false);
        }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) {
        quitRequested = true;
    }
}

void FileMenu::drawDialogs() {
    if (const auto picked = fileDialogResult(kOpenDialog); picked && !picked->empty()) {
        ViewContext ctx = m_context();
        if (picked->size() == 1) { // read while the window goes on
            m_windows.files.openInBackground(ctx, picked->front().string());
        } else { // several, one after another
            for (const fs::path& path : *picked) {
                m_windows.files.open(ctx, path.string());
            }
        }
    }
    if (const auto picked = fileDialogResult(kSaveDialog); picked && !picked->empty()) {
        fs::path path = picked->front();
        if (path.extension().empty()) {
            path += ".json";
        }
        ViewContext ctx = m_context();
        m_windows.files.requestSave(ctx, path.string());
    }
}

void FileMenu::handleShortcuts() {
    const ImGuiInputFlags global = ImGuiInputFlags_RouteGlobal;
    if (ImGui::Shortcut(ImGuiKey_F12, global)) {
        m_screenshot.requested = true;
    }
    // Not while a modal asks something, nor while a text field takes the keys.
    if (ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId) || ImGui::GetIO().WantTextInput) {
        return;
    }
    if (ImGui::Shortcut(ImGuiMod_Ctrl | ImGuiKey_O, global)) {
        openFileDialog();
    }
    if (ImGui::Shortcut(ImGuiMod_Ctrl | ImGuiKey_S, global)) {
        ViewContext ctx = m_context();
        m_windows.files.requestSave(ctx, m_ws.settings.savePath);
    }
    if (ImGui::Shortcut(ImGuiMod_Ctrl | ImGuiKey_Q, global)) {
        quitRequested = true;
    }
    if (ImGui::Shortcut(ImGuiMod_Ctrl | ImGuiKey_Enter, global) ||
        ImGui::Shortcut(ImGuiMod_Ctrl | ImGuiKey_KeypadEnter, global)) {
        // As Configure's Run button: a valid form, an idle engine.
        ViewContext ctx = m_context();
        if (const auto errors = m_ws.form.errors(); !errors.empty()) {
            ctx.report("not run: " + errors.begin()->first + ": " + errors.begin()->second, true);
        } else if (m_ws.session().busy()) {
            ctx.report("not run: the engine is busy (Escape cancels its run)", true);
        } else {
            submitRun(ctx, m_ws.form.config());
        }
    }
    if (ImGui::Shortcut(ImGuiKey_Escape, global) && m_ws.session().busy()) {
        ViewContext ctx = m_context();
        cancelRun(ctx);
    }
}

} // namespace lmprof::ui
