// The engine a view sees where nothing can run: the study report's charts, drawn in the
// Study window, by lmprof-cli study, or on a server. A chart only reads its run store, but
// its view is handed an engine, and a real one (engine::Session) starts a worker thread and
// knows LibTorch. This one has neither: it is never busy, offers no device, refuses every
// run by saying why, and finishes nothing.
#pragma once

#include "lmprof/engine/session_interface.h"

namespace lmprof::ui {

class NoEngine final : public engine::SessionInterface {
public:
    int submit(const engine::RunConfig&) override { return m_next++; }
    int submitLab(const engine::LabRequest&) override { return m_next++; }
    void cancel() override {}
    std::vector<engine::SessionEvent> drain() override { return {}; }
    bool waitForEvents(std::chrono::milliseconds) override { return false; }
    bool busy() const override { return false; }
    std::vector<std::string> devices() const override { return {}; }
    bool isCuda(std::string_view) const override { return false; }
    int64_t deviceMemoryBytes(std::string_view) const override { return 0; }
    std::optional<engine::ConfigError> checkRunnable(const engine::RunConfig&) const override {
        return engine::ConfigError{"device", "a study's chart has no engine to run on"};
    }
    engine::Environment environment(std::string_view) const override { return {}; }
    engine::EngineInfo info() const override {
        engine::EngineInfo info;
        info.where = "none";
        info.connected = false;
        info.problem = "a study's chart has no engine";
        return info;
    }

private:
    int m_next = 0;
};

} // namespace lmprof::ui
