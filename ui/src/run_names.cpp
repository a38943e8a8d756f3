// A run's name in legends and tables (run_store.h): what it is, in full (describeRun), and,
// among the runs shown together, the fields that tell them apart (distinguishingNames).

#include "lmprof/engine/result_io.h"
#include "lmprof/ui/run_store.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

// One configuration field as it reads in a legend ("ctx 256"), in the names' order; the
// execution variants follow the mode (kModeField).
using FieldText = std::string (*)(const RunConfig&);
constexpr size_t kModeField = 4;
constexpr size_t kDdpField = 12; // the world size; the request's other parts follow it
const FieldText kNameFields[] = {
    [](const RunConfig& c) {
        if (c.model.preset != "custom") {
            return c.model.preset;
        }
        return "d_model " + std::to_string(c.model.dModel) + " layers " +
               std::to_string(c.model.numLayers) + " heads " + std::to_string(c.model.numHeads) +
               " d_ff " + std::to_string(c.model.dFf);
    },
    // A watched run has no context or batch of the engine's (0): nothing to name.
    [](const RunConfig& c) {
        return c.contextLength > 0 ? "ctx " + std::to_string(c.contextLength) : std::string();
    },
    [](const RunConfig& c) {
        return c.batchSize > 0 ? "b" + std::to_string(c.batchSize) : std::string();
    },
    [](const RunConfig& c) { return std::string(toString(c.precision)); },
    [](const RunConfig& c) { return std::string(toString(c.mode)); },
    [](const RunConfig& c) { return "w" + std::to_string(c.warmupSteps); },
    [](const RunConfig& c) { return std::to_string(c.measureSteps) + " steps"; },
    [](const RunConfig& c) { return c.device; },
    [](const RunConfig& c) { return "seed " + std::to_string(c.seed); },
    [](const RunConfig& c) {
        return c.threads > 0 ? std::to_string(c.threads) + " threads" : "default threads";
    },
    [](const RunConfig& c) { return std::string(c.opProfile ? "op profile" : "no op profile"); },
    [](const RunConfig& c) { return std::string(c.memorySnapshot ? "snapshot" : "no snapshot"); },
    // Data-parallel runs: the fields of the request (empty for a run of one process).
    [](const RunConfig& c) {
        return c.ddp ? std::to_string(c.ddp->worldSize) + " ranks" : std::string("1 process");
    },
    [](const RunConfig& c) { return c.ddp ? std::string(toString(c.ddp->backend)) : ""; },
    [](const RunConfig& c) { return c.ddp ? std::string(toString(c.ddp->strategy)) : ""; },
    [](const RunConfig& c) {
        if (!c.ddp || c.ddp->strategy != DdpStrategy::Bucketed) {
            return std::string();
        }
        char text[48];
        std::snprintf(text, sizeof(text), "%g MiB buckets", c.ddp->bucketMb);
        return std::string(text);
    },
};

} // namespace

std::string describeRun(const RunResult& run) {
    // The device that ran it, not the one asked for ("auto").
    RunConfig c = run.config;
    if (!run.resolvedDevice.empty()) {
        c.device = run.resolvedDevice;
    }
    std::string out;
    for (FieldText field : kNameFields) {
        const std::string text = field(c);
        if (!text.empty()) {
            out += (out.empty() ? "" : " \u00B7 ") + text;
        }
    }
    for (const ChoiceField& f : choiceFields()) {
        out += " \u00B7 " + f.label + " " + f.get(c);
    }
    return out;
}

std::vector<std::string> distinguishingNames(const std::vector<const RunResult*>& runs) {
    std::vector<std::string> names(runs.size());
    // A field's text goes into every name when the runs differ in it; the parts of one
    // data-parallel request read as one ("gloo naive").
    const auto nameBy = [&](const auto& field, bool partOfPrevious = false) {
        const std::string first = field(runs.front()->config);
        const bool differs = std::any_of(runs.begin(), runs.end(), [&](const RunResult* r) {
            return field(r->config) != first;
        });
        if (!differs) {
            return false;
        }
        for (size_t k = 0; k < runs.size(); ++k) {
            const std::string text = field(runs[k]->config);
            if (!text.empty()) {
                const char* joint = partOfPrevious ? " " : " \u00B7 ";
                names[k] += (names[k].empty() ? "" : joint) + text;
            }
        }
        return true;
    };
    if (runs.size() > 1) {
        bool ddpNamed = false;
        for (size_t i = 0; i < std::size(kNameFields); ++i) {
            const bool named = nameBy(kNameFields[i], i > kDdpField && ddpNamed);
            ddpNamed = ddpNamed || (i >= kDdpField && named);
            if (i == kModeField) {
                // After the mode, the execution variants by their short names: "sdpa flash",
                // "graphs", "no tf32".
                for (const ChoiceField& f : choiceFields()) {
                    nameBy([&f](const RunConfig& c) { return f.shortName(c); });
                }
            }
        }
    }
    for (auto& name : names) {
        if (name.size() > kMaxNameLength) {
            size_t cut = kMaxNameLength;
            while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) {
                --cut; // not inside a character
            }
            name = name.substr(0, cut) + "\u2026";
        }
    }
    std::vector<int> uses(runs.size(), 0);
    for (size_t k = 0; k < runs.size(); ++k) {
        uses[k] = static_cast<int>(std::count(names.begin(), names.end(), names[k]));
    }
    for (size_t k = 0; k < runs.size(); ++k) {
        const std::string& id = runs[k]->id.empty() ? "run" : runs[k]->id;
        if (names[k].empty()) {
            names[k] = id;
        } else if (uses[k] > 1) {
            names[k] += " (" + id + ")";
        }
    }
    return names;
}

} // namespace lmprof::ui
