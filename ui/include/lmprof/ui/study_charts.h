// The study report's charts (engine/study.h, docs/STUDY.md) drawn by the window's chart
// exporter, with no window: lmprof-cli study writes them on a server with no display.
#pragma once

#include "lmprof/engine/study.h"

#include <filesystem>
#include <vector>

namespace lmprof::ui {

// Draws each chart with its runs from `set` (and the precision lab's) into dir/<file>, at
// kStudyChartWidth x kStudyChartHeight on the light theme, as the window exports it. Makes
// an OpenGL context of its own that needs no display (EGL: a GPU's driver through its
// device platform, else Mesa's surfaceless one; docs/STUDY.md, "Charts without a display").
// Throws std::runtime_error with the reason when no such context can be made or a chart
// cannot be drawn or written.
void drawStudyChartsHeadless(const engine::ResultSet& set,
                             const std::vector<engine::StudyChart>& charts,
                             const std::filesystem::path& dir);

} // namespace lmprof::ui
