// RunStore: engine events into per-run views and incrementally maintained chart series. A
// run's name in legends and tables (describeRun, distinguishingNames): run_names.cpp.

#include "lmprof/ui/run_store.h"

#include "lmprof/engine/result_io.h"
#include "lmprof/ui/run_selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
} // namespace

void RunView::addStep(const StepRecord& s) {
    if (result.source) {
        addWatchedStep(s);
        return;
    }
    result.steps.push_back(s);
    stepSeries(s);
}

void RunView::addWatchedStep(const StepRecord& s) {
    const int everyBefore = result.thinned ? result.thinned->every : 1;
    m_watched.add(s);
    result.thinned = m_watched.thinning(); // its count of steps grows with every one
    m_summaryDirty = true;
    if ((result.thinned ? result.thinned->every : 1) != everyBefore) {
        // The stride doubled: the steps and their series are the kept ones again, and the
        // running band keeps its figures over every step.
        if (isMeasured(s)) {
            m_running.add(s.totalMs);
        }
        const RunningStats running = m_running;
        result.steps = m_watched.kept();
        series = {};
        stepEndS = {};
        reserveSeries(result.steps.size(), 0);
        for (const StepRecord& kept : result.steps) {
            stepSeries(kept);
        }
        m_running = running;
    } else if (!m_watched.kept().empty() && m_watched.kept().back().index == s.index) {
        result.steps.push_back(s);
        stepSeries(s);
    } else if (isMeasured(s)) {
        m_running.add(s.totalMs); // thinned out, but in the band
    }
}

void RunView::stepSeries(const StepRecord& s) {
    series.index.push_back(s.index);
    series.forward.push_back(s.forwardMs);
    series.backward.push_back(s.backwardMs);
    series.optimizer.push_back(s.optimizerMs);
    series.total.push_back(s.totalMs);
    if (result.source) {
        series.data.push_back(s.dataMs.value_or(0.0));
        series.rest.push_back(s.restMs.value_or(0.0));
    }
    series.tokensPerS.push_back(tokensPerSecond(result, s.totalMs));
    if (s.evaluation) {
        series.evaluationAt.push_back(s.index - 0.5);
    }
    if (!isMeasured(s)) {
        series.runMean.push_back(kNaN);
        series.runLow.push_back(kNaN);
        series.runHigh.push_back(kNaN);
    } else {
        m_running.add(s.totalMs);
        series.runMean.push_back(m_running.mean());
        // A time is never negative: the band stops at 0 (and the axis with it).
        series.runLow.push_back(std::max(0.0, m_running.mean() - m_running.std()));
        series.runHigh.push_back(m_running.mean() + m_running.std());
    }
    // Files from before t_end_ms was recorded: the end of the previous step plus this one.
    const double previousEnd = stepEndS.empty() ? 0.0 : stepEndS.back();
    stepEndS.push_back(s.endMs > 0.0 ? s.endMs / 1000.0 : previousEnd + s.totalMs / 1000.0);
    if (m_timelineBuilt) {
        addPeaks(s);
    }
    m_summaryDirty = true;
}

void RunView::addPeaks(const StepRecord& s) {
    for (; m_spansWithPeaks < spans.size() && spans[m_spansWithPeaks].step <= s.index;
         ++m_spansWithPeaks) {
        const PhaseSpan& span = spans[m_spansWithPeaks];
        if (span.step != s.index) {
            continue; // a step that was cut short has no record
        }
        const double mib = static_cast<double>(s.phasePeakBytes.of(span.phase)) / kMiB;
        peaks.tS.insert(peaks.tS.end(), {span.t0S, span.t1S});
        peaks.peakMiB.insert(peaks.peakMiB.end(), {mib, mib});
    }
}

void RunView::addSample(const MemorySample& m) {
    result.memoryTimeline.push_back(m);
    sampleSeries(m);
}

