// Fonts and colours: a readable TrueType font from Debian's fonts-dejavu-core (ImGui's
// built-in font if it is missing), dark and light themes, sizes scaled for high-DPI.
#pragma once

namespace lmprof::ui {

// Adds the UI font to the current ImGui context's atlas.
void loadFonts(float contentScale);
// Colours and sizes for ImGui and ImPlot; call again to switch themes.
void applyTheme(bool dark, float contentScale);

} // namespace lmprof::ui
