// A plain configuration field declared by the tests only (ValueField, config.h). While an
// ExtraValueField of it lives, the tests look for it where a declared field must go: the
// JSON, validate() and the comparison key (config_test), the protocol's fingerprint
// (protocol_fingerprint_test), the CLI's flag, help and messages and sweep's list
// (cli_fields_test), the sweep axis (sweep_test) and Configure's widget (value_inputs_test). It
// stands on an existing member (warmup_steps), so it needs no change to RunConfig.
#pragma once

#include "lmprof/engine/config.h"

namespace lmprof::engine::test {

inline ValueField throwawayField() {
    ValueField f;
    f.key = "throwaway_steps";
    f.flag = "--throwaway-steps";
    f.label = "throwaway steps";
    f.help = "a field declared by a test only";
    f.member = &RunConfig::warmupSteps;
    f.section = ValueField::Section::Run;
    f.min = 0.0;
    f.max = 3.0;
    f.inComparisonKey = true;
    f.sweepAxis = true;
    return f;
}

} // namespace lmprof::engine::test
