// The shared table cells (see table_cells.h).

#include "table_cells.h"

#include "lmprof/engine/report.h"

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

} // namespace lmprof::ui::cell
