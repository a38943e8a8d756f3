// Fonts and colours: a readable TrueType font from Debian's fonts-dejavu-core (ImGui's
// built-in font if it is missing), dark and light themes, sizes scaled for high-DPI, and
// the colours that carry meaning (docs/WINDOW.md, "Colours").
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/ui/run_store.h"

#include <imgui.h>

namespace lmprof::ui {

// The colours that carry meaning, the same in every view; each theme has its own shades so
// they stay readable on its background.
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
// The palette of the theme applied last.
const Palette& palette();

// A run's colour in every chart (index from RunView::color): Okabe and Ito's eight colours,
// chosen to stay distinguishable with the common colour-vision deficiencies; the last is
// grey, lighter on the dark theme.
ImVec4 runColor(int index);
// A phase's own colour (its line in a single run's step chart, its band in the memory
// timeline); alpha 1, callers make bands translucent.
ImVec4 phaseColor(engine::Phase phase);
// The colour of a fixed secondary series (reserved memory, RSS, ...) in a single run's chart,
// index 0, 1, 2: neutral tones apart from the run colours.
ImVec4 seriesColor(int index);
// c with its alpha replaced.
ImVec4 withAlpha(ImVec4 c, float alpha);

// Adds the UI font to the current ImGui context's atlas.
void loadFonts(float contentScale);
// Colours and sizes for ImGui and ImPlot; call again to switch themes.
void applyTheme(bool dark, float contentScale);
// The palette the colour functions above answer from (applyTheme's), without restyling:
// a chart drawn for a file on the other theme uses it for as long as it draws.
bool paletteIsDark();
void usePalette(bool dark);

} // namespace lmprof::ui
