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

std::string snapshotPath(const ViewContext& ctx, const engine::RunConfig& c) {
    std::error_code ec;
    std::filesystem::create_directories(ctx.snapshotDir, ec);
    std::string stamp = engine::utcNow(); // 2026-11-21T12:00:00Z
    std::replace(stamp.begin(), stamp.end(), ':', '-');
    const bool cuda = engine::resolveDevice(c.device).cuda;
    const std::string stem = engine::runLabel(c) + "-" + stamp;
    const std::string ext = cuda ? ".pickle" : ".json";
    std::filesystem::path path = ctx.snapshotDir / (stem + ext);
    for (int n = 2; std::filesystem::exists(path); ++n) { // two runs within one second
        path = ctx.snapshotDir / (stem + "-" + std::to_string(n) + ext);
    }
    return path.string();
}

} // namespace lmprof::ui
