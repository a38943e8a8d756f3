// Save the session's finished runs as a JSON result set (asking before replacing a file this
// window did not write), open one (validated: a foreign or corrupt file is reported and
// changes nothing), recent files, and the status line.

#include "files_view.h"

#include "lmprof/engine/devices.h"
#include "lmprof/engine/result_io.h"
#include "theme.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <imgui.h>
#include <stdexcept>
#include <utility>

namespace lmprof::ui {

using namespace lmprof::engine;

void FilesView::save(ViewContext& ctx, const std::string& path) {
    ResultSet set = ctx.store.toResultSet(ctx.session.environment(ctx.form.config().device));
    set.created = utcNow();
    set.tool = toolInfo();
    if (set.runs.empty()) {
        ctx.report("nothing to save yet: no run has finished", true);
        return;
    }
    try {
        saveResultSetAtomic(set, path);
        m_written.insert(path);
        ctx.settings.savePath = path;
        std::snprintf(m_path, sizeof(m_path), "%s", path.c_str()); // Save goes there next
        ctx.settings.addRecent(path);
        ctx.report("saved " + std::to_string(set.runs.size()) + " run(s) to " + path, false);
    } catch (const std::exception& e) {
        ctx.report(e.what(), true);
    }
}

void FilesView::requestSave(ViewContext& ctx, const std::string& path) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !m_written.count(path)) {
        m_confirmReplace = path; // asked in drawReplaceQuestion
        return;
    }
    save(ctx, path);
}

void FilesView::drawReplaceQuestion(ViewContext& ctx) {
    if (m_confirmReplace.empty()) {
        return;
    }
    constexpr const char* kTitle = "Replace file?";
    ImGui::OpenPopup(kTitle);
    ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                            ImVec2(0.5f, 0.5f));
    if (!ImGui::BeginPopupModal(kTitle, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        return;
    }
    ImGui::Text("%s already exists.", m_confirmReplace.c_str());
    ImGui::TextDisabled("Replacing it loses the runs it holds now.");
    if (ImGui::Button("Replace")) {
        save(ctx, m_confirmReplace);
        m_confirmReplace.clear();
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGuiKey_Escape)) {
        ctx.report("not saved: " + m_confirmReplace + " was kept", false);
        m_confirmReplace.clear();
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

void FilesView::open(ViewContext& ctx, const std::string& path) {
    try {
        take(ctx, path, loadResultsFile(path)); // throws before anything changes
    } catch (const ResultFormatError& e) {
        ctx.report(std::string("cannot open ") + e.what(), true); // e names the file
    } catch (const std::exception& e) {
        ctx.report("cannot open " + path + ": " + e.what(), true);
    }
}

void FilesView::openInBackground(ViewContext& ctx, const std::string& path) {
    if (m_reading.busy()) {
        ctx.report("still opening " + m_reading.path() + ": wait for it, or cancel it", true);
        return;
    }
    readInBackground(path, "Opening",
                     [this, path](ViewContext& c, std::optional<engine::ResultsFile> file,
                                  const std::string& error, bool cancelled) {
                         if (file) {
                             take(c, path, std::move(*file));
                         } else {
                             c.report(error, !cancelled);
                         }
                     });
}

void FilesView::readInBackground(const std::string& path, std::string title, Reader done) {
    m_reading.start(path); // throws while another file is being read
    m_readingTitle = std::move(title);
    m_taker = std::move(done);
}

void FilesView::drawOpening(ViewContext& ctx) {
    if (!m_reading.busy()) {
        return;
    }
    if (auto done = m_reading.take()) {
        const Reader taker = std::exchange(m_taker, nullptr);
        taker(ctx, std::move(done->file), done->error, done->cancelled);
        return;
    }
    const char* title = m_readingTitle.c_str();
    ImGui::OpenPopup(title);
    ImGui::SetNextWindowPos(ImGui::GetMainViewport()->GetCenter(), ImGuiCond_Appearing,
                            ImVec2(0.5f, 0.5f));
    if (ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::Text("Reading %s", m_reading.path().c_str());
        const float share = static_cast<float>(m_reading.share());
        char label[32];
        std::snprintf(label, sizeof(label), "%.0f%%", 100.0f * share);
        ImGui::ProgressBar(share, ImVec2(ImGui::GetFontSize() * 24.0f, 0.0f), label);
        ImGui::BeginDisabled(m_reading.cancelling());
        if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGuiKey_Escape)) {
            m_reading.cancel(); // the reader stops at its next run; nothing is added
        }
        ImGui::EndDisabled();
        ImGui::EndPopup();
    }
}

