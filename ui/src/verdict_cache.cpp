// The verdicts the window shows, judged no more often than they can change (verdict_cache.h).

#include "verdict_cache.h"

#include "lmprof/engine/verdicts.h"

namespace lmprof::ui {

const std::vector<engine::RunVerdict>& VerdictCache::of(const RunView& run) {
    const engine::RunResult& r = run.result;
    const size_t steps = r.steps.size();
    Entry& e = m_byId[r.id];
    // Fewer steps than last time: another run took this id (one removed, one added).
    const bool stale = !e.judged || steps < e.steps || run.finished != e.finished ||
                       (!run.finished && 4 * steps >= 5 * e.steps && steps > e.steps);
    if (!stale) {
        return e.verdicts;
    }
    e.judged = true;
    e.steps = steps;
    e.finished = run.finished;
    if (run.finished && !r.verdicts.empty()) {
        e.verdicts = r.verdicts; // read with the run (a result set) or judged at its end
    } else {
        e.verdicts = engine::judgeRun(r);
        ++m_judgements;
    }
    return e.verdicts;
}

RunView* verdictRun(RunStore& store) {
    RunView* live = store.active();
    auto& runs = store.runs();
    const auto& selection = store.selection();
    for (int i : selection) {
        if (i >= 0 && static_cast<size_t>(i) < runs.size() &&
            &runs[static_cast<size_t>(i)] == live) {
            return live;
        }
    }
    for (auto it = selection.rbegin(); it != selection.rend(); ++it) {
        if (*it >= 0 && static_cast<size_t>(*it) < runs.size()) {
            return &runs[static_cast<size_t>(*it)];
        }
    }
    return nullptr;
}

} // namespace lmprof::ui
