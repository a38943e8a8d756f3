// ViewContext helpers.

#include "view_context.h"

#include "lmprof/engine/devices.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>

namespace lmprof::ui {

std::vector<RunView*> ViewContext::selectedRuns() {
    std::vector<RunView*> out;
    for (int i : store.selection()) {
        if (i >= 0 && i < static_cast<int>(store.runs().size())) {
            out.push_back(&store.runs()[i]);
        }
    }
    return out;
}

namespace {
// <run label>-<UTC time><ext> in dir (created if needed), not yet taken.
std::string freshRunFile(const std::filesystem::path& dir, const engine::RunConfig& c,
                         const std::string& ext) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string stamp = engine::utcNow(); // 2026-11-21T12:00:00Z
    std::replace(stamp.begin(), stamp.end(), ':', '-');
    const std::string stem = engine::runLabel(c) + "-" + stamp;
    std::filesystem::path path = dir / (stem + ext);
    for (int n = 2; std::filesystem::exists(path); ++n) { // two runs within one second
        path = dir / (stem + "-" + std::to_string(n) + ext);
    }
    return path.string();
}
} // namespace

std::string snapshotPath(const ViewContext& ctx, const engine::RunConfig& c) {
    const bool cuda = ctx.session.isCuda(c.device);
    return freshRunFile(ctx.snapshotDir, c, cuda ? ".pickle" : ".json");
}

std::string tracePath(const ViewContext& ctx, const engine::RunConfig& c) {
    return freshRunFile(ctx.traceDir, c, ".trace.json");
}

int submitRun(ViewContext& ctx, engine::RunConfig c, bool keepGivenFiles) {
    if (ctx.experimentRunning) {
        ctx.report("not started: the precision lab's experiment is running (it would disturb "
                   "the run's timings); wait for it or cancel it",
                   true);
        return -1;
    }
    if (auto refusal = ctx.session.checkRunnable(c)) {
        ctx.report(refusal->message(), true);
        return -1;
    }
    if (c.memorySnapshot && !(keepGivenFiles && !c.memorySnapshot->path.empty())) {
        c.memorySnapshot->path = snapshotPath(ctx, c);
    }
    if (c.opProfile && !(keepGivenFiles && !c.opProfile->tracePath.empty())) {
        c.opProfile->tracePath = tracePath(ctx, c);
    }
    const int index = ctx.session.submit(c);
    ctx.report("started " + engine::runLabel(c), false);
    return index;
}

void cancelRun(ViewContext& ctx) {
    if (ctx.interruptScript) { // its server takes no cancel: the script stops where it runs
        ctx.interruptScript();
        ctx.report("cancel requested: the watched script is sent a Ctrl+C; its run ends "
                   "cancelled with its steps",
                   false);
        return;
    }
    ctx.session.cancel();
    ctx.report("cancel requested: the run stops after the current step", false);
}

} // namespace lmprof::ui