// A file's runs (or its precision lab alone) into the store; the readable runs of a partly
// damaged autosave file are taken and the skipped lines counted.
void FilesView::take(ViewContext& ctx, const std::string& path, ResultsFile loaded) {
    if (ctx.store.mergeLab(loaded.lab) && loaded.runs.empty()) {
        ctx.settings.addRecent(path);
        ctx.report("opened the precision lab's results from " + path +
                       " (the Precision lab window shows them)",
                   false);
        return;
    }
    if (loaded.runs.empty()) {
        ctx.report("cannot open " + path + ": no readable run" +
                       (loaded.warnings.empty()
                            ? std::string()
                            : " (" + std::to_string(loaded.warnings.size()) +
                                  " line(s) skipped; first: " + loaded.warnings.front() + ")"),
                   true);
        return;
    }
    const size_t read = loaded.runs.size();
    const size_t added = ctx.store.addLoaded(std::move(loaded.runs));
    ctx.store.selectNewestOf(added); // the others are in Runs
    ctx.settings.addRecent(path);
    const size_t open = read - added;
    ctx.report("opened " + std::to_string(added) + " run(s) from " + path +
                   (added > 1 ? ", showing the newest (Runs selects the others)" : "") +
                   (open ? "; " + std::to_string(open) + " already open, not added again"
                         : std::string()) +
                   (loaded.warnings.empty()
                        ? std::string()
                        : "; " + std::to_string(loaded.warnings.size()) +
                              " damaged line(s) skipped, first: " + loaded.warnings.front()),
               !loaded.warnings.empty());
}

void FilesView::draw(ViewContext& ctx) {
    if (!m_pathInitialised) {
        std::snprintf(m_path, sizeof(m_path), "%s", ctx.settings.savePath.c_str());
        m_pathInitialised = true;
    }
    drawReplaceQuestion(ctx); // asked even while this window is hidden (File > Save results)
    drawOpening(ctx);         // shown even while this window is hidden (File > Open)
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 9.0f);
    ImGui::InputText("##path", m_path, sizeof(m_path));
    ImGui::SameLine();
    if (ImGui::Button("Save")) {
        requestSave(ctx, m_path);
    }
    ImGui::SameLine();
    if (ImGui::Button("Open")) {
        openInBackground(ctx, m_path);
    }
    if (!ctx.settings.recentFiles.empty()) {
        ImGui::SameLine();
        if (ImGui::BeginCombo("##recent", "recent", ImGuiComboFlags_NoPreview)) {
            for (const auto& f : ctx.settings.recentFiles) {
                if (ImGui::Selectable(f.c_str())) {
                    std::snprintf(m_path, sizeof(m_path), "%s", f.c_str());
                    // A new path: an earlier error (about another file) no longer applies.
                    ctx.report("picked " + f + ": Open reads it, Save writes to it", false);
                }
            }
            ImGui::EndCombo();
        }
    }
    if (!ctx.status.empty()) {
        const ImVec4 color =
            ctx.statusIsError ? palette().error : ImGui::GetStyleColorVec4(ImGuiCol_Text);
        ImGui::PushStyleColor(ImGuiCol_Text, color);
        ImGui::TextWrapped("%s", ctx.status.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp). The app drives it (WindowSet::files,
// given the app's FileReading), so it is never made from its entry, and exports no chart.
WindowEntry filesWindow() {
    return {FilesView::kTitle, DockSlot::LeftBottom, nullptr};
}

} // namespace lmprof::ui