void RunView::sampleSeries(const MemorySample& m) {
    const double t = m.tMs / 1000.0;
    memory.tS.push_back(t);
    memory.allocatedMiB.push_back(static_cast<double>(m.allocated) / kMiB);
    memory.reservedMiB.push_back(static_cast<double>(m.reserved) / kMiB);
    memory.rssMiB.push_back(static_cast<double>(m.rss) / kMiB);
    memory.deviceUsedMiB.push_back(m.deviceTotal > 0 ? static_cast<double>(m.deviceUsed) / kMiB
                                                     : kNaN);
    if (m.boundary) {
        // Boundary samples come in (phase start, phase end) pairs.
        if (!m_openSpanS) {
            m_openSpanS = t;
        } else {
            spans.push_back({*m_openSpanS, t, m.phase, m.step});
            m_openSpanS.reset();
        }
    }
}

void RunView::addTelemetry(const TelemetrySample& t) {
    result.telemetry.push_back(t);
    telemetrySeries(t);
}

void RunView::telemetrySeries(const TelemetrySample& t) {
    const auto orNaN = [](const std::optional<double>& v) { return v ? *v : kNaN; };
    const double time = t.tMs / 1000.0;
    telemetry.tS.push_back(time);
    telemetry.cpuPercent.push_back(t.cpuPercent);
    telemetry.rssMiB.push_back(static_cast<double>(t.rss) / kMiB);
    telemetry.gpuUtil.push_back(orNaN(t.gpuUtilPercent));
    telemetry.memUtil.push_back(orNaN(t.memUtilPercent));
    telemetry.powerW.push_back(orNaN(t.powerW));
    telemetry.smClockMHz.push_back(orNaN(t.smClockMHz));
    telemetry.memClockMHz.push_back(orNaN(t.memClockMHz));
    telemetry.temperatureC.push_back(orNaN(t.temperatureC));
    telemetry.anyGpu = telemetry.anyGpu || t.gpuUtilPercent || t.smClockMHz;
    if (t.throttleReasons && !throttleReasonNames(*t.throttleReasons).empty()) {
        telemetry.throttledS.push_back(time);
    }
}

void RunView::ensureTimeline() {
    static uint64_t uses = 0;
    m_timelineUsed = ++uses;
    if (m_timelineBuilt) {
        return;
    }
    for (auto* v : {&memory.tS, &memory.allocatedMiB, &memory.reservedMiB, &memory.rssMiB,
                    &memory.deviceUsedMiB}) {
        v->reserve(result.memoryTimeline.size());
    }
    for (const auto& m : result.memoryTimeline) {
        sampleSeries(m);
    }
    m_spansWithPeaks = 0;
    for (const auto& s : result.steps) {
        addPeaks(s);
    }
    m_timelineBuilt = true;
}

void RunView::dropTimeline() {
    if (!m_lazyTimeline || !m_timelineBuilt) {
        return;
    }
    memory = {};
    spans = {};
    peaks = {};
    m_spansWithPeaks = 0;
    m_timelineBuilt = false;
}

void RunView::reserveSeries(size_t steps, size_t telemetrySamples) {
    stepEndS.reserve(steps);
    for (auto* v :
         {&series.index, &series.forward, &series.backward, &series.optimizer, &series.total,
          &series.tokensPerS, &series.runMean, &series.runLow, &series.runHigh}) {
        v->reserve(steps);
    }
    for (auto* v : {&telemetry.tS, &telemetry.cpuPercent, &telemetry.rssMiB, &telemetry.gpuUtil,
                    &telemetry.memUtil, &telemetry.powerW, &telemetry.smClockMHz,
                    &telemetry.memClockMHz, &telemetry.temperatureC}) {
        v->reserve(telemetrySamples);
    }
}

