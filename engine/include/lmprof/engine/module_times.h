// Time per module of a watched model (docs/WATCH.md, "Time per module"): the forward and
// backward time of each module of the model cut at a depth, as the Python watcher's hooks
// measured them, per measured step. Plain structs.
#pragma once

#include <string>
#include <vector>

namespace lmprof::engine {

struct ModuleTime {
    std::string name; // the module's path: "blocks.3"
    double forwardMs = 0.0;
    double backwardMs = 0.0;
    double forwardCalls = 0.0; // per step (gradient accumulation calls a module more often)
    double backwardCalls = 0.0;
};

struct ModuleTimes {
    int depth = 1;                   // names of a path the cut keeps
    int steps = 0;                   // the measured steps the means are over
    std::vector<ModuleTime> modules; // in model order; they do not nest
};

} // namespace lmprof::engine
