// The verdicts the window shows (docs/VERDICTS.md, "Where verdicts are shown"): a run's own
// when it was read with them, else judged by the engine's rules (lmprof/engine/verdicts.h)
// from its steps. A live run is judged again only once it has a quarter more steps than at
// its last judgement (an interval narrows as the square root of the steps), or when it ends;
// a run nobody looks at is never judged. No ImGui here: tests drive it with plain runs.
#pragma once

#include "lmprof/engine/run_verdict.h"
#include "lmprof/ui/run_store.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace lmprof::ui {

// The steps a chart marks for the verdict a person clicked: its run, its kind and its steps.
struct VerdictMark {
    std::string runId;
    engine::VerdictKind kind = engine::VerdictKind::ComputeBound;
    engine::Severity severity = engine::Severity::Info;
    int firstStep = 0;
    int lastStep = 0;
};

class VerdictCache {
public:
    const std::vector<engine::RunVerdict>& of(const RunView& run);
    // How many times a run was judged (tests: nothing more often than the rule above).
    size_t judgements() const { return m_judgements; }

private:
    struct Entry {
        bool judged = false;
        size_t steps = 0;
        bool finished = false;
        std::vector<engine::RunVerdict> verdicts;
    };
    std::unordered_map<std::string, Entry> m_byId;
    size_t m_judgements = 0;
};

// The run whose verdicts the strip shows: the run receiving steps when it is selected (a
// live run is what a person watches), else the last one selected; none when none is.
RunView* verdictRun(RunStore& store);

} // namespace lmprof::ui
