#include "worker/service/module_state.h"

namespace kagent::worker {

ModuleState::ModuleState(PythonRuntime& py, PyRef model) : py_(py), model_(std::move(model)) {
  snapshot_ = py_.call(PyFn::ModuleState, {model_});
  empty_ = PyDict_Size(snapshot_.get()) == 0;
}

std::vector<std::string> ModuleState::changed() const {
  if (empty_) return {};
  PyRef names = py_.call(PyFn::ModuleStateChanged, {model_, snapshot_});
  std::vector<std::string> out;
  for (Py_ssize_t i = 0; i < PyList_Size(names.get()); ++i) out.push_back(to_std_string(PyList_GetItem(names.get(), i)));
  return out;
}

void ModuleState::restore() const {
  if (held_) py_.call(PyFn::RestoreModuleState, {model_, snapshot_});
}

}  // namespace kagent::worker
