// The Sweep window; the app also feeds it every frame's events and asks whether a sweep
// runs (demo scripts start one through it).
#pragma once

#include "lmprof/engine/sweep.h"
#include "lmprof/engine/sweep_driver.h"
#include "view.h"

#include <array>
#include <string>
#include <vector>

namespace lmprof::ui {

// Sweep builder: lists of models, contexts, precisions, modes and warmup counts, the run
// count and cost, Run sweep / Cancel, progress with ETA. Owns the SweepDriver, which must
// see every frame's events (observe) even while the window is hidden.
class SweepView final : public View {
public:
    static constexpr const char* kTitle = "Sweep";
    void observe(ViewContext& ctx, const std::vector<engine::SessionEvent>& events) override;
    void draw(ViewContext& ctx) override;
    bool running() const { return m_driver.running(); }
    // Starts a sweep over these configurations (validated), as "Run sweep" does.
    void start(ViewContext& ctx, std::vector<engine::RunConfig> configs);

private:
    void initFrom(const engine::RunConfig& c);
    // The form as a JSON object (names of what is ticked, the texts typed), and back: a saved
    // name that is no longer an option is left out, a wrong type keeps that entry's default.
    std::string formJson() const;
    void applyForm(const std::string& json);
    std::vector<engine::RunConfig> buildConfigs(const engine::RunConfig& base,
                                                const engine::SessionInterface& engine,
                                                std::string& error) const;
    void drawProgress();
    void drawVariantTicks(); // a row of checkboxes per choice field

    engine::SweepDriver m_driver;
    bool m_initialised = false;
    std::vector<char> m_models, m_precisions, m_modes; // ticked, index-aligned with options
    bool m_customModel = false;
    bool m_runAfterOom = false;
    char m_contexts[256] = "";
    char m_batches[128] = "";
    char m_warmups[128] = "";
    // Per choice field (choiceFields(), config.h), its values ticked, index-aligned.
    std::vector<std::vector<char>> m_choices;
    // Per plain field a sweep can list (ValueField::sweepAxis): its list's text, and the
    // value Configure had when last seen (the list becomes Configure's value when it changes,
    // so a seed changed there is the one a sweep runs, as before the field was a list).
    struct ValueList {
        std::string key;
        std::array<char, 128> text{};
        std::string configured;
    };
    std::vector<ValueList> m_valueLists;
    void drawValueLists(const engine::RunConfig& configured); // an editable list per field
    // Each list parsed and checked into spec.values; false with `error` naming the field.
    bool addValueLists(engine::SweepSpec& spec, std::string& error) const;
};

} // namespace lmprof::ui
