// From the profiler's flat event list to an OpProfile: nesting per thread, regions, phases,
// backward ops through their forward op, kernels through the op that launched them, then
// per-step aggregates and the timeline of the first profiled step (docs/OP_PROFILE.md).
// Torch-free, so that the rules are tested on hand-made events.
#pragma once

#include "lmprof/engine/op_profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmprof::engine::profile {

// One profiler event, reduced to what attribution needs.
struct RawEvent {
    enum class Type {
        Op,      // an ATen op or autograd node (CPU)
        Range,   // a user scope: step, phase or region
        Runtime, // a CUDA runtime/driver call on the host (cudaLaunchKernel, ...)
        Kernel,  // device work: a kernel, memcpy or memset
    };
    Type type = Type::Op;
    std::string name;
    uint64_t thread = 0; // host thread (RecordFunction's id), or the stream for device work
    int64_t startNs = 0;
    int64_t endNs = 0;
    // Autograd: an op's sequence number; a backward node's sequence number and the thread
    // of the forward op that made it.
    int64_t sequenceNr = -1;
    uint64_t forwardThread = 0;
    bool backwardNode = false; // a RecordFunction of scope BACKWARD_FUNCTION
    uint64_t correlation = 0;  // runtime call <-> kernel (CUPTI's correlation id)
    double flops = 0.0;        // the profiler's count, 0 when it has none
    std::vector<std::vector<int64_t>> shapes;
};

// The profiled steps and their phases, from the ranges of the thread that ran the steps.
struct StepFrame {
    struct PhaseSpan {
        Phase phase;
        int64_t startNs, endNs;
        int step; // index into steps
    };
    std::vector<std::pair<int64_t, int64_t>> steps; // (start, end), in order
    std::vector<PhaseSpan> phases;                  // by start
    uint64_t mainThread = 0;
    int cutSteps = 0; // step ranges left out by completedSteps
};
// Keeps the first `completedSteps` steps (all when negative): a step cut short by a cancel
// or a failure still closes its range, but has no record and would skew the means.
StepFrame findFrame(const std::vector<RawEvent>& events, int completedSteps = -1);

struct AnalysisInput {
    std::vector<RawEvent> events;
    int firstStep = 0;       // the run's index of the first profiled step
    int completedSteps = -1; // profiled steps that finished (-1: every step range)
    // Autograd names a node's forward thread by RecordFunction's thread id, the events' thread
    // is the system's: the id of the thread that ran the steps, which is the main thread.
    uint64_t stepThreadRecordId = 0;
};

// Aggregates per profiled step (as many as the events hold step ranges); headline computed. Never
// throws on odd input: an event it cannot place is counted as unattributed, a missing step range
// leaves the profile empty with a note.
OpProfile analyze(AnalysisInput input, const RunConfig& config);
// The same with the frame already found (findFrame(input.events, input.completedSteps)).
OpProfile analyze(AnalysisInput input, const StepFrame& frame, const RunConfig& config);

// 2·m·n·k of a matmul op's input shapes (mm, addmm, bmm, baddbmm), 0 for anything else.
double matmulFlops(const std::string& name, const std::vector<std::vector<int64_t>>& shapes);

// "[4, 128, 128], [128, 128]"
std::string formatShapes(const std::vector<std::vector<int64_t>>& shapes);

} // namespace lmprof::engine::profile
