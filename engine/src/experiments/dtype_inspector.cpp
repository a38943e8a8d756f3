// The dtype inspector (precision_lab.h): one real forward and backward of the ToyModel or
// the LM under a precision, with every module reporting the dtypes it saw through
// model/dtype_probe.h. The notes are generated from what was observed and from LibTorch's
// dispatcher (does the op have an autocast kernel for this device?), not from a table.
//
// Sections: names of dtypes and modules · the recorder · notes · inspectDtypes.

#include "bench/autocast_scope.h"
#include "bench/precision_dtypes.h"
#include "bench/step_context.h"
#include "experiments/lab_checks.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/precision_lab.h"
#include "model/dtype_probe.h"
#include "model/toy_model.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <algorithm>
#include <c10/util/Exception.h>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace lmprof::engine {

namespace {

// ---------------------------------------------------------------------------------------
// Names of dtypes and modules

std::string dtypeName(at::ScalarType t) {
    switch (t) {
    case at::kFloat:
        return "fp32";
    case at::kHalf:
        return "fp16";
    case at::kBFloat16:
        return "bf16";
    case at::kDouble:
        return "fp64";
    case at::kLong:
        return "int64";
    case at::kInt:
        return "int32";
    case at::kBool:
        return "bool";
    case at::kComplexFloat:
        return "complex64";
    default:
        return c10::toString(t);
    }
}

// The distinct names of `types` in order of first appearance, comma separated.
std::string joinDtypes(const std::vector<at::ScalarType>& types) {
    std::string out;
    std::set<at::ScalarType> seen;
    for (at::ScalarType t : types) {
        if (seen.insert(t).second) {
            out += (out.empty() ? "" : ", ") + dtypeName(t);
        }
    }
    return out;
}

// "lmprof::engine::model::LinearImpl" -> "Linear".
std::string kindOf(const torch::nn::Module& m) {
    std::string name = m.name();
    if (const auto colon = name.rfind("::"); colon != std::string::npos) {
        name = name.substr(colon + 2);
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) {
        name.resize(name.size() - 4);
    }
    return name;
}

// ---------------------------------------------------------------------------------------
// The recorder: the first call of each module, by address.

struct Call {
    int order = 0; // calls end children first: fc1 before the model
    std::vector<at::ScalarType> inputs;
    at::ScalarType output = at::kFloat;
};

class CallRecorder : public model::probe::Recorder {
public:
    void onCall(const torch::nn::Module& module, std::initializer_list<at::Tensor> inputs,
                const at::Tensor& output) override {
        if (m_calls.count(&module)) {
            return;
        }
        Call call;
        call.order = static_cast<int>(m_calls.size());
        for (const auto& t : inputs) {
            call.inputs.push_back(t.scalar_type());
        }
        call.output = output.scalar_type();
        m_calls.emplace(&module, std::move(call));
    }
    const Call* find(const torch::nn::Module* m) const {
        const auto it = m_calls.find(m);
        return it == m_calls.end() ? nullptr : &it->second;
    }

private:
    std::map<const torch::nn::Module*, Call> m_calls;
};

// ---------------------------------------------------------------------------------------
// Notes

struct Facts {
    at::DeviceType device = at::kCPU;
    std::optional<at::ScalarType> autocast;
    at::ScalarType weights = at::kFloat;
    bool lm = false; // the LM (its loss casts the logits itself) or the ToyModel
};

std::string deviceLabel(at::DeviceType d) {
    return d == at::kCUDA ? "CUDA" : "CPU";
}

// Whether LibTorch registered an autocast kernel of this device for the op: ops without one
// pass through autocast untouched.
bool hasAutocastKernel(const char* op, at::DeviceType device) {
    const auto handle = c10::Dispatcher::singleton().findOp(c10::OperatorName(op, ""));
    const auto key =
        device == at::kCUDA ? c10::DispatchKey::AutocastCUDA : c10::DispatchKey::AutocastCPU;
    return handle && handle->hasKernelForDispatchKey(key);
}

// Why an op gave `out` from `in` under the facts' autocast.
std::string opNote(const Facts& f, const char* op, const std::string& in, at::ScalarType out) {
    const std::string name = std::string(op).substr(6); // without "aten::"
    const std::string dev = deviceLabel(f.device);
    if (!f.autocast) {
        return name + " runs in the dtype of its inputs (" + in + ") without autocast.";
    }
    const std::string reduced = dtypeName(*f.autocast);
    if (!hasAutocastKernel(op, f.device)) {
        std::string note = name + " is on neither of " + dev +
                           " autocast's lists: it runs in the dtype of its input (" + in +
                           ") and returns " + dtypeName(out) + ".";
        if (name == "layer_norm" && f.device != at::kCUDA && hasAutocastKernel(op, at::kCUDA)) {
            note +=
                " CUDA autocast puts layer_norm on its fp32 list (the CS336 study's "
                "answer, measured on a GPU); the CPU kernel keeps its statistics in fp32 inside.";
        }
        return note;
    }
    if (out == *f.autocast) {
        return name + " is on " + dev + " autocast's lower-precision list: matmul-like ops run " +
               "in " + reduced + ", so its inputs and weight are cast to " + reduced +
               " and so is its output.";
    }
    return name + " is on " + dev + " autocast's fp32 list: reductions (means, variances, " +
           "log-softmax) lose too much in " + reduced + ", so it runs and returns " +
           dtypeName(out) + ".";
}

std::string moduleNote(const Facts& f, const std::string& kind, const std::string& in,
                       at::ScalarType out) {
    if (kind == "Linear") {
        return opNote(f, "aten::linear", in, out);
    }
    if (kind == "LayerNorm") {
        return opNote(f, "aten::layer_norm", in, out);
    }
    if (kind == "ReLU") {
        return opNote(f, "aten::relu", in, out);
    }
    if (kind == "Embedding") {
        return opNote(f, "aten::embedding", in, out) + " A lookup returns rows of its weight.";
    }
    if (kind == "RMSNorm") {
        return "lmprof's RMSNorm squares, averages and scales in fp32 and casts the result back "
               "to its input's dtype (" +
               in + ").";
    }
    if (kind == "Attention") {
        return "Its output is output_proj's (a linear); the scores and softmax in between "
               "follow their inputs' dtype.";
    }
    if (kind == "SwiGLU") {
        return "Its output is w2's (a linear).";
    }
    if (kind == "Block") {
        return "The residual adds sum its input (" + in +
               ") with its sublayers' outputs; type promotion makes the stream " + dtypeName(out) +
               ".";
    }
    return "The whole model: its output is the logits.";
}

std::string parameterNote(const Facts& f) {
    if (f.weights != at::kFloat) {
        return " Its parameters were converted to " + dtypeName(f.weights) + ".";
    }
    return f.autocast ? " Its parameters stay fp32: autocast casts a copy for each op." : "";
}

std::string lossNote(const Facts& f, const std::string& in, at::ScalarType out) {
    if (f.lm) {
        return "lmprof's loss casts the logits (" + in +
               ") to fp32 before cross_entropy, with or without autocast.";
    }
    return opNote(f, "aten::cross_entropy_loss", in, out);
}

// ---------------------------------------------------------------------------------------
// One forward and backward with the recorder installed.

struct Inputs {
    at::Tensor x;       // what the model's forward takes
    at::Tensor targets; // class ids for the loss
};

// The model inspected and its inputs, on `device` in the precision's weights: an LM preset at
// small widths, or the ToyModel.
struct Inspected {
    std::shared_ptr<torch::nn::Module> root;
    std::function<at::Tensor(const at::Tensor&)> forward;
    Inputs in;
};

Inspected buildInspected(const DtypeRequest& request, const Facts& facts,
                         const at::Device& device) {
    at::manual_seed(0);
    Inspected m;
    const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
    if (facts.lm) {
        // The dtypes do not depend on the sizes: the preset's modules and layer count at
        // small widths (head dim 8, a 64-token vocabulary), a short context and one
        // sequence, so that 2.7B inspects in a moment on any machine.
        ModelConfig config = *presetModel(request.model);
        config.dModel = 8 * config.numHeads;
        config.dFf = 2 * config.dModel;
        config.vocabSize = 64;
        constexpr int64_t kContext = 16;
        auto lm = model::TransformerLM(config, kContext, device);
        m.root = lm.ptr();
        m.forward = [lm](const at::Tensor& ids) mutable { return lm->forward(ids); };
        m.in.x = at::randint(0, config.vocabSize, {1, kContext}, longs);
        m.in.targets = at::randint(0, config.vocabSize, {1, kContext}, longs);
    } else {
        auto toy = model::ToyModel(kToyInFeatures, kToyOutFeatures, device);
        m.root = toy.ptr();
        m.forward = [toy](const at::Tensor& x) mutable { return toy->forward(x); };
        m.in.x =
            at::randn({4, kToyInFeatures}, at::TensorOptions().device(device)).to(facts.weights);
        m.in.targets = at::randint(0, kToyOutFeatures, {4}, longs);
    }
    if (facts.weights != at::kFloat) {
        m.root->to(facts.weights);
    }
    return m;
}

// A module of the report's rows: its dotted name and its indent.
struct Visited {
    std::string name;
    const torch::nn::Module* module;
    int depth;
};

// The model first, then each module's children in the order the forward called them (fc1,
// relu, ln, fc2), those never called after them. A container that is never called and holds
// no parameter of its own (the ModuleList) gets no row; its modules are indented as its
// parent's, and it goes where its first module did.
void visitInCallOrder(const CallRecorder& recorder, const std::string& name,
                      const torch::nn::Module& m, int depth, std::vector<Visited>& out) {
    const bool shown = recorder.find(&m) || !m.parameters(/*recurse=*/false).empty();
    if (shown) {
        out.push_back({name, &m, depth});
    }
    std::vector<std::pair<std::string, const torch::nn::Module*>> ordered;
    for (const auto& child : m.named_children()) {
        ordered.emplace_back(child.key(), child.value().get());
    }
    std::function<int(const torch::nn::Module*)> orderOf = [&](const torch::nn::Module* c) {
        if (const Call* call = recorder.find(c)) {
            return call->order;
        }
        int first = std::numeric_limits<int>::max();
        for (const auto& child : c->children()) {
            first = std::min(first, orderOf(child.get()));
        }
        return first;
    };
    std::stable_sort(ordered.begin(), ordered.end(), [&](const auto& a, const auto& b) {
        return orderOf(a.second) < orderOf(b.second);
    });
    for (const auto& [key, child] : ordered) {
        visitInCallOrder(recorder, name.empty() ? key : name + "." + key, *child,
                         depth + (shown ? 1 : 0), out);
    }
}

// A module's row: its parameters' and gradients' dtypes, what its forward took and
// returned, and why.
DtypeRow rowOf(const Visited& v, const CallRecorder& recorder, const Facts& facts) {
    const torch::nn::Module& m = *v.module;
    const Call* call = recorder.find(&m);
    std::vector<at::ScalarType> params, grads;
    for (const auto& p : m.parameters(/*recurse=*/false)) {
        params.push_back(p.scalar_type());
        if (p.grad().defined()) {
            grads.push_back(p.grad().scalar_type());
        }
    }
    DtypeRow row;
    row.name = v.name.empty() ? "(model)" : v.name;
    row.kind = kindOf(m);
    row.depth = v.depth;
    row.parameters = joinDtypes(params);
    row.gradients = joinDtypes(grads);
    if (call) {
        row.input = joinDtypes(call->inputs);
        row.output = dtypeName(call->output);
        row.note = moduleNote(facts, row.kind, row.input, call->output);
    }
    if (!params.empty()) {
        row.note += parameterNote(facts);
        if (!grads.empty()) {
            row.note += " A gradient has its parameter's dtype (" + row.gradients + ")" +
                        (facts.autocast ? ": the backward of autocast's cast returns it "
                                          "in that dtype."
                                        : ".");
        }
    }
    return row;
}

DtypeReport inspect(const DtypeRequest& request, const DeviceTarget& target) {
    DtypeReport report;
    report.model = request.model;
    report.precision = request.precision;
    report.device = target.name();
    const PrecisionTraits& traits = traitsOf(request.precision);
    report.autocast = traits.autocast ? std::string(toString(*traits.autocast)) : "off";

    const at::Device device = bench::torchDevice(target);
    Facts facts;
    facts.device = device.type();
    facts.weights = bench::scalarType(traits.weights);
    if (traits.autocast) {
        facts.autocast = bench::scalarType(*traits.autocast);
    }
    facts.lm = request.model != kToyModel;
    Inspected inspected = buildInspected(request, facts, device);

    CallRecorder recorder;
    at::Tensor logits, loss;
    {
        model::probe::Scope scope(recorder);
        bench::AutocastScope autocast(device.type(), facts.autocast);
        logits = inspected.forward(inspected.in.x);
        loss = facts.lm ? model::lmLoss(logits, inspected.in.targets)
                        : at::cross_entropy_loss(logits, inspected.in.targets);
    }
    loss.backward();

    std::vector<Visited> modules;
    visitInCallOrder(recorder, "", *inspected.root, 0, modules);
    for (const Visited& v : modules) {
        report.rows.push_back(rowOf(v, recorder, facts));
    }
    report.rows.push_back({"logits", "tensor", 0, "", "", dtypeName(logits.scalar_type()), "",
                           "The model's output, from its last linear."});
    report.rows.push_back({"loss", "tensor", 0, "", dtypeName(logits.scalar_type()),
                           dtypeName(loss.scalar_type()), "",
                           lossNote(facts, dtypeName(logits.scalar_type()), loss.scalar_type())});
    return report;
}

} // namespace

DtypeReport inspectDtypes(const DtypeRequest& request) {
    DtypeReport report;
    report.model = request.model;
    report.precision = request.precision;
    if (auto errors = validate(request); !errors.empty()) {
        report.error = errors.front().message();
        return report;
    }
    const DeviceTarget target = resolveDevice(request.device);
    report.device = target.name();
    if (auto refused = lab::refusal(request.device, request.precision, target)) {
        report.error = refused->field == "precision"
                           ? target.name() + " cannot run " +
                                 std::string(toString(request.precision)) + ": " + refused->reason
                           : refused->message();
        return report;
    }
    report.error = lab::failureOf([&] { report = inspect(request, target); });
    return report;
}

} // namespace lmprof::engine
