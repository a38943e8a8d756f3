// Configure panel: model preset or custom dimensions with live validation, input shape,
// precision, mode, steps, device, seed; estimates; Run / Cancel; progress with ETA.

#include "lmprof/engine/devices.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/precision.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "plot_helpers.h"
#include "theme.h"
#include "value_inputs.h"
#include "view.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <imgui.h>
#include <type_traits>

namespace lmprof::ui {

class ConfigView final : public View {
public:
    static constexpr const char* kTitle = "Configure";
    void draw(ViewContext& ctx) override;

private:
    using Errors = std::map<std::string, std::string>; // field -> why (ConfigForm::errors)
    using RunConfig = engine::RunConfig;
    // The form's sections, top to bottom, and the footer with Run, Cancel and the progress.
    void drawModel(ViewContext& ctx, RunConfig& c, const Errors& errors);
    void drawInput(RunConfig& c, const Errors& errors);
    void drawRun(ViewContext& ctx, RunConfig& c, const Errors& errors);
    void drawDataParallel(ViewContext& ctx, RunConfig& c, const Errors& errors);
    void drawMemory(ViewContext& ctx, RunConfig& c, const Errors& errors);
    void drawOpProfile(ViewContext& ctx, RunConfig& c, const Errors& errors);
    void drawEstimate(ViewContext& ctx, const RunConfig& c);
    void drawFooter(ViewContext& ctx, RunConfig& c, const Errors& errors);

    bool m_customContext = false; // "custom" picked in the context combo
    std::string m_deviceBytesFor; // the engine and device m_deviceBytes was asked for
    int64_t m_deviceBytes = 0;
};

using namespace lmprof::engine;

namespace {

constexpr std::array<int64_t, 4> kContexts = {128, 256, 512, 1024};

bool inputInt64(const char* label, int64_t& v) {
    return ImGui::InputScalar(label, ImGuiDataType_S64, &v, nullptr, nullptr, "%" PRId64);
}

template <typename Enum, size_t N>
void enumCombo(const char* label, Enum& value, const std::array<Enum, N>& options) {
    if (ImGui::BeginCombo(label, std::string(toString(value)).c_str())) {
        for (Enum o : options) {
            if (ImGui::Selectable(std::string(toString(o)).c_str(), o == value)) {
                value = o;
            }
            if constexpr (std::is_same_v<Enum, Precision>) {
                if (ImGui::IsItemHovered()) {
                    const std::string_view what = traitsOf(o).description;
                    ImGui::SetTooltip("%.*s", static_cast<int>(what.size()), what.data());
                }
            }
        }
        ImGui::EndCombo();
    }
}

// Whether the configuration's device is a GPU: the device named, or for "auto" whether the
// engine has one (its device list names a cuda device).
bool runsOnCuda(const std::string& device, const std::vector<std::string>& devices) {
    if (device == "auto") {
        return std::any_of(devices.begin(), devices.end(),
                           [](const std::string& d) { return d.rfind("cuda", 0) == 0; });
    }
    return device.rfind("cuda", 0) == 0;
}

// A combo of a choice field (ChoiceField, config.h): its values, those the device cannot
// run disabled with the reason on hover, the field's help on the combo.
void choiceCombo(const ChoiceField& field, RunConfig& c, bool cuda) {
    const std::string current = field.get(c);
    if (ImGui::BeginCombo(field.key.c_str(), current.c_str())) {
        for (const std::string& v : field.values) {
            const auto refusal = field.deviceRefusal(v, cuda);
            if (ImGui::Selectable(v.c_str(), v == current,
                                  refusal ? ImGuiSelectableFlags_Disabled : 0)) {
                field.set(c, v);
            }
            if (refusal && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
                ImGui::SetTooltip("%s", refusal->c_str());
            }
        }
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", field.help.c_str());
    }
}

void drawProgress(ViewContext& ctx) {
    RunView* active = ctx.store.active();
    if (!active) {
        ImGui::ProgressBar(0.0f, ImVec2(-1, 0), ctx.session.busy() ? "starting..." : "idle");
        return;
    }
    const int done = static_cast<int>(active->result.steps.size());
    const int total = active->totalSteps();
    double msPerStep = 0.0;
    for (const auto& s : active->result.steps) {
        msPerStep += s.totalMs;
    }
    msPerStep = done > 0 ? msPerStep / done : 0.0;
    const double etaS = msPerStep * (total - done) / 1000.0;
    char overlay[96];
    // A count of steps done, not a step's index (which starts at 0).
    std::snprintf(overlay, sizeof(overlay), "%d of %d steps%s   ETA %.1f s", done, total,
                  done < active->result.config.warmupSteps ? " (warmup)" : "", etaS);
    ImGui::ProgressBar(total > 0 ? static_cast<float>(done) / total : 0.0f, ImVec2(-1, 0), overlay);
}

// Under a step field: what the step follows while the user has not picked one, else a button
// that makes it follow again.
template <typename Unpick>
void followingNote(bool picked, const char* follows, Unpick unpick) {
    if (!picked) {
        ImGui::TextDisabled("follows the warmup: %s", follows);
    } else if (ImGui::SmallButton((std::string("follow the warmup (") + follows + ")").c_str())) {
        unpick();
    }
}

} // namespace

void ConfigView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    ctx.form.followWarmup(); // unpicked profile and snapshot steps move with the warmup
    RunConfig& c = ctx.form.config();
    const auto errors = ctx.form.errors();
    // The form scrolls; Run, Cancel and the progress bar stay in a footer below it.
    const float footer = ImGui::GetFrameHeightWithSpacing() * 2.0f +
                         ImGui::GetStyle().ItemSpacing.y * 2.0f + 1.0f; // + the separator;
    ImGui::BeginChild("##form", ImVec2(0, -footer));
    ImGui::PushItemWidth(-ImGui::GetFontSize() * 7.5f);
    drawModel(ctx, c, errors);
    drawInput(c, errors);
    drawRun(ctx, c, errors);
    drawDataParallel(ctx, c, errors);
    drawMemory(ctx, c, errors);
    drawOpProfile(ctx, c, errors);
    ImGui::PopItemWidth();
    drawEstimate(ctx, c);
    ImGui::EndChild();
    drawFooter(ctx, c, errors);
    ImGui::End();
}

