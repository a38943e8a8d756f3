// Waiting on a session (local or remote) in tests: drain its events until some runs have finished,
// and the results of the finished runs among events.
#pragma once

#include "lmprof/engine/session.h"

#include <chrono>
#include <vector>

namespace lmprof::engine::testing {

// Drains events until `count` runs or lab experiments have finished (or `timeout` passes),
// keeping all events.
inline std::vector<SessionEvent> collect(SessionInterface& session, int count,
                                         std::chrono::seconds timeout = std::chrono::seconds(120)) {
    std::vector<SessionEvent> all;
    int finished = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (finished < count && std::chrono::steady_clock::now() < deadline) {
        session.waitForEvents(std::chrono::milliseconds(50));
        for (auto& e : session.drain()) {
            finished +=
                std::holds_alternative<RunFinished>(e) || std::holds_alternative<LabFinished>(e);
            all.push_back(std::move(e));
        }
    }
    return all;
}

inline std::vector<RunResult> results(const std::vector<SessionEvent>& events) {
    std::vector<RunResult> out;
    for (const auto& e : events) {
        if (auto* f = std::get_if<RunFinished>(&e)) {
            out.push_back(f->result);
        }
    }
    return out;
}

// The lab reports among events, in the order they finished.
inline std::vector<LabFinished> labReports(const std::vector<SessionEvent>& events) {
    std::vector<LabFinished> out;
    for (const auto& e : events) {
        if (auto* f = std::get_if<LabFinished>(&e)) {
            out.push_back(*f);
        }
    }
    return out;
}

} // namespace lmprof::engine::testing
