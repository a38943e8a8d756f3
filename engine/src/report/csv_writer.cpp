// CSV, RFC 4180: one row per run, CRLF line ends, fields quoted when they contain a comma,
// quote or line break. Column names are stable (documented in the README).

#include "lmprof/engine/report.h"

#include <algorithm>
#include <cstdio>

namespace lmprof::engine {

namespace {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
}

const char* const kPhaseColumns[] = {"forward_ms", "backward_ms", "optimizer_ms", "total_ms"};
const char* const kStatColumns[] = {"mean", "std", "median", "min", "max", "p95", "cv", "n"};

} // namespace

std::string csvQuote(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) {
        return s;
    }
    std::string out = "\"";
    for (char ch : s) {
        out += ch;
        if (ch == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

void writeCsv(std::ostream& out, std::span<const RunResult> runs) {
    std::vector<std::string> header = {
        "id",        "model",      "d_model",         "d_ff",           "num_layers",
        "num_heads", "vocab_size", "parameter_count", "context_length", "batch_size",
        "precision", "mode",       "device",          "warmup_steps",   "measure_steps",
        "seed",      "status",     "failed_phase",    "error"};
    for (const char* phase : kPhaseColumns) {
        for (const char* stat : kStatColumns) {
            header.push_back(std::string(phase) + "_" + stat);
        }
    }
    for (const char* extra : {"tokens_per_s", "tflops", "mfu", "peak_forward_bytes",
                              "peak_backward_bytes", "peak_optimizer_bytes"}) {
        header.emplace_back(extra);
    }
    auto emit = [&](const std::vector<std::string>& fields) {
        for (size_t i = 0; i < fields.size(); ++i) {
            out << (i ? "," : "") << csvQuote(fields[i]);
        }
        out << "\r\n";
    };
    emit(header);
    for (const auto& r : runs) {
        const auto& c = r.config;
        const auto& s = r.summary;
        std::vector<std::string> f = {r.id,
                                      c.model.preset,
                                      std::to_string(c.model.dModel),
                                      std::to_string(c.model.dFf),
                                      std::to_string(c.model.numLayers),
                                      std::to_string(c.model.numHeads),
                                      std::to_string(c.model.vocabSize),
                                      std::to_string(r.parameterCount),
                                      std::to_string(c.contextLength),
                                      std::to_string(c.batchSize),
                                      std::string(toString(c.precision)),
                                      std::string(toString(c.mode)),
                                      r.resolvedDevice.empty() ? c.device : r.resolvedDevice,
                                      std::to_string(c.warmupSteps),
                                      std::to_string(c.measureSteps),
                                      std::to_string(c.seed),
                                      std::string(toString(r.status)),
                                      r.failedPhase ? std::string(toString(*r.failedPhase)) : "",
                                      r.error.value_or("")};
        for (const PhaseStats* p : {&s.forwardMs, &s.backwardMs, &s.optimizerMs, &s.totalMs}) {
            for (double v : {p->mean, p->std, p->median, p->min, p->max, p->p95, p->cv}) {
                f.push_back(p->n ? num(v) : "");
            }
            f.push_back(std::to_string(p->n));
        }
        f.push_back(num(s.tokensPerS));
        f.push_back(num(s.tflops));
        f.push_back(s.mfu ? num(*s.mfu) : "");
        f.push_back(std::to_string(s.peakBytes.forward));
        f.push_back(std::to_string(s.peakBytes.backward));
        f.push_back(std::to_string(s.peakBytes.optimizer));
        emit(f);
    }
}

} // namespace lmprof::engine
