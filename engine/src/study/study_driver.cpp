// StudyDriver (study_driver.h): a study's calibration, its runs and its lab on the engine,
// one at a time, each written into the study's folder as it ends.

#include "lmprof/engine/study_driver.h"

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <utility>

namespace lmprof::engine {

namespace fs = std::filesystem;

namespace {

// The lab of a study: the accumulation experiment, and the ToyModel's dtypes in fp16 and bf16
// (slots 1 and 2 of PrecisionLab::dtypes).
constexpr std::array kLabPrecisions{Precision::Fp16, Precision::Bf16};

} // namespace

bool StudyDriver::busy() const {
    return m_phase == Phase::Calibrating || m_phase == Phase::Running || m_phase == Phase::Lab;
}

bool StudyDriver::complete() const {
    const bool allRun = std::all_of(m_plan.runs.begin(), m_plan.runs.end(),
                                    [&](const StudyRun& r) { return m_done.count(r.id) > 0; });
    return allRun && (!m_plan.lab || fs::exists(m_dir / "lab.json"));
}

double StudyDriver::estimateLeftS() const {
    double left = 0.0;
    for (const StudyRun& r : m_plan.runs) {
        left += m_done.count(r.id) ? 0.0 : r.estimateS;
    }
    const bool labLeft = m_plan.lab && (m_dir.empty() || !fs::exists(m_dir / "lab.json"));
    return left + (labLeft ? m_plan.labEstimateS : 0.0);
}

void StudyDriver::tell(Change change) const {
    if (m_listener) {
        m_listener(change, *this);
    }
}

void StudyDriver::fail(std::string why, Phase phase) {
    m_message = std::move(why);
    m_phase = phase;
    m_runWhenPlanned = false;
    tell(Change::Failed);
}

void StudyDriver::clear() {
    *this = StudyDriver(std::move(m_listener));
}

std::optional<ConfigError> StudyDriver::refusal(const SessionInterface& engine,
                                                const StudyRequest& request) {
    const auto calibration = nextCalibrationRun(request);
    return calibration ? engine.checkRunnable(*calibration) : std::nullopt;
}

bool StudyDriver::plan(SessionInterface& engine, StudyRequest request, fs::path dir) {
    *this = StudyDriver(std::move(m_listener));
    m_request = std::move(request);
    m_dir = std::move(dir);
    if (auto refused = refusal(engine, m_request)) {
        fail(refused->message(), Phase::Idle);
        return false;
    }
    const auto calibration = nextCalibrationRun(m_request);
    if (!calibration) { // rates given (--rate): nothing to measure
        planned(engine);
        return m_phase != Phase::Idle;
    }
    m_calibrating = *calibration;
    m_calibrationIndex = engine.submit(m_calibrating);
    m_phase = Phase::Calibrating;
    tell(Change::Calibrating);
    return true;
}

bool StudyDriver::resume(SessionInterface& engine, fs::path dir,
                         std::optional<ConfigError>* refusal) {
    *this = StudyDriver(std::move(m_listener));
    m_dir = std::move(dir);
    std::optional<StudyRequest> saved;
    try {
        saved = loadStudyRequest(m_dir);
        m_done = finishedStudyRuns(m_dir);
    } catch (const std::exception& e) {
        fail(e.what(), Phase::Idle);
        return false;
    }
    if (!saved) {
        fail(m_dir.string() + ": no study plan (plan.json) to resume", Phase::Idle);
        return false;
    }
    // A saved plan is for its device: resumed where that device is missing, every run would
    // end as an error and the study's machine would be overwritten.
    RunConfig probe;
    probe.device = saved->device;
    probe.threads = saved->threads;
    if (auto refused = engine.checkRunnable(probe)) {
        if (refusal) {
            *refusal = refused;
        }
        fail(m_dir.string() + " was planned for " + saved->device +
                 ", which this engine cannot run (" + refused->message() + ")",
             Phase::Idle);
        return false;
    }
    m_request = std::move(*saved);
    m_plan = planStudy(m_request);
    m_phase = complete() ? Phase::Done : Phase::Planned;
    return true;
}

// The calibration is over (or was never needed): the plan, saved at once so a study
// folder always says what it was planned for.
void StudyDriver::planned(SessionInterface& engine) {
    m_plan = planStudy(m_request);
    m_phase = Phase::Planned;
    if (!m_dir.empty() && !savePlan(engine)) {
        return;
    }
    tell(Change::Planned);
    if (std::exchange(m_runWhenPlanned, false) && !m_cancelled) {
        run(engine);
    }
}

bool StudyDriver::savePlan(SessionInterface& engine) {
    try {
        saveStudyPlan(m_dir, m_request, m_plan, engine.environment(m_request.device));
    } catch (const std::exception& e) { // a full disk: nothing runs unrecorded
        fail(e.what(), Phase::Idle);
        return false;
    }
    m_planSaved = true;
    return true;
}

void StudyDriver::run(SessionInterface& engine) {
    if (m_phase == Phase::Idle || busy() || m_dir.empty() || (!m_planSaved && !savePlan(engine))) {
        return;
    }
    m_cancelled = false;
    m_message.clear();
    submitNext(engine);
}

void StudyDriver::submitNext(SessionInterface& engine) {
    if (m_cancelled) {
        m_phase = Phase::Planned;
        return;
    }
    for (const StudyRun& r : m_plan.runs) {
        if (!m_done.count(r.id)) {
            m_current = &r;
            m_runIndex = engine.submit(r.config);
            m_phase = Phase::Running;
            tell(Change::RunStarted);
            return;
        }
    }
    if (m_plan.lab && !fs::exists(m_dir / "lab.json")) {
        submitLab(engine);
        return;
    }
    m_phase = Phase::Done;
    tell(Change::Done);
}

void StudyDriver::submitLab(SessionInterface& engine) {
    m_lab = PrecisionLab{};
    m_lab.dtypes.resize(kLabPrecisions.size());
    m_labs.clear();
    AccumulationRequest accumulate;
    accumulate.device = m_request.device;
    m_labs[engine.submitLab(accumulate)] = 0;
    for (size_t i = 0; i < kLabPrecisions.size(); ++i) {
        DtypeRequest dtypes;
        dtypes.device = m_request.device;
        dtypes.precision = kLabPrecisions[i];
        m_labs[engine.submitLab(dtypes)] = i + 1;
    }
    m_phase = Phase::Lab;
    tell(Change::LabStarted);
}

void StudyDriver::observe(SessionInterface& engine, const std::vector<SessionEvent>& events) {
    for (const SessionEvent& event : events) {
        observe(engine, event);
    }
}

void StudyDriver::observe(SessionInterface& engine, const SessionEvent& event) {
    if (const auto* fin = std::get_if<RunFinished>(&event)) {
        if (m_phase == Phase::Calibrating && fin->runIndex == m_calibrationIndex) {
            m_calibrationIndex = -1;
            calibrated(engine, fin->result);
        } else if (m_phase == Phase::Running && fin->runIndex == m_runIndex) {
            m_runIndex = -1;
            runEnded(engine, fin->result);
        }
    } else if (const auto* lab = std::get_if<LabFinished>(&event);
               lab && m_phase == Phase::Lab && m_labs.count(lab->labIndex)) {
        labEnded(engine, *lab);
    }
}

void StudyDriver::calibrated(SessionInterface& engine, const RunResult& result) {
    if (m_cancelled) { // rates measured in part would plan another study: nothing is saved
        fail("cancelled while calibrating; nothing was planned", Phase::Idle);
        return;
    }
    std::string why;
    const auto point = calibratedRate(result, why);
    if (!point) {
        fail(why, Phase::Idle);
        return;
    }
    m_request.rates.push_back(*point);
    if (const auto next = nextCalibrationRun(m_request)) {
        m_calibrating = *next; // a larger size's point
        m_calibrationIndex = engine.submit(m_calibrating);
        tell(Change::Calibrating);
        return;
    }
    planned(engine);
}

void StudyDriver::runEnded(SessionInterface& engine, const RunResult& result) {
    m_lastResult = result;
    m_lastResult.id = m_current->id;
    try {
        appendRunJsonl(m_dir / "runs.jsonl", m_lastResult);
    } catch (const std::exception& e) { // not recorded: the study stops rather than lose runs
        fail(e.what(), Phase::Planned);
        return;
    }
    m_cancelled = m_cancelled || result.status == RunStatus::Cancelled;
    if (studyRunDone(m_lastResult)) {
        m_done.insert(m_lastResult.id);
    } else if (!m_cancelled) { // its device is gone: every run after it would fail the same
        tell(Change::RunEnded);
        fail(m_lastResult.id + " could not run: " + m_lastResult.error.value_or("no reason") +
                 "; the study stops here, to be resumed where its device is",
             Phase::Planned);
        return;
    }
    tell(Change::RunEnded);
    submitNext(engine);
}

void StudyDriver::labEnded(SessionInterface& engine, const LabFinished& lab) {
    const size_t slot = m_labs.at(lab.labIndex);
    m_labs.erase(lab.labIndex);
    if (slot == 0) {
        m_lab.accumulation = std::get<AccumulationReport>(lab.report);
    } else {
        m_lab.dtypes[slot - 1] = std::get<DtypeReport>(lab.report);
    }
    if (!m_labs.empty()) {
        return;
    }
    if (m_cancelled) { // a cancelled lab is not the study's: a resume runs it again
        m_phase = Phase::Planned;
        return;
    }
    ResultSet set;
    set.created = utcNow();
    set.tool = toolInfo();
    set.environment = engine.environment(m_request.device);
    set.precisionLab = std::move(m_lab);
    try {
        saveResultSetAtomic(set, m_dir / "lab.json");
    } catch (const std::exception& e) {
        fail(e.what(), Phase::Planned);
        return;
    }
    m_phase = Phase::Done;
    tell(Change::Done);
}

} // namespace lmprof::engine
