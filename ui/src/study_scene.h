// One chart of a study report ready to draw (engine/study.h): its runs in a run store of
// their own, all selected in the report's order, and a fresh view of the window that draws
// it. The Study view draws scenes live under its sections; drawStudyCharts draws them into
// the report's PNG files. Either way it is the window's own chart.
#pragma once

#include "lmprof/engine/study.h"
#include "lmprof/ui/config_form.h"
#include "lmprof/ui/run_store.h"
#include "no_engine.h"
#include "settings.h"
#include "views/view.h"

#include <imgui.h>
#include <memory>
#include <string>

namespace lmprof::ui {

class StudyChartScene {
public:
    // Throws std::runtime_error naming the chart when its name is not a window chart or a
    // run it names is not in `set`.
    StudyChartScene(const engine::ResultSet& set, const engine::StudyChart& chart);
    StudyChartScene(const StudyChartScene&) = delete;
    StudyChartScene& operator=(const StudyChartScene&) = delete;

    // The chart alone, filling `size` (-1: what is left) in the current window.
    void draw(ImVec2 size);
    // The line under the chart's title in a file: its runs (chartRunsLine), or none.
    std::string runsLine();
    const engine::StudyChart& chart() const { return m_chart; }

private:
    engine::StudyChart m_chart;
    NoEngine m_engine; // a chart runs nothing: no engine thread, local or remote
    RunStore m_store;
    ConfigForm m_form;
    Settings m_settings;
    std::string m_status;
    bool m_isError = false;
    ViewContext m_ctx;
    std::unique_ptr<View> m_view;
    const ChartEntry* m_entry = nullptr;
};

} // namespace lmprof::ui
