// File > Connect...: which engine the window drives (docs/REMOTE.md). The dialog that
// connects to an lmprof-cli serve, the switch between engines, and the menu bar's
// indicator of the engine in use.

#include "app_parts.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/result_io.h"
#include "theme.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

bool EngineSwitch::switchTo(
    const std::function<std::shared_ptr<SessionInterface>(int firstRunIndex)>& make) {
    // A remote engine that is not connected may be left while busy: its runs go on on the
    // server, which keeps them for the next client.
    const EngineInfo info = m_ws.session().info();
    const bool leavable = info.remote && !info.connected;
    if ((m_ws.session().busy() && !leavable) || m_windows.sweep.running() ||
        m_windows.precisionLab.busy()) {
        m_ws.report("the engine is busy: wait for its run to finish, or cancel it, before "
                    "switching",
                    true);
        return false;
    }
    // Events the old engine published since the frame began go through the next frame.
    for (auto& e : m_ws.session().drain()) {
        m_ws.retiredEvents.push_back(std::move(e));
    }
    int next = 0;
    for (const auto& run : m_ws.store.runs()) {
        next = std::max(next, run.runIndex + 1);
    }
    for (const auto& e : m_ws.retiredEvents) {
        std::visit(
            [&](const auto& v) {
                if constexpr (requires { v.runIndex; }) {
                    next = std::max(next, v.runIndex + 1);
                }
            },
            e);
    }
    m_ws.activeEngine->setWaker({});
    m_ws.activeEngine = make(next);
    m_ws.activeEngine->setWaker(m_options.wake);
    return true;
}

void EngineSwitch::openDialog() {
    m_open = true;
    std::snprintf(m_address, sizeof(m_address), "%s", m_options.connectAddress.c_str());
    std::snprintf(m_tokenFile, sizeof(m_tokenFile), "%s", m_options.connectTokenFile.c_str());
}

void EngineSwitch::drawDialog() {
    if (m_open) {
        ImGui::OpenPopup("Connect to a server");
        m_open = false;
    }
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
    if (!ImGui::BeginPopupModal("Connect to a server", nullptr, ImGuiWindowFlags_NoSavedSettings)) {
        return;
    }
    ImGui::TextWrapped("Drive the engine of an lmprof-cli serve. For a GPU server: "
                       "ssh -L 7377:127.0.0.1:7377 gpu-box, then connect to 127.0.0.1:7377 "
                       "with the server's token.");
    ImGui::Spacing();
    ImGui::PushItemWidth(-ImGui::GetFontSize() * 7);
    ImGui::InputText("address", m_address, sizeof(m_address));
    ImGui::InputText("token file", m_tokenFile, sizeof(m_tokenFile));
    ImGui::InputText("or token", m_token, sizeof(m_token), ImGuiInputTextFlags_Password);
    ImGui::PopItemWidth();
    ImGui::TextDisabled("The server prints its token file; the token is its first line.");
    if (!m_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
        ImGui::TextWrapped("%s", m_error.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::Separator();
    if (ImGui::Button("Connect", ImVec2(ImGui::GetFontSize() * 6, 0))) {
        try {
            const remote::Endpoint endpoint = remote::parseEndpoint(m_address, "address");
            remote::ConnectOptions o;
            o.host = endpoint.host;
            o.port = endpoint.port;
            o.token = m_token[0] ? std::string(m_token) : remote::readToken(m_tokenFile);
            o.clientName = "lmprof " + toolInfo().version + " (window)";
            if (switchTo([&o](int first) {
                    o.firstRunIndex = first;
                    return std::make_shared<remote::RemoteSession>(o);
                })) {
                m_options.connectAddress = m_address;
                m_options.connectTokenFile = m_tokenFile;
                m_ws.report("connecting to " + endpoint.text(), false);
                m_error.clear();
                ImGui::CloseCurrentPopup();
            } else {
                m_error = m_ws.status;
            }
        } catch (const std::exception& e) {
            m_error = e.what();
        }
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0))) {
        m_error.clear();
        ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
}

void EngineSwitch::drawIndicator(bool watchedRunEnded) const {
    const EngineInfo info = m_ws.session().info();
    std::string text;
    ImVec4 color = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    if (m_options.awaitWatchedRun && !info.connected) {
        // `lmprof -- python train.py`: the server is the script, which listens from its first
        // step and closes when its run ends; neither is a lost connection.
        text = watchedRunEnded ? "watched script: its run has ended"
                               : "watched script: waiting for its first step (" + info.where + ")";
        color = watchedRunEnded ? palette().ok : palette().live;
    } else if (!info.remote && !info.connected) {
        // A viewer build: nothing runs here; the tooltip says where runs can go.
        text = "engine: none in this build - File > Connect... drives a server";
        color = palette().warning;
    } else if (!info.remote) {
        text = "engine: local";
    } else if (m_options.awaitWatchedRun) {
        text = "watched script: " + info.where;
        color = palette().ok;
    } else if (info.connected) {
        // Connected, with something to say (a message it skipped, a server's remark).
        text = "engine: " + info.where + (info.problem.empty() ? "" : " - " + info.problem);
        color = info.problem.empty() ? palette().ok : palette().warning;
    } else { // not up yet (a script still importing torch), or gone: it retries every second
        text = "engine: waiting for " + info.where + " - " + info.problem;
        color = palette().warning;
    }
    if (!info.deviceName.empty() && (info.connected || !info.remote)) {
        text += " (" + info.deviceName + ")";
    }
    ImGui::TextColored(color, "%s", text.c_str());
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", !info.remote && !info.connected ? info.problem.c_str()
                                : !info.remote ? "Runs execute in this process; File > Connect... "
                                                 "drives a server."
                                : info.connected
                                    ? "Runs execute on this server; File > Use the local "
                                      "engine switches back."
                                    : "The window tries again every second, as long as it takes "
                                      "(a script may still be importing torch); File > Use the "
                                      "local engine stops waiting.");
    }
}

} // namespace lmprof::ui
