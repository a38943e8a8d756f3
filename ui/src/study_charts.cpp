// The study report's charts (lmprof/ui/study_charts.h, study_scene.h): each is a window
// chart drawn by a fresh view of its registry entry over a run store holding only the
// chart's runs, so the PNG is what the window exports for those runs.

#include "lmprof/ui/study_charts.h"

#include "chart_export.h"
#include "headless_gl.h"
#include "study_scene.h"
#include "views/plot_helpers.h"

#include <algorithm>
#include <stdexcept>

namespace lmprof::ui {

using namespace lmprof::engine;

StudyChartScene::StudyChartScene(const ResultSet& set, const StudyChart& chart)
    : m_chart(chart), m_ctx{m_engine, m_store, m_form, m_settings, m_status, m_isError} {
    for (const WindowEntry& window : windowRegistry()) {
        for (const ChartEntry& entry : window.charts) {
            if (chart.chart == entry.name) {
                m_view = window.make();
                m_entry = &entry;
            }
        }
    }
    if (!m_entry) {
        throw std::runtime_error(chart.file + ": '" + chart.chart + "' is not a window chart");
    }
    std::vector<RunResult> runs;
    for (const std::string& id : chart.runs) {
        const auto it = std::find_if(set.runs.begin(), set.runs.end(),
                                     [&](const RunResult& r) { return r.id == id; });
        if (it == set.runs.end()) {
            throw std::runtime_error(chart.file + ": no run '" + id + "' in the study");
        }
        runs.push_back(*it);
    }
    m_store.selectLast(m_store.addLoaded(runs));
    m_store.mergeLab(set.precisionLab);
    m_store.refreshSelection();
}

void StudyChartScene::draw(ImVec2 size) {
    m_entry->draw(*m_view, m_ctx, size);
}

std::string StudyChartScene::runsLine() {
    return m_chart.runs.empty() ? std::string() : chartRunsLine(m_ctx.selectedRuns());
}

void drawStudyCharts(OffscreenCharts& offscreen, const ResultSet& set,
                     const std::vector<StudyChart>& charts, const std::filesystem::path& dir) {
    for (const StudyChart& chart : charts) {
        StudyChartScene scene(set, chart);
        offscreen.render(dir / chart.file, kStudyChartWidth, kStudyChartHeight, false, chart.title,
                         scene.runsLine(), [&] { scene.draw(ImVec2(-1, -1)); });
    }
}

void drawStudyChartsHeadless(const ResultSet& set, const std::vector<StudyChart>& charts,
                             const std::filesystem::path& dir) {
    const HeadlessGl gl;
    OffscreenCharts offscreen(false, 1.0f);
    drawStudyCharts(offscreen, set, charts, dir);
}

} // namespace lmprof::ui