void ConfigView::drawModel(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Model");
    if (ImGui::BeginCombo("preset", c.model.preset.c_str())) {
        for (const auto& name : presetNames()) {
            if (ImGui::Selectable(name.c_str(), name == c.model.preset)) {
                ctx.form.setPreset(name);
            }
        }
        if (ImGui::Selectable("custom", c.model.preset == "custom")) {
            ctx.form.setPreset("custom");
        }
        ImGui::EndCombo();
    }
    ImGui::BeginDisabled(c.model.preset != "custom");
    inputInt64("d_model", c.model.dModel);
    fieldError(errors, "model.d_model");
    inputInt64("d_ff", c.model.dFf);
    fieldError(errors, "model.d_ff");
    inputInt64("layers", c.model.numLayers);
    fieldError(errors, "model.num_layers");
    inputInt64("heads", c.model.numHeads);
    fieldError(errors, "model.num_heads");
    ImGui::EndDisabled();
    inputInt64("vocab", c.model.vocabSize);
    fieldError(errors, "model.vocab_size");
}

void ConfigView::drawInput(RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Input");
    // "custom" stays chosen once picked (the length field shows even when the length is a
    // preset's); otherwise the choice follows the length (e.g. --ctx 256 picks "256").
    const int custom = static_cast<int>(kContexts.size());
    int choice = custom;
    for (size_t i = 0; i < kContexts.size() && !m_customContext; ++i) {
        if (kContexts[i] == c.contextLength) {
            choice = static_cast<int>(i);
        }
    }
    const char* contextNames[] = {"128", "256", "512", "1024", "custom"};
    if (ImGui::Combo("context", &choice, contextNames, IM_ARRAYSIZE(contextNames))) {
        m_customContext = choice == custom;
        if (!m_customContext) {
            c.contextLength = kContexts[choice];
        }
    }
    if (choice == custom) {
        inputInt64("context length", c.contextLength);
    }
    fieldError(errors, "context_length");
    inputInt64("batch", c.batchSize);
    fieldError(errors, "batch_size");
}

void ConfigView::drawRun(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Run");
    enumCombo("precision", c.precision, kPrecisions);
    enumCombo("mode", c.mode, kModes);
    ImGui::InputInt("warmup steps", &c.warmupSteps);
    fieldError(errors, "warmup_steps");
    ImGui::InputInt("measured steps", &c.measureSteps);
    fieldError(errors, "measure_steps");
    deviceCombo("device", ctx.session.devices(), c.device);
    fieldError(errors, "device");
    // The execution variants, after the device that decides which of their values can run.
    const bool cuda = runsOnCuda(c.device, ctx.session.devices());
    for (const ChoiceField& field : choiceFields()) {
        choiceCombo(field, c, cuda);
        fieldError(errors, field.key.c_str());
    }
    valueInputs(ValueField::Section::Run, c, errors);
}

void ConfigView::drawDataParallel(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Data parallel");
    bool parallel = c.ddp.has_value();
    if (ImGui::Checkbox("data-parallel (DDP)", &parallel)) {
        if (parallel) {
            c.ddp = DdpRequest{};
            if (ctx.session.isCuda(c.device)) {
                c.ddp->backend = DdpBackend::Nccl;
            }
        } else {
            c.ddp.reset();
        }
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Runs the configuration on world-size processes (lmprof-cli ranks) "
                          "with LibTorch's c10d: Gloo on the CPU, NCCL with one GPU per rank. "
                          "Each rank trains batch sequences of its own and all-reduces the "
                          "gradients by the strategy. The Distributed window shows each "
                          "rank's compute and exposed communication.");
    }
    if (c.ddp) {
        ImGui::InputInt("world size", &c.ddp->worldSize);
        fieldError(errors, "ddp.world_size");
        enumCombo("backend", c.ddp->backend, kDdpBackends);
        fieldError(errors, "ddp.backend");
        enumCombo("strategy", c.ddp->strategy, kDdpStrategies);
        if (c.ddp->strategy == DdpStrategy::Bucketed) {
            ImGui::InputDouble("bucket MiB", &c.ddp->bucketMb, 1.0, 5.0, "%g");
            fieldError(errors, "ddp.bucket_mb");
        }
        fieldError(errors, "ddp");
    }
}

