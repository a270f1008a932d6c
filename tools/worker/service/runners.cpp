#include "worker/service/runners.h"

#include <dlfcn.h>

#include <torch/csrc/autograd/python_variable.h>

namespace kagent::worker {

PyRef to_python(const c10::IValue& v) {
  if (v.isTensor()) return check(THPVariable_Wrap(v.toTensor()));
  if (v.isBool()) return PyRef::borrow(v.toBool() ? Py_True : Py_False);
  if (v.isInt()) return check(PyLong_FromLongLong(v.toInt()));
  if (v.isDouble()) return check(PyFloat_FromDouble(v.toDouble()));
  if (v.isNone()) return PyRef::borrow(Py_None);
  throw std::invalid_argument("kagent: cannot pass a " + v.tagKind() + " to Python");
}

c10::IValue from_python(PyObject* o) {
  if (THPVariable_Check(o)) return THPVariable_Unpack(o);
  if (PyBool_Check(o)) return c10::IValue(o == Py_True);
  if (PyLong_Check(o)) return c10::IValue(static_cast<int64_t>(PyLong_AsLongLong(o)));
  if (PyFloat_Check(o)) return c10::IValue(PyFloat_AsDouble(o));
  if (o == Py_None) return c10::IValue();
  throw std::invalid_argument("kagent: a forward input of Python type " + std::string(Py_TYPE(o)->tp_name) +
                              " is not supported");
}

std::vector<at::Tensor> outputs_from_python(PyObject* o) {
  if (THPVariable_Check(o)) return {THPVariable_Unpack(o)};
  if (PyTuple_Check(o) || PyList_Check(o)) {
    PyRef seq = check(PySequence_Fast(o, "outputs"));
    std::vector<at::Tensor> out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(seq.get(), i);
      if (!THPVariable_Check(item))
        throw std::runtime_error("output " + std::to_string(i) + " is a " + Py_TYPE(item)->tp_name + ", not a tensor");
      out.push_back(THPVariable_Unpack(item));
    }
    return out;
  }
  throw std::runtime_error(std::string("forward returned a ") + Py_TYPE(o)->tp_name + ", not a tensor or tuple");
}

std::vector<at::Tensor> outputs_from_ivalue(const c10::IValue& v) {
  if (v.isTensor()) return {v.toTensor()};
  if (v.isTensorList()) return v.toTensorVector();
  if (v.isTuple()) {
    std::vector<at::Tensor> out;
    for (const auto& e : v.toTupleRef().elements()) {
      if (!e.isTensor()) throw std::runtime_error("forward returned a tuple holding a " + e.tagKind());
      out.push_back(e.toTensor());
    }
    return out;
  }
  if (v.isList()) {
    std::vector<at::Tensor> out;
    for (const auto& e : v.toListRef()) out.push_back(e.toTensor());
    return out;
  }
  throw std::runtime_error("forward returned a " + v.tagKind() + ", not a tensor");
}

int64_t tensor_bytes(const Values& values) {
  int64_t n = 0;
  for (const auto& v : values)
    if (v.isTensor()) n += static_cast<int64_t>(v.toTensor().nbytes());
  return n;
}

int64_t tensor_bytes(const std::vector<at::Tensor>& tensors) {
  int64_t n = 0;
  for (const auto& t : tensors)
    if (t.defined()) n += static_cast<int64_t>(t.nbytes());
  return n;
}

Values clone_values(const Values& values) {
  Values out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(v.isTensor() ? c10::IValue(v.toTensor().clone()) : v);
  return out;
}

std::vector<at::Tensor> PythonRunner::run(const Values& inputs) {
  PyRef args = check(PyTuple_New(static_cast<Py_ssize_t>(inputs.size())));
  for (size_t i = 0; i < inputs.size(); ++i) {
    PyRef item = to_python(inputs[i]);
    Py_INCREF(item.get());
    PyTuple_SET_ITEM(args.get(), static_cast<Py_ssize_t>(i), item.get());
  }
  PyRef out = check(PyObject_CallObject(callable_.get(), args.get()));
  return outputs_from_python(out.get());
}

NativeRunner::NativeRunner(const std::string& library_path, const std::string& op_name, Values extra)
    : extra_(std::move(extra)) {
  // Loaded for the life of the process: the op's registration and any static state the
  // candidate made live inside it, and the worker is replaced often enough anyway.
  void* handle = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw CandidateLoadError(std::string("cannot load the candidate: ") + ::dlerror());
  library_ = std::shared_ptr<void>(handle, [](void*) {});
  auto sep = op_name.find("::");
  if (sep == std::string::npos) throw CandidateLoadError("bad op name " + op_name);
  auto handle_opt = c10::Dispatcher::singleton().findOp({op_name, ""});
  if (!handle_opt) throw CandidateLoadError("the candidate registered no operator " + op_name);
  op_ = handle_opt;
  // A schema ending in Tensor[] takes the parameters as one collection (kagent::Params on the
  // candidate's side; inputs are never lists): one list, built once, shares the tensors.
  const auto& args = op_->schema().arguments();
  if (!args.empty() && args.back().type()->kind() == c10::TypeKind::ListType) {
    c10::List<at::Tensor> list;
    list.reserve(extra_.size());
    for (const auto& v : extra_) list.push_back(v.toTensor());
    extra_ = Values{c10::IValue(std::move(list))};
  }
}

std::vector<at::Tensor> NativeRunner::run(const Values& inputs) {
  torch::jit::Stack stack;
  stack.reserve(inputs.size() + extra_.size());
  for (const auto& v : inputs) stack.push_back(v);
  for (const auto& v : extra_) stack.push_back(v);
  op_->callBoxed(&stack);
  if (stack.size() != 1) {
    std::vector<at::Tensor> out;
    for (const auto& v : stack) out.push_back(v.toTensor());
    return out;
  }
  return outputs_from_ivalue(stack[0]);
}

}  // namespace kagent::worker
