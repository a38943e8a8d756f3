// Sweep builder: pick models, context lengths, precisions, modes and warmup counts; see the
// number of runs and their estimated cost; run them cheapest first (one at a time, so an
// out-of-memory run can spare the larger configurations of its family); progress with an
// ETA over the whole sweep; cancel.

#include "sweep_view.h"

#include "int_list.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/report.h"
#include "theme.h"

#include <algorithm>
#include <cstdio>
#include <imgui.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

std::string formatFlops(double flops) {
    char buf[32];
    if (flops >= 1e15) {
        std::snprintf(buf, sizeof(buf), "%.1f PFLOP", flops / 1e15);
    } else if (flops >= 1e12) {
        std::snprintf(buf, sizeof(buf), "%.1f TFLOP", flops / 1e12);
    } else {
        std::snprintf(buf, sizeof(buf), "%.1f GFLOP", flops / 1e9);
    }
    return buf;
}

std::string formatDuration(double seconds) {
    char buf[32];
    if (seconds >= 3600) {
        std::snprintf(buf, sizeof(buf), "%.1f h", seconds / 3600);
    } else if (seconds >= 90) {
        std::snprintf(buf, sizeof(buf), "%.1f min", seconds / 60);
    } else {
        std::snprintf(buf, sizeof(buf), "%.0f s", seconds);
    }
    return buf;
}

// FLOPs per millisecond the finished runs of this session reached, for a time estimate
// before the sweep starts; nullopt before any run has finished ok.
std::optional<double> observedFlopsPerMs(const RunStore& store) {
    double flops = 0.0, ms = 0.0;
    for (const auto& v : store.runs()) {
        const PhaseStats& t = v.result.summary.totalMs;
        if (v.finished && v.result.status == RunStatus::Ok && t.n > 0) {
            flops += stepFlops(v.result.config) * t.n;
            ms += t.mean * t.n;
        }
    }
    return ms > 0.0 ? std::optional(flops / ms) : std::nullopt;
}

// Continues the line when a checkbox labelled `label` still fits, else starts a new one.
void sameLineIfFits(const char* label, bool first) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float width =
        ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
    // After an item the cursor sits at the start of the next line: its right edge is the
    // content region's.
    const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
    if (!first && ImGui::GetItemRectMax().x + style.ItemSpacing.x + width <= right) {
        ImGui::SameLine();
    }
}

void checkbox(const std::string& label, char& ticked, bool first) {
    sameLineIfFits(label.c_str(), first);
    bool on = ticked;
    if (ImGui::Checkbox(label.c_str(), &on)) {
        ticked = on;
    }
}

// One checkbox per option, wrapped to the window's width.
template <typename T, size_t N>
void checkboxRow(const std::array<T, N>& options, std::vector<char>& ticked) {
    for (size_t i = 0; i < N; ++i) {
        checkbox(std::string(toString(options[i])), ticked[i], i == 0);
    }
}

} // namespace

void SweepView::observe(ViewContext&, const std::vector<SessionEvent>& events) {
    m_driver.observe(events);
}

void SweepView::initFrom(const RunConfig& c) {
    const auto& presets = presetNames();
    m_models.assign(presets.size(), 0);
    for (size_t i = 0; i < presets.size(); ++i) {
        m_models[i] = presets[i] == c.model.preset;
    }
    m_customModel = c.model.preset == "custom";
    m_precisions.assign(std::size(kPrecisions), 0);
    m_modes.assign(std::size(kModes), 0);
    for (size_t i = 0; i < std::size(kPrecisions); ++i) {
        m_precisions[i] = kPrecisions[i] == c.precision;
    }
    for (size_t i = 0; i < std::size(kModes); ++i) {
        m_modes[i] = kModes[i] == c.mode;
    }
    std::snprintf(m_contexts, sizeof(m_contexts), "%lld, %lld",
                  static_cast<long long>(c.contextLength),
                  static_cast<long long>(2 * c.contextLength));
    std::snprintf(m_batches, sizeof(m_batches), "%lld", static_cast<long long>(c.batchSize));
    std::snprintf(m_warmups, sizeof(m_warmups), "0, 1, 2, 5");
    m_choices.clear();
    for (const ChoiceField& f : choiceFields()) {
        std::vector<char> ticked(f.values.size(), 0);
        for (size_t i = 0; i < f.values.size(); ++i) {
            ticked[i] = f.values[i] == f.get(c);
        }
        m_choices.push_back(std::move(ticked));
    }
    m_valueLists.clear();
    for (const ValueField& f : valueFields()) {
        if (f.sweepAxis) {
            ValueList& list = m_valueLists.emplace_back();
            list.key = f.key;
            list.configured = f.text(c);
            std::snprintf(list.text.data(), list.text.size(), "%s", list.configured.c_str());
        }
    }
    m_initialised = true;
}

