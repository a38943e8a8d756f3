// ViewContext helpers.

#include "view_context.h"

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

} // namespace lmprof::ui
