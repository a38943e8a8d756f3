// What every engine, local or remote, answers a lab experiment with when it could not run it
// (session_interface.h).

#include "lmprof/engine/session_interface.h"

namespace lmprof::engine {

LabReport unstartedLab(const LabRequest& request, std::string why, bool cancelled) {
    if (const auto* a = std::get_if<AccumulationRequest>(&request)) {
        AccumulationReport report;
        report.device = a->device;
        report.maxTerms = a->maxTerms;
        report.error = std::move(why);
        report.cancelled = cancelled;
        return report;
    }
    const auto& d = std::get<DtypeRequest>(request);
    DtypeReport report;
    report.model = d.model;
    report.precision = d.precision;
    report.device = d.device;
    report.error = std::move(why);
    return report;
}

std::string_view labDevice(const LabRequest& request) {
    return std::visit([](const auto& r) -> std::string_view { return r.device; }, request);
}

} // namespace lmprof::engine
