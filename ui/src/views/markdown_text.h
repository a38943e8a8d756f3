// The Markdown lmprof writes (a study's report.md: headings, bullet lists, pipe tables,
// paragraphs, images), drawn as ImGui text instead of shown raw.
#pragma once

#include <string_view>

namespace lmprof::ui {

// Draws `markdown` in the current window: "#" headings larger, "- " items as bullets (nested
// by their indent), pipe tables as tables, "![alt](file)" as a line naming the chart and its
// file, "**" and "`" marks dropped, fenced code as it is.
void drawMarkdown(std::string_view markdown);

} // namespace lmprof::ui
