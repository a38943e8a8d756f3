// The runs the last session autosaved (autosave.h): the offer at launch, restoring them
// (now with --restore-last, or on a thread behind a progress bar from the offer) or setting
// them aside, and this session's autosave of every run that finishes.

#include "app_parts.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/result_io.h"

#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

void SessionRestore::answerAtLaunch(RestoreChoice choice) {
    if (auto previous = autosave.takePrevious()) {
        if (choice == RestoreChoice::Restore) {
            restoreNow();
        } else if (choice == RestoreChoice::Ask) {
            m_offer = std::move(previous);
        } else {
            discard();
        }
    }
}

void SessionRestore::restoreNow() {
    ResultsFile read;
    try {
        read = loadResultsFile(autosave.previousPath()); // as File > Open reads it
    } catch (const std::exception& e) {
        m_ws.report(autosave.setAside(e.what()), true);
        return;
    }
    restore(std::move(read.runs), read.warnings);
}

void SessionRestore::restoreInBackground() {
    m_files.readInBackground(autosave.previousPath().string(), "Restoring the last session",
                             [this](ViewContext&, std::optional<ResultsFile> file,
                                    const std::string& error, bool cancelled) {
                                 if (file) {
                                     restore(std::move(file->runs), file->warnings);
                                 } else if (cancelled) {
                                     m_ws.report(
                                         "restore cancelled: the last session's runs stay in " +
                                             autosave.previousPath().string() +
                                             " and are offered at the next launch",
                                         false);
                                 } else {
                                     m_ws.report(autosave.setAside(error), true);
                                 }
                             });
}

void SessionRestore::restore(std::vector<RunResult> runs,
                             const std::vector<std::string>& warnings) {
    if (runs.empty()) {
        m_ws.report(
            autosave.setAside("no line of it is a readable run (" + skippedLines(warnings) + ")"),
            true);
        return;
    }
    const size_t count = runs.size();
    std::string problem;
    if (warnings.empty()) {
        problem = autosave.adopt(); // its lines start this session's autosave
    } else {
        // Into this session's autosave without the damaged lines, so they survive another
        // crash or restart and are not reported again.
        for (const auto& run : runs) {
            try {
                autosave.append(run);
            } catch (const std::exception& e) {
                problem = std::string("autosave: ") + e.what();
                break;
            }
        }
        problem = problem.empty() ? autosave.answer(true) : problem;
    }
    m_ws.store.selectNewestOf(m_ws.store.addLoaded(std::move(runs))); // the others are in Runs
    m_ws.report("restored " + std::to_string(count) + " run(s) of the last session" +
                    (count > 1 ? ", showing the newest (Runs selects the others)" : "") +
                    (warnings.empty() ? std::string() : "; " + skippedLines(warnings)),
                !warnings.empty());
    if (!problem.empty()) {
        m_ws.report(problem, true);
    }
}

void SessionRestore::discard() {
    if (const std::string problem = autosave.answer(false); !problem.empty()) {
        m_ws.report(problem, true);
    }
}

void SessionRestore::drawOffer() {
    // One file is read at a time, and one modal shows: a file being opened (a demo's) goes
    // first, and the offer waits for it.
    if (!m_offer || m_files.opening()) {
        return;
    }
    ImGui::OpenPopup("Restore last session?");
    const ImVec2 centre = ImGui::GetMainViewport()->GetCenter();
    ImGui::SetNextWindowPos(centre, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    if (!ImGui::BeginPopupModal("Restore last session?", nullptr,
                                ImGuiWindowFlags_AlwaysAutoResize)) {
        return;
    }
    // Counted, not read: the runs are read only if they are restored.
    ImGui::Text("The last session autosaved %zu run(s), %s%s.", m_offer->runs,
                engine::formatBytes(static_cast<int64_t>(m_offer->bytes)).c_str(),
                m_offer->savedAt.empty() ? "" : (", at " + m_offer->savedAt).c_str());
    ImGui::TextDisabled("Restore reads them, with a progress bar and Cancel; damaged lines are "
                        "skipped and listed.");
    ImGui::TextDisabled("Discarded runs are kept in %s until the next discard.",
                        autosave.discardedPath().string().c_str());
    const std::string restoreLabel = "Restore " + std::to_string(m_offer->runs) + " run(s)";
    if (ImGui::Button(restoreLabel.c_str())) {
        restoreInBackground();
        m_offer.reset();
        ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard")) {
        discard();
        m_offer.reset();
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

void SessionRestore::saveFinished(const std::vector<SessionEvent>& events) {
    for (const auto& e : events) {
        const auto* fin = std::get_if<RunFinished>(&e);
        if (!fin || fin->result.status == RunStatus::Skipped) {
            continue;
        }
        try {
            autosave.append(fin->result);
        } catch (const std::exception& e) {
            m_ws.report(std::string("autosave: ") + e.what(), true);
        }
    }
}

} // namespace lmprof::ui