void RunView::finish(RunResult r) {
    // The final result carries every step and sample. The series built live from events
    // match it and are kept; otherwise (a run opened from a file, or refused before it
    // started) they are rebuilt from the result.
    const bool seriesMatch = series.total.size() == r.steps.size() &&
                             memory.tS.size() == r.memoryTimeline.size() &&
                             telemetry.tS.size() == r.telemetry.size();
    if (seriesMatch) {
        result = std::move(r);
    } else {
        // A fresh view whose series are built from the result's records, as if they had
        // arrived as events; the records themselves are kept as they came (a run opened from
        // a file is most of its memory: never copied).
        // Its memory timeline waits until a chart asks for it (ensureTimeline).
        RunView rebuilt;
        rebuilt.runIndex = runIndex;
        rebuilt.result = std::move(r);
        rebuilt.m_lazyTimeline = true;
        rebuilt.m_timelineBuilt = false;
        const RunResult& kept = rebuilt.result;
        rebuilt.reserveSeries(kept.steps.size(), kept.telemetry.size());
        for (const auto& s : kept.steps) {
            rebuilt.stepSeries(s);
        }
        for (const auto& t : kept.telemetry) {
            rebuilt.telemetrySeries(t);
        }
        *this = std::move(rebuilt);
    }
    started = true;
    finished = true;
}

const RunSummary& RunView::liveSummary() {
    if (finished) {
        return result.summary;
    }
    if (m_summaryDirty) {
        m_liveSummary = m_watched.thinning() ? m_watched.summary(result.config)
                                             : summarize(result.config, result.steps, std::nullopt);
        m_summaryDirty = false;
    }
    return m_liveSummary;
}

RunView& RunStore::viewFor(int runIndex) {
    if (RunView* v = findBySessionIndex(runIndex)) {
        return *v;
    }
    RunView& v = addView();
    v.runIndex = runIndex;
    return v;
}

RunView& RunStore::addView() {
    return m_runs.emplace_back(); // its colour comes with its id (refreshSelection)
}

RunView* RunStore::findBySessionIndex(int runIndex) {
    for (auto& r : m_runs) {
        if (r.runIndex == runIndex && runIndex >= 0) {
            return &r;
        }
    }
    return nullptr;
}

RunView* RunStore::active() {
    for (auto& r : m_runs) {
        if (r.started && !r.finished) {
            return &r;
        }
    }
    return nullptr;
}

void RunStore::apply(std::vector<SessionEvent>& events) {
    for (auto& e : events) {
        apply(e);
    }
}

void RunStore::apply(SessionEvent& event) {
    if (auto* e = std::get_if<RunStarted>(&event)) {
        RunView& v = viewFor(e->runIndex);
        v.result = std::move(e->header);
        v.started = true;
        selectOnly(static_cast<int>(&v - m_runs.data()));
    } else if (auto* e = std::get_if<StepFinished>(&event)) {
        viewFor(e->runIndex).addStep(e->step);
    } else if (auto* e = std::get_if<MemorySampled>(&event)) {
        viewFor(e->runIndex).addSample(e->sample);
    } else if (auto* e = std::get_if<TelemetrySampled>(&event)) {
        viewFor(e->runIndex).addTelemetry(e->sample);
    } else if (auto* e = std::get_if<RunFinished>(&event)) {
        viewFor(e->runIndex).finish(e->result);
    }
}

std::unordered_set<std::string> RunStore::takenIds() const {
    std::unordered_set<std::string> taken;
    for (const auto& v : m_runs) {
        taken.insert(v.result.id);
    }
    for (const auto& [index, claimed] : m_sessionIds) {
        taken.insert(claimed);
    }
    return taken;
}

namespace {

// "tiny-ctx128-fp32-train-7": the label and the number after its last dash; none for an id
// with no number.
std::optional<std::pair<std::string, long>> labelAndNumber(const std::string& id) {
    const size_t dash = id.find_last_of('-');
    if (dash == std::string::npos || dash + 1 >= id.size() || id.size() - dash - 1 > 9 ||
        id.find_first_not_of("0123456789", dash + 1) != std::string::npos) {
        return std::nullopt;
    }
    return std::pair{id.substr(0, dash), std::stol(id.substr(dash + 1))};
}

// "tiny-ctx128-fp32-train-1" from the engine, 3rd in the Runs table: "...-train-3", the
// number the # column shows, so that runs of a restored session and this one's do not
// repeat numbers across labels. An id with no number keeps its own.
std::string numberedAs(const std::string& id, size_t place) {
    const auto parts = labelAndNumber(id);
    return parts ? parts->first + "-" + std::to_string(place) : id;
}

} // namespace