namespace {

std::string_view toString(const std::string& s) {
    return s;
}

// The names of the ticked options, and back (names no longer offered are dropped).
template <typename Names>
nlohmann::json tickedNames(const Names& names, const std::vector<char>& ticked) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < ticked.size() && i < std::size(names); ++i) {
        if (ticked[i]) {
            out.push_back(std::string(toString(names[i])));
        }
    }
    return out;
}
template <typename Names>
void tickNames(const nlohmann::json& saved, const Names& names, std::vector<char>& ticked) {
    if (!saved.is_array()) {
        return;
    }
    std::fill(ticked.begin(), ticked.end(), 0);
    for (const auto& v : saved) {
        for (size_t i = 0; i < ticked.size() && i < std::size(names); ++i) {
            if (v.is_string() && v.get<std::string>() == toString(names[i])) {
                ticked[i] = 1;
            }
        }
    }
}
template <size_t N>
void copyText(const nlohmann::json& saved, char (&out)[N]) {
    if (saved.is_string()) {
        std::snprintf(out, N, "%s", saved.get<std::string>().c_str());
    }
}

} // namespace

std::string SweepView::formJson() const {
    nlohmann::json j = {{"models", tickedNames(presetNames(), m_models)},
                        {"custom_model", m_customModel},
                        {"contexts", m_contexts},
                        {"precisions", tickedNames(kPrecisions, m_precisions)},
                        {"modes", tickedNames(kModes, m_modes)},
                        {"warmups", m_warmups},
                        {"batches", m_batches},
                        {"run_after_oom", m_runAfterOom}};
    const auto& fields = choiceFields();
    for (size_t f = 0; f < fields.size() && f < m_choices.size(); ++f) {
        j["variants"][fields[f].key] = tickedNames(fields[f].values, m_choices[f]);
    }
    for (const ValueList& list : m_valueLists) {
        j["values"][list.key] = list.text.data();
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void SweepView::applyForm(const std::string& text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) {
        return;
    }
    const auto at = [&](const char* key) { return j.value(key, nlohmann::json()); };
    tickNames(at("models"), presetNames(), m_models);
    tickNames(at("precisions"), kPrecisions, m_precisions);
    tickNames(at("modes"), kModes, m_modes);
    copyText(at("contexts"), m_contexts);
    copyText(at("warmups"), m_warmups);
    copyText(at("batches"), m_batches);
    for (auto [key, flag] :
         {std::pair{"custom_model", &m_customModel}, std::pair{"run_after_oom", &m_runAfterOom}}) {
        if (const auto v = at(key); v.is_boolean()) {
            *flag = v.get<bool>();
        }
    }
    const auto& fields = choiceFields();
    const auto variants = at("variants");
    for (size_t f = 0; f < fields.size() && f < m_choices.size() && variants.is_object(); ++f) {
        tickNames(variants.value(fields[f].key, nlohmann::json()), fields[f].values, m_choices[f]);
    }
    const auto values = at("values");
    for (ValueList& list : m_valueLists) {
        if (values.is_object()) {
            const auto saved = values.value(list.key, nlohmann::json());
            if (saved.is_string()) {
                std::snprintf(list.text.data(), list.text.size(), "%s",
                              saved.get<std::string>().c_str());
            }
        }
    }
}

namespace {

// The first configuration's first problem, "id: field: why", or nullopt. Runs each frame: the
// engine's check (which asks the runtime) once per precision, set of variants (a forced
// attention backend is probed for each) and thread count (bounded by the engine's CPUs); a
// seed is nothing the engine checks.
std::optional<std::string> firstProblem(const std::vector<RunConfig>& configs,
                                        const SessionInterface& engine) {
    std::set<std::string> checked;
    for (const auto& c : configs) {
        auto problems = validate(c);
        std::string family(toString(c.precision));
        for (const ChoiceField& f : choiceFields()) {
            family += " " + f.get(c);
        }
        family += " threads " + std::to_string(c.threads);
        if (problems.empty() && checked.insert(family).second) {
            if (auto refusal = engine.checkRunnable(c)) {
                problems.push_back(*refusal);
            }
        }
        if (!problems.empty()) {
            return runLabel(c) + ": " + problems.front().message();
        }
    }
    return std::nullopt;
}

} // namespace

bool SweepView::addValueLists(SweepSpec& spec, std::string& error) const {
    for (const ValueList& list : m_valueLists) {
        const ValueField& field = *valueField(list.key);
        std::string listError; // the range is the field's to say (valueError)
        const auto values =
            parseIntList(list.text.data(), std::numeric_limits<int64_t>::min(), &listError);
        if (!values) {
            error = field.label + ": " + listError;
            return false;
        }
        if (auto why = field.listError(*values)) {
            error = field.label + ": " + *why;
            return false;
        }
        spec.values.emplace_back(list.key, *values);
    }
    return true;
}

std::vector<RunConfig> SweepView::buildConfigs(const RunConfig& base,
                                               const SessionInterface& engine,
                                               std::string& error) const {
    SweepSpec spec;
    spec.base = base;
    const auto& presets = presetNames();
    for (size_t i = 0; i < presets.size(); ++i) {
        if (m_models[i]) {
            spec.models.push_back(*pickPreset(base.model, presets[i]));
        }
    }
    if (m_customModel && base.model.preset == "custom") {
        spec.models.push_back(base.model);
    }
    for (size_t i = 0; i < std::size(kPrecisions); ++i) {
        if (m_precisions[i]) {
            spec.precisions.push_back(kPrecisions[i]);
        }
    }
    for (size_t i = 0; i < std::size(kModes); ++i) {
        if (m_modes[i]) {
            spec.modes.push_back(kModes[i]);
        }
    }
    std::string listError;
    const auto contexts = parseIntList(m_contexts, 1, &listError);
    if (!contexts) {
        error = "context lengths: " + listError;
        return {};
    }
    spec.contexts = *contexts;
    const auto batches = parseIntList(m_batches, 1, &listError);
    if (!batches) {
        error = "batch sizes: " + listError;
        return {};
    }
    spec.batches = *batches;
    const auto& fields = choiceFields();
    for (size_t f = 0; f < fields.size(); ++f) {
        std::vector<std::string> values;
        for (size_t i = 0; i < fields[f].values.size(); ++i) {
            if (m_choices[f][i]) {
                values.push_back(fields[f].values[i]);
            }
        }
        if (values.empty()) {
            error = "tick at least one " + fields[f].key + " value";
            return {};
        }
        spec.choices.emplace_back(fields[f].key, std::move(values));
    }
    if (!addValueLists(spec, error)) {
        return {};
    }
    const auto warmups = parseIntList(m_warmups, 0, &listError);
    if (!warmups) {
        error = "warmup counts: " + listError;
        return {};
    }
    spec.warmups.assign(warmups->begin(), warmups->end());
    if (spec.models.empty() || spec.precisions.empty() || spec.modes.empty()) {
        error = "tick at least one model, precision and mode";
        return {};
    }
    auto configs = expandSweep(spec);
    if (auto problem = firstProblem(configs, engine)) {
        error = *problem;
        return {};
    }
    return configs;
}

void SweepView::start(ViewContext& ctx, std::vector<RunConfig> configs) {
    if (ctx.experimentRunning) {
        ctx.report("sweep not started: the precision lab's experiment is running; wait for it "
                   "or cancel it",
                   true);
        return;
    }
    SessionInterface& session = ctx.session;
    RunStore& store = ctx.store;
    const size_t n = configs.size();
    for (RunConfig& c : configs) {
        if (c.opProfile) {
            c.opProfile->tracePath = tracePath(ctx, c); // each run its own trace
        }
    }
    m_driver.start(
        std::move(configs), m_runAfterOom,
        [&session](const RunConfig& c) { return session.submit(c); },
        [&store](const RunResult& skipped) { store.addLoaded({skipped}, /*fromFile=*/false); });
    ctx.report("sweep started: " + std::to_string(n) + " run(s), cheapest first", false);
}

void SweepView::drawProgress() {
    const engine::SweepDriver::Progress p = m_driver.progress();
    if (p.total == 0) {
        ImGui::ProgressBar(0.0f, ImVec2(-1, 0), "no sweep yet");
        return;
    }
    char overlay[160];
    const int n =
        std::snprintf(overlay, sizeof(overlay), "%zu / %zu done", p.finished + p.skipped, p.total);
    std::string extra;
    if (p.skipped) {
        extra += ", " + std::to_string(p.skipped) + " skipped (after oom)";
    }
    if (p.failed) {
        extra += ", " + std::to_string(p.failed) + " failed";
    }
    if (m_driver.running()) {
        extra += p.etaSeconds ? "   ETA " + formatDuration(*p.etaSeconds) : "   ETA ...";
    } else if (p.finished + p.skipped < p.total) {
        extra += "   stopped";
    }
    std::snprintf(overlay + n, sizeof(overlay) - n, "%s", extra.c_str());
    ImGui::ProgressBar(static_cast<float>(p.fraction()), ImVec2(-1, 0), overlay);
}

void SweepView::drawVariantTicks() {
    ImGui::SeparatorText("Execution variants");
    const auto& fields = choiceFields();
    for (size_t f = 0; f < fields.size(); ++f) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%s", fields[f].key.c_str());
        ImGui::SetItemTooltip("%s", fields[f].help.c_str());
        for (size_t i = 0; i < fields[f].values.size(); ++i) {
            ImGui::PushID(static_cast<int>(f));
            checkbox(fields[f].values[i], m_choices[f][i], false);
            ImGui::PopID();
        }
    }
}

