// Sweep expansion, cheapest-first ordering and the skip-after-OOM rule (sweep.h).

#include "lmprof/engine/sweep.h"

#include <algorithm>
#include <stdexcept>

namespace lmprof::engine {

size_t sweepSize(const SweepSpec& s) {
    size_t n = s.models.size() * s.contexts.size() * s.precisions.size() * s.modes.size() *
               std::max<size_t>(1, s.warmups.size()) * std::max<size_t>(1, s.batches.size());
    for (const auto& [key, values] : s.choices) {
        n *= values.size();
    }
    for (const auto& [key, values] : s.values) {
        n *= values.size();
    }
    return n;
}

namespace {

// Every config times every batch size, every value of each listed variant and of each listed
// plain field, in the lists' order.
std::vector<RunConfig> withChoices(std::vector<RunConfig> configs, const SweepSpec& s) {
    if (!s.batches.empty()) {
        std::vector<RunConfig> out;
        out.reserve(configs.size() * s.batches.size());
        for (const RunConfig& c : configs) {
            for (int64_t b : s.batches) {
                RunConfig copy = c;
                copy.batchSize = b;
                out.push_back(std::move(copy));
            }
        }
        configs = std::move(out);
    }
    for (const auto& [key, values] : s.choices) {
        const ChoiceField* field = choiceField(key);
        if (!field) {
            throw std::invalid_argument("a sweep lists '" + key + "', which is no choice field");
        }
        std::vector<RunConfig> out;
        out.reserve(configs.size() * values.size());
        for (const RunConfig& c : configs) {
            for (const std::string& v : values) {
                RunConfig copy = c;
                field->set(copy, v);
                out.push_back(std::move(copy));
            }
        }
        configs = std::move(out);
    }
    for (const auto& [key, values] : s.values) {
        const ValueField* field = valueField(key);
        if (!field || !field->sweepAxis) {
            throw std::invalid_argument("a sweep lists '" + key +
                                        "', which is no field a sweep can list");
        }
        if (auto why = field->listError(values)) {
            throw std::invalid_argument(key + ": " + *why);
        }
        std::vector<RunConfig> out;
        out.reserve(configs.size() * values.size());
        for (const RunConfig& c : configs) {
            for (int64_t v : values) {
                RunConfig copy = c;
                field->set(copy, v);
                out.push_back(std::move(copy));
            }
        }
        configs = std::move(out);
    }
    return configs;
}

} // namespace

std::vector<RunConfig> expandSweep(const SweepSpec& s) {
    const std::vector<int> warmups =
        s.warmups.empty() ? std::vector<int>{s.base.warmupSteps} : s.warmups;
    std::vector<RunConfig> configs;
    configs.reserve(sweepSize(s));
    for (const auto& model : s.models) {
        for (int64_t ctx : s.contexts) {
            for (Precision precision : s.precisions) {
                for (Mode mode : s.modes) {
                    for (int warmup : warmups) {
                        RunConfig c = s.base;
                        c.model = model;
                        c.contextLength = ctx;
                        c.precision = precision;
                        c.mode = mode;
                        c.warmupSteps = warmup;
                        // Gradient norms are asked of the sweep: a forward-only run has none.
                        c.gradNorms = c.gradNorms && mode != Mode::Forward;
                        if (c.opProfile) {
                            // The profiled steps keep their place after the warmup.
                            c.opProfile->firstStep = std::max(0, s.base.opProfile->firstStep -
                                                                     s.base.warmupSteps + warmup);
                        }
                        configs.push_back(std::move(c));
                    }
                }
            }
        }
    }
    configs = withChoices(std::move(configs), s);
    orderCheapestFirst(configs);
    return configs;
}

void orderCheapestFirst(std::vector<RunConfig>& configs) {
    std::stable_sort(configs.begin(), configs.end(), [](const RunConfig& a, const RunConfig& b) {
        const double fa = stepFlops(a), fb = stepFlops(b);
        if (fa != fb) {
            return fa < fb;
        }
        return a.warmupSteps + a.measureSteps < b.warmupSteps + b.measureSteps;
    });
}

double runFlops(const RunConfig& c) {
    return stepFlops(c) * static_cast<double>(c.warmupSteps + c.measureSteps);
}

double totalFlops(std::span<const RunConfig> configs) {
    double sum = 0.0;
    for (const auto& c : configs) {
        sum += runFlops(c);
    }
    return sum;
}

bool exceedsOom(const RunConfig& failed, const RunConfig& candidate) {
    for (const ChoiceField& f : choiceFields()) {
        if (f.get(failed) != f.get(candidate)) {
            return false;
        }
    }
    return failed.precision == candidate.precision && failed.mode == candidate.mode &&
           failed.batchSize <= candidate.batchSize &&
           parameterCount(failed.model) <= parameterCount(candidate.model) &&
           failed.contextLength <= candidate.contextLength;
}

void OomSkipper::record(const RunResult& finished) {
    if (finished.status == RunStatus::Oom) {
        m_ooms.push_back(finished);
    }
}

std::optional<RunResult> OomSkipper::skip(const RunConfig& candidate) const {
    for (const auto& oom : m_ooms) {
        if (exceedsOom(oom.config, candidate)) {
            return unstartedRun(runLabel(candidate) + "-skipped", candidate, RunStatus::Skipped,
                                "skipped after out-of-memory in " + oom.id);
        }
    }
    return std::nullopt;
}

std::vector<RunConfig> sweepShard(const std::vector<RunConfig>& configs, int index, int count) {
    std::vector<RunConfig> out;
    if (count < 1 || index < 1 || index > count) {
        return out;
    }
    for (size_t i = static_cast<size_t>(index - 1); i < configs.size();
         i += static_cast<size_t>(count)) {
        out.push_back(configs[i]);
    }
    return out;
}

} // namespace lmprof::engine