std::string RunStore::uniqueId(const std::string& id, int runIndex,
                               std::unordered_set<std::string>& taken) const {
    // A hit on the run's own view (the same engine run seen again) does not count.
    const auto isTaken = [&](const std::string& candidate) {
        if (!taken.count(candidate)) {
            return false;
        }
        return runIndex < 0 || std::none_of(m_runs.begin(), m_runs.end(), [&](const RunView& v) {
                   return v.runIndex == runIndex && v.result.id == candidate;
               });
    };
    std::string unique = id;
    if (isTaken(id)) {
        const auto parts = labelAndNumber(id);
        const std::string base = parts ? parts->first : id;
        long number = parts ? parts->second : 1;
        do {
            unique = base + "-" + std::to_string(++number);
        } while (isTaken(unique));
    }
    taken.insert(unique);
    return unique;
}

void RunStore::claimIds(std::vector<SessionEvent>& events) {
    std::optional<std::unordered_set<std::string>> taken; // made at the first new run
    size_t added = 0; // new runs of this batch, given places after the runs here
    const auto claim = [&](int runIndex, std::string& id) {
        auto it = m_sessionIds.find(runIndex);
        if (it == m_sessionIds.end()) {
            if (!taken) {
                taken = takenIds();
            }
            const auto view = std::find_if(m_runs.begin(), m_runs.end(), [&](const RunView& v) {
                return v.runIndex == runIndex;
            });
            const size_t place = view != m_runs.end()
                                     ? static_cast<size_t>(view - m_runs.begin()) + 1
                                     : m_runs.size() + ++added;
            it = m_sessionIds.emplace(runIndex, uniqueId(numberedAs(id, place), runIndex, *taken))
                     .first;
        }
        id = it->second;
    };
    for (auto& e : events) {
        if (auto* started = std::get_if<RunStarted>(&e)) {
            claim(started->runIndex, started->header.id);
        } else if (auto* finished = std::get_if<RunFinished>(&e)) {
            claim(finished->runIndex, finished->result.id);
        }
    }
}

size_t RunStore::addLoaded(std::vector<RunResult> runs, bool fromFile) {
    // A run already here (the same file opened twice, a restore after an open) is the same
    // run written the same way: compared by its JSON line, every field. The lines are kept
    // as hashes (a run's line can be megabytes), and compared whole where two hashes meet.
    std::unordered_multimap<size_t, const RunResult*> present;
    const auto line = [](const RunResult& r) { return runToJsonLine(r); };
    for (const auto& v : m_runs) {
        if (v.finished) {
            present.emplace(std::hash<std::string>{}(line(v.result)), &v.result);
        }
    }
    std::vector<size_t> fresh; // the indices in runs of those to add
    for (size_t i = 0; i < runs.size(); ++i) {
        const std::string text = line(runs[i]);
        const size_t hash = std::hash<std::string>{}(text);
        const auto [from, to] = present.equal_range(hash);
        if (std::none_of(from, to, [&](const auto& p) { return line(*p.second) == text; })) {
            present.emplace(hash, &runs[i]);
            fresh.push_back(i);
        }
    }
    std::unordered_set<std::string> taken = takenIds();
    for (const size_t i : fresh) {
        const std::string id = uniqueId(runs[i].id, -1, taken);
        RunView& v = addView();
        v.finish(std::move(runs[i]));
        v.result.id = id;
        v.fromFile = fromFile;
    }
    return fresh.size();
}

void RunStore::addDtypeReport(DtypeReport report) {
    auto& reports = m_lab.dtypes;
    const auto same = std::find_if(reports.begin(), reports.end(), [&](const DtypeReport& d) {
        return d.model == report.model && d.precision == report.precision &&
               d.device == report.device;
    });
    if (same != reports.end()) {
        *same = std::move(report);
    } else {
        reports.push_back(std::move(report));
    }
}

bool RunStore::mergeLab(const PrecisionLab& opened) {
    if (opened.accumulation) {
        m_lab.accumulation = opened.accumulation;
    }
    for (const auto& d : opened.dtypes) {
        addDtypeReport(d);
    }
    return !opened.empty();
}