void SweepView::drawValueLists(const RunConfig& configured) {
    for (ValueList& list : m_valueLists) {
        const ValueField& field = *valueField(list.key);
        if (std::string now = field.text(configured); now != list.configured) {
            std::snprintf(list.text.data(), list.text.size(), "%s", now.c_str());
            list.configured = std::move(now);
        }
        ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 8.0f);
        ImGui::InputText(field.label.c_str(), list.text.data(), list.text.size());
        ImGui::SetItemTooltip("%s; a comma-separated list sweeps it (Configure's value when "
                              "that changes)",
                              field.help.c_str());
    }
}

void SweepView::draw(ViewContext& ctx) {
    if (!m_initialised) {
        initFrom(ctx.form.config());
        applyForm(ctx.settings.sweep); // as the last launch left it
    }
    ctx.settings.sweep = formJson();
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const RunConfig& base = ctx.form.config();
    ImGui::SeparatorText("Models");
    const auto& presets = presetNames();
    for (size_t i = 0; i < presets.size(); ++i) {
        checkbox(presets[i], m_models[i], i == 0);
    }
    if (base.model.preset == "custom") {
        ImGui::Checkbox("custom (the Configure panel's dimensions)", &m_customModel);
    }
    ImGui::SeparatorText("Lengths, precisions, modes and other lists");
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 8.0f);
    ImGui::InputText("context lengths", m_contexts, sizeof(m_contexts));
    checkboxRow(kPrecisions, m_precisions);
    checkboxRow(kModes, m_modes);
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 8.0f);
    ImGui::InputText("warmup counts", m_warmups, sizeof(m_warmups));
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 8.0f);
    ImGui::InputText("batch sizes", m_batches, sizeof(m_batches));
    drawValueLists(base);
    drawVariantTicks();
    ImGui::Checkbox("run after OOM", &m_runAfterOom);
    ImGui::SetItemTooltip("Also run configurations at least as large as one that ran out of "
                          "memory (same precision and mode). Otherwise they are marked "
                          "skipped (after oom).");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%d measured steps, device %s: from Configure", base.measureSteps,
                       base.device.c_str());
    ImGui::PopStyleColor();

    std::string error;
    std::vector<RunConfig> configs = buildConfigs(base, ctx.session, error);
    ImGui::Separator();
    if (!error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().error);
        ImGui::TextWrapped("%s", error.c_str());
        ImGui::PopStyleColor();
    } else {
        const double flops = totalFlops(configs);
        std::string estimate =
            std::to_string(configs.size()) + " run(s), about " + formatFlops(flops);
        if (auto rate = observedFlopsPerMs(ctx.store)) {
            estimate +=
                ", ~" + formatDuration(flops / *rate / 1000.0) + " at this session's rate so far";
        }
        ImGui::TextWrapped("%s", estimate.c_str());
    }
    const bool busy = ctx.session.busy() || m_driver.running();
    ImGui::BeginDisabled(configs.empty() || busy);
    if (ImGui::Button("Run sweep", ImVec2(ImGui::GetFontSize() * 7, 0))) {
        start(ctx, std::move(configs));
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!m_driver.running());
    if (ImGui::Button("Cancel##sweep", ImVec2(ImGui::GetFontSize() * 7, 0))) {
        m_driver.cancel();
        ctx.session.cancel();
        ctx.report("sweep cancelled: the current run stops after its step", false);
    }
    ImGui::EndDisabled();
    drawProgress();
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry sweepWindow() {
    return windowOf<SweepView>(DockSlot::Left);
}

} // namespace lmprof::ui
