// The shared table cells (see table_cells.h).

#include "table_cells.h"

#include "lmprof/engine/report.h"
#include "theme.h"

#include <imgui.h>

namespace lmprof::ui::cell {

void text(std::string_view s) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s.data(), s.data() + s.size());
}

void integer(long long v) {
    ImGui::TableNextColumn();
    ImGui::Text("%lld", v);
}

void peakAndTokens(const engine::RunSummary& s) {
    const int64_t peak = s.peakBytes.max();
    text(peak > 0 ? engine::formatBytes(peak) : "-");
    ImGui::TableNextColumn();
    if (s.tokensPerS > 0) {
        ImGui::Text("%.0f", s.tokensPerS);
    } else {
        ImGui::TextDisabled("-");
    }
}

void pAndVerdict(const engine::WelchTest& welch, engine::Verdict verdict, std::string_view text) {
    using engine::Verdict;
    ImGui::TableNextColumn();
    if (verdict == Verdict::Untestable) {
        ImGui::TextDisabled("-");
    } else {
        ImGui::Text("%.3g", welch.p);
    }
    ImGui::TableNextColumn();
    const ImVec4 color = verdict == Verdict::Slower ? palette().error
                         : verdict == Verdict::Faster
                             ? palette().ok
                             : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    const std::string_view words = text.empty() ? engine::toString(verdict) : text;
    ImGui::TextColored(color, "%.*s", static_cast<int>(words.size()), words.data());
}

} // namespace lmprof::ui::cell
