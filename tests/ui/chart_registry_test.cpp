// The engine's chart registry (lmprof/engine/charts.h) and the window's charts are the same
// list: every id the study's report or a script can name has a chart in the view registry,
// and every chart the window exports has an id, so a report cannot ask for a chart the
// window cannot draw.

#include "lmprof/engine/charts.h"
#include "views/view.h"

#include <gtest/gtest.h>
#include <set>
#include <string>

using namespace lmprof;

TEST(ChartRegistry, IsTheWindowsChartsBothWays) {
    std::multiset<std::string> window;
    for (const auto& entry : ui::windowRegistry()) {
        for (const auto& chart : entry.charts) {
            window.insert(chart.name);
        }
    }
    std::set<std::string> ids;
    for (const engine::ChartId id : engine::kChartIds) {
        EXPECT_TRUE(ids.insert(id.name).second) << id.name << " is in the registry twice";
        EXPECT_EQ(window.count(id.name), 1u) << id.name << ": no chart of the window has it";
    }
    for (const auto& name : window) {
        EXPECT_EQ(ids.count(name), 1u) << name << ": a chart of the window is not in kChartIds";
    }
}
