// Runners map inputs to outputs. The reference, a native candidate and a KernelBench
// candidate are all runners; the checker and the timer do not care which.
#pragma once

#include <ATen/core/ivalue.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "worker/python/python_runtime.h"
#include "worker/service/module_state.h"

namespace kagent::worker {

using Values = std::vector<c10::IValue>;  // forward inputs: tensors and scalars

class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::vector<at::Tensor> run(const Values& inputs) = 0;
  // The model's plain tensor state (module_state.h), where it has one kagent watches: a
  // reference, a ModelNew. A native candidate has none.
  virtual ModuleState* state() { return nullptr; }
};

// A Python callable (an nn.Module: the reference Model, a ModelNew, a torch.compile'd model).
class PythonRunner : public Runner {
 public:
  explicit PythonRunner(PyRef callable, std::optional<ModuleState> state = std::nullopt)
      : callable_(std::move(callable)), state_(std::move(state)) {}
  std::vector<at::Tensor> run(const Values& inputs) override;
  ModuleState* state() override { return state_ ? &*state_ : nullptr; }

 private:
  PyRef callable_;
  std::optional<ModuleState> state_;
};

// A native candidate: a shared object that registered `op_name` with the dispatcher.
// `extra` (the model's parameters and buffers) follow the inputs on every call, one by one or,
// when the op's schema ends in Tensor[], as one list (forward_signature.h's conventions).
class NativeRunner : public Runner {
 public:
  NativeRunner(const std::string& library_path, const std::string& op_name, Values extra);
  std::vector<at::Tensor> run(const Values& inputs) override;

 private:
  std::shared_ptr<void> library_;  // dlopen handle; never closed while the op may run
  std::optional<c10::OperatorHandle> op_;  // set by the constructor; OperatorHandle has no default
  Values extra_;
};

// Raised when a candidate cannot be loaded at all (dlopen, missing op): an invalid candidate.
struct CandidateLoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Conversions between the two worlds.
PyRef to_python(const c10::IValue& v);
c10::IValue from_python(PyObject* o);               // tensors, ints, floats, bools
std::vector<at::Tensor> outputs_from_python(PyObject* o);
std::vector<at::Tensor> outputs_from_ivalue(const c10::IValue& v);

// Deep copy: tensors cloned, scalars copied, so a candidate cannot corrupt what others see.
Values clone_values(const Values& values);

// The bytes of the tensors among them (scalars and undefined tensors count 0).
int64_t tensor_bytes(const Values& values);
int64_t tensor_bytes(const std::vector<at::Tensor>& tensors);

}  // namespace kagent::worker