ResultSet RunStore::toResultSet(const Environment& environment) const {
    ResultSet set;
    set.environment = environment;
    set.precisionLab = m_lab;
    for (const auto& v : m_runs) {
        if (v.finished) {
            set.runs.push_back(v.result);
        }
    }
    return set;
}

bool RunStore::isSelected(int i) const {
    return std::find(m_selection.begin(), m_selection.end(), i) != m_selection.end();
}

void RunStore::selectOnly(int i) {
    m_selection = {i};
}

std::vector<std::string> RunStore::selectedIds() const {
    std::vector<std::string> ids;
    for (int i : m_selection) {
        if (i >= 0 && i < static_cast<int>(m_runs.size())) {
            ids.push_back(m_runs[static_cast<size_t>(i)].result.id);
        }
    }
    return ids;
}

void RunStore::select(std::vector<int> rows) {
    if (!rows.empty()) {
        m_selection = std::move(rows);
    }
}

void RunStore::selectLast(size_t n) {
    if (n == 0) {
        return;
    }
    m_selection.clear();
    for (size_t i = m_runs.size() - std::min(n, m_runs.size()); i < m_runs.size(); ++i) {
        m_selection.push_back(static_cast<int>(i));
    }
}

void RunStore::selectNewestOf(size_t n) {
    if (n > 0 && !m_runs.empty()) {
        selectOnly(static_cast<int>(m_runs.size()) - 1);
    }
}

void RunStore::toggle(int i) {
    const auto it = std::find(m_selection.begin(), m_selection.end(), i);
    if (it == m_selection.end()) {
        m_selection.push_back(i);
    } else if (m_selection.size() > 1) {
        m_selection.erase(it);
    }
}

void RunStore::refreshSelection() {
    std::vector<RunView*> selected;
    for (int i : m_selection) {
        if (i >= 0 && i < static_cast<int>(m_runs.size())) {
            selected.push_back(&m_runs[i]);
        }
    }
    for (RunView* v : selected) {
        if (!v->m_colorFromId && !v->result.id.empty()) {
            v->color = colorOfId(v->result.id, kRunColorCount);
            v->m_colorFromId = true;
        }
    }
    // First the runs that keep their colour (the first selected of each colour), then each
    // run whose colour was taken gets one no selected run has: only clashing runs change.
    std::vector<bool> taken(kRunColorCount, false);
    std::vector<RunView*> clashing; // each run whose colour an earlier selected run has
    for (RunView* v : selected) {
        if (taken[v->color]) {
            clashing.push_back(v);
        }
        taken[v->color] = true;
    }
    // Past kRunColorCount runs colours repeat: each clashing run takes the colour fewest
    // selected runs have (and a marker below tells them apart).
    std::vector<int> holders(kRunColorCount, 0);
    for (const RunView* v : selected) {
        if (std::find(clashing.begin(), clashing.end(), v) == clashing.end()) {
            ++holders[v->color];
        }
    }
    for (RunView* v : clashing) {
        const auto least = std::min_element(holders.begin(), holders.end());
        v->color = static_cast<int>(least - holders.begin());
        ++*least;
    }
    std::vector<int> uses(kRunColorCount, 0);
    for (RunView* v : selected) {
        v->style = uses[v->color]++;
    }
    std::vector<const RunResult*> results;
    for (const RunView* v : selected) {
        results.push_back(&v->result);
    }
    const auto names = distinguishingNames(results);
    for (size_t k = 0; k < selected.size(); ++k) {
        selected[k]->name = names[k];
    }
    releaseTimelines();
}

void RunStore::releaseTimelines() {
    std::vector<RunView*> built;
    for (RunView& v : m_runs) {
        if (v.m_lazyTimeline && v.m_timelineBuilt) {
            built.push_back(&v);
        }
    }
    if (built.size() <= kKeptTimelines) {
        return;
    }
    std::nth_element(
        built.begin(), built.begin() + kKeptTimelines, built.end(),
        [](const RunView* a, const RunView* b) { return a->m_timelineUsed > b->m_timelineUsed; });
    for (auto it = built.begin() + kKeptTimelines; it != built.end(); ++it) {
        (*it)->dropTimeline();
    }
}

} // namespace lmprof::ui
