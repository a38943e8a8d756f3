// The verdict strip (docs/VERDICTS.md, "Where verdicts are shown"): one line along the
// bottom of the window, outside the dock space, so it is there in every layout and covers
// no chart. It shows what bounds the steps of the run a person is looking at (the live run,
// else the last one selected), each verdict as a chip with its interval; hovering says the
// evidence and the advice, and a click brings the verdict's chart forward with its steps
// marked (plot::verdictMark).
#pragma once

#include "verdict_cache.h"

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace lmprof::ui {

class VerdictStrip {
public:
    // Before the dock space, which then leaves the strip its line.
    void draw(RunStore& store, std::optional<VerdictMark>& mark,
              const std::function<void(const std::string& window)>& bringForward);

    // What a click on the chip of `kind` does (a demo's "verdict" step): marks its steps and
    // returns the window of its chart; none when the run shown has no verdict of that kind.
    std::optional<std::string> select(const std::string& kind, RunStore& store,
                                      std::optional<VerdictMark>& mark);
    // The kinds of the run shown, for a message that names what there is.
    std::string kindsShown(RunStore& store);
    // The strip as last drawn, for the layout report (docs/DEMO.md): the run, its chips'
    // text, how many did not fit, and the kind marked.
    nlohmann::json report(const std::optional<VerdictMark>& mark) const;

private:
    VerdictCache m_cache;
    std::string m_run;                // as last drawn
    std::vector<std::string> m_chips; // as last drawn
    size_t m_more = 0;
    void drawLine(RunStore& store, std::optional<VerdictMark>& mark,
                  const std::function<void(const std::string& window)>& bringForward);
};

// The window (views/registry.cpp) that draws `chart` (a chart name, lmprof/engine/charts.h):
// the one a verdict's click brings forward; none when no window draws it.
std::optional<std::string> windowOfChart(const std::string& chart);

} // namespace lmprof::ui
