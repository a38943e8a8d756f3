// Turns autocast on for one device type for the lifetime of a scope and restores the
// previous state on exit, exceptions included (an OOM inside the forward must not leave
// autocast on). The runner's forward phase and the precision probe use it.
#pragma once

#include <ATen/autocast_mode.h>
#include <optional>

namespace lmprof::engine::bench {

class AutocastScope {
public:
    AutocastScope(at::DeviceType type, std::optional<at::ScalarType> dtype) : m_type(type) {
        if (!dtype) {
            return;
        }
        m_active = true;
        m_prevEnabled = at::autocast::is_autocast_enabled(type);
        m_prevDtype = at::autocast::get_autocast_dtype(type);
        at::autocast::set_autocast_enabled(type, true);
        at::autocast::set_autocast_dtype(type, *dtype);
        at::autocast::increment_nesting();
    }
    ~AutocastScope() {
        if (!m_active) {
            return;
        }
        if (at::autocast::decrement_nesting() == 0) {
            at::autocast::clear_cache();
        }
        at::autocast::set_autocast_enabled(m_type, m_prevEnabled);
        at::autocast::set_autocast_dtype(m_type, m_prevDtype);
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    at::DeviceType m_type;
    bool m_active = false;
    bool m_prevEnabled = false;
    at::ScalarType m_prevDtype = at::kFloat;
};

} // namespace lmprof::engine::bench
