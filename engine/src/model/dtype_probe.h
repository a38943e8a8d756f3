// The engine's stand-in for Python's forward hooks: every module of model/ passes its inputs
// and output through probe::seen(), which hands them to the recorder installed on this
// thread, if any (the precision lab's dtype inspector). With none installed it is one
// thread-local load and returns the output untouched.
#pragma once

#include <ATen/core/Tensor.h>
#include <initializer_list>
#include <torch/nn/module.h>

namespace lmprof::engine::model::probe {

class Recorder {
public:
    virtual ~Recorder() = default;
    virtual void onCall(const torch::nn::Module& module, std::initializer_list<at::Tensor> inputs,
                        const at::Tensor& output) = 0;
};

// The recorder of this thread, or null.
Recorder*& current();

// Installs a recorder on this thread for the scope's lifetime.
class Scope {
public:
    explicit Scope(Recorder& recorder) : m_previous(current()) { current() = &recorder; }
    ~Scope() { current() = m_previous; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    Recorder* m_previous;
};

// `return probe::seen(*this, {x}, result);` at the end of a module's forward.
inline at::Tensor seen(const torch::nn::Module& module, std::initializer_list<at::Tensor> inputs,
                       at::Tensor output) {
    if (Recorder* r = current()) {
        r->onCall(module, inputs, output);
    }
    return output;
}

} // namespace lmprof::engine::model::probe