void ConfigView::drawMemory(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Memory");
    bool snapshot = c.memorySnapshot.has_value();
    if (ImGui::Checkbox("record memory snapshot", &snapshot)) {
        if (snapshot) {
            // The last warmup step by default: steady state, and not a measured step. The
            // path shown is a placeholder; Run picks a fresh file for each run.
            c.memorySnapshot = defaultSnapshotRequest(snapshotPath(ctx, c), c.warmupSteps);
        } else {
            c.memorySnapshot.reset();
        }
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Records every allocation of the chosen steps: on CUDA a pickle for "
                          "pytorch.org/memory_viz, on the CPU a JSON allocation trace. A "
                          "recorded measured step is left out of the statistics.");
    }
    if (c.memorySnapshot) {
        if (ImGui::InputInt("snapshot step", &c.memorySnapshot->firstStep)) {
            ctx.form.pickSnapshotStep(true);
        }
        followingNote(ctx.form.snapshotStepPicked(), "the last warmup step",
                      [&] { ctx.form.pickSnapshotStep(false); });
        fieldError(errors, "memory_snapshot.first_step");
        ImGui::InputInt("steps recorded", &c.memorySnapshot->stepCount);
        fieldError(errors, "memory_snapshot.step_count");
        fieldError(errors, "memory_snapshot.path");
        fieldError(errors, "memory_snapshot.max_entries");
    }
    valueInputs(ValueField::Section::Sampling, c, errors);
}

void ConfigView::drawOpProfile(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::SeparatorText("Op profile");
    bool profile = c.opProfile.has_value();
    if (ImGui::Checkbox("profile ops", &profile)) {
        if (profile) {
            c.opProfile = defaultOpProfileRequest(c.warmupSteps); // the first after warmup
        } else {
            c.opProfile.reset();
        }
    }
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Records every op (and, on a GPU, every kernel) of the chosen steps "
                          "with LibTorch's profiler and shows where each phase's time goes in "
                          "the Ops window. A profiled step is left out of the statistics.");
    }
    if (c.opProfile) {
        if (ImGui::InputInt("profile step", &c.opProfile->firstStep)) {
            ctx.form.pickOpProfileStep(true);
        }
        followingNote(ctx.form.opProfileStepPicked(), "the first step after warmup",
                      [&] { ctx.form.pickOpProfileStep(false); });
        fieldError(errors, "op_profile.first_step");
        ImGui::InputInt("steps profiled", &c.opProfile->stepCount);
        fieldError(errors, "op_profile.step_count");
    }
    valueInputs(ValueField::Section::Instruments, c, errors);
}

void ConfigView::drawEstimate(ViewContext& ctx, const RunConfig& c) {
    ImGui::SeparatorText("Estimate");
    const MemoryBreakdown m = ctx.form.predictedPeak();
    ImGui::Text("%.2fM parameters", static_cast<double>(ctx.form.parameterCount()) / 1e6);
    ImGui::Text("weights %s  grads %s  AdamW %s", formatBytes(m.parameters).c_str(),
                formatBytes(m.gradients).c_str(), formatBytes(m.optimizerState).c_str());
    ImGui::Text("activations ~%s  peak ~%s", formatBytes(m.activations).c_str(),
                formatBytes(m.total()).c_str());
    // Asked again when the device or the engine changes (File > Connect...).
    if (const std::string key = ctx.session.info().where + " " + c.device;
        m_deviceBytesFor != key) {
        m_deviceBytes = ctx.session.deviceMemoryBytes(c.device);
        m_deviceBytesFor = key;
    }
    const std::string fit = fitWarning(c, m_deviceBytes);
    if (!fit.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().warning);
        ImGui::TextWrapped("%s. You can still run it; it will end as oom.", fit.c_str());
        ImGui::PopStyleColor();
    } else if (m_deviceBytes > 0) {
        ImGui::TextDisabled("fits: device has %s", formatBytes(m_deviceBytes).c_str());
    }
}

void ConfigView::drawFooter(ViewContext& ctx, RunConfig& c, const Errors& errors) {
    ImGui::Separator();
    const bool busy = ctx.session.busy();
    ImGui::BeginDisabled(!errors.empty() || busy);
    if (ImGui::Button("Run", ImVec2(ImGui::GetFontSize() * 6, 0))) {
        submitRun(ctx, c); // the snapshot path shown is a placeholder: a fresh file per run
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::BeginDisabled(!busy);
    if (ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0))) {
        cancelRun(ctx);
    }
    ImGui::EndDisabled();
    drawProgress(ctx);
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry configWindow() {
    return windowOf<ConfigView>(DockSlot::Left);
}

} // namespace lmprof::ui
