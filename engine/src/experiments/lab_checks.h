// What both lab experiments do around their LibTorch work: the device (and precision)
// checks every benchmark run gets, and failures turned into a message for the report.
#pragma once

#include "lmprof/engine/devices.h"

#include <c10/util/Exception.h>
#include <optional>
#include <string>

namespace lmprof::engine::lab {

// Why `device` cannot run `precision` here (absent, no CUDA in this build, the precision
// probe failed), or nullopt.
inline std::optional<ConfigError> refusal(const std::string& device, Precision precision,
                                          const DeviceTarget& target) {
    RunConfig probe;
    probe.device = device;
    probe.precision = precision;
    return checkRunnable(probe, target);
}

// Runs `work`; a LibTorch or standard exception becomes its message.
template <typename Work>
std::optional<std::string> failureOf(Work&& work) {
    try {
        work();
    } catch (const c10::Error& e) {
        return e.what_without_backtrace();
    } catch (const std::exception& e) {
        return e.what();
    }
    return std::nullopt;
}

} // namespace lmprof::engine::lab
