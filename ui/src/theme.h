// Fonts and colours: a readable TrueType font from Debian's fonts-dejavu-core (ImGui's
// built-in font if it is missing), dark and light themes, sizes scaled for high-DPI.
#pragma once

#include <imgui.h>

namespace lmprof::ui {

// The colours that carry meaning, the same in every view and readable on both themes.
struct Palette {
    ImVec4 error;      // failed runs, invalid fields, regressions, refused files
    ImVec4 warning;    // fit warnings, notes that need attention, a chart's mean tag
    ImVec4 ok;         // finished runs, improvements
    ImVec4 skipped;    // skipped or cancelled runs
    ImVec4 live;       // figures of a run still in progress
    ImVec4 peak;       // measured memory peaks drawn over a timeline
    ImVec4 throttle;   // telemetry samples with a slowdown reason (translucent)
    ImVec4 regression; // the background of a row that got slower (translucent)
};
const Palette& palette();

// Adds the UI font to the current ImGui context's atlas.
void loadFonts(float contentScale);
// Colours and sizes for ImGui and ImPlot; call again to switch themes.
void applyTheme(bool dark, float contentScale);

} // namespace lmprof::ui
