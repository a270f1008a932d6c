#include "worker/python/python_runtime.h"

#include "kagent_worker_py.h"  // generated: kKagentWorkerModules, the package's sources

namespace kagent::worker {

std::string to_std_string(PyObject* o) {
  if (!o) return {};
  PyRef s = PyRef::steal(PyObject_Str(o));
  if (!s) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* c = PyUnicode_AsUTF8(s.get());
  if (!c) {
    PyErr_Clear();
    return "<unprintable>";
  }
  return c;
}

nlohmann::json to_json(PyObject* o) {
  PyRef json_mod = check(PyImport_ImportModule("json"));
  PyRef text = check(PyObject_CallMethod(json_mod.get(), "dumps", "O", o));
  return nlohmann::json::parse(PyUnicode_AsUTF8(text.get()));
}

void throw_python_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyRef t = PyRef::steal(type), v = PyRef::steal(value), b = PyRef::steal(tb);
  std::string kind = "python_error", message, traceback;
  if (v) {
    PyRef k = PyRef::steal(PyObject_GetAttrString(v.get(), "kind"));
    if (k && PyUnicode_Check(k.get())) {
      kind = PyUnicode_AsUTF8(k.get());
      PyRef m = PyRef::steal(PyObject_GetAttrString(v.get(), "message"));
      message = to_std_string(m.get());
    } else {
      PyErr_Clear();
      const char* tname = t ? reinterpret_cast<PyTypeObject*>(t.get())->tp_name : "Error";
      message = std::string(tname) + ": " + to_std_string(v.get());
    }
  }
  if (b) {
    PyRef tbmod = PyRef::steal(PyImport_ImportModule("traceback"));
    if (tbmod) {
      PyRef lines = PyRef::steal(PyObject_CallMethod(tbmod.get(), "format_tb", "O", b.get()));
      if (lines) {
        PyRef joined = PyRef::steal(PyUnicode_Join(PyRef::steal(PyUnicode_FromString("")).get(), lines.get()));
        traceback = to_std_string(joined.get());
      }
    }
    PyErr_Clear();
  }
  throw PythonError(kind, message, traceback);
}

PyRef check(PyObject* o) {
  if (!o) throw_python_error();
  return PyRef::steal(o);
}

PythonRuntime::PythonRuntime(const std::string& python_executable) {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // the worker's signals stay the worker's
  config.parse_argv = 0;
  // Both names point at the real interpreter: prefix discovery (stdlib, venv, site-packages)
  // follows program_name, and anything that spawns "sys.executable" must get python, not us.
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, python_executable.c_str());
  if (!PyStatus_Exception(st)) st = PyConfig_SetBytesString(&config, &config.executable, python_executable.c_str());
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st))
    throw std::runtime_error(std::string("cannot start Python (") + python_executable + "): " +
                             (st.err_msg ? st.err_msg : "unknown error"));
}

namespace {

// Imports of "kagent_worker" and its modules are answered from the embedded sources: a
// meta path finder ahead of the file system's, so no file of the package is read at run time.
constexpr const char* kBootstrap = R"PY(
import importlib.abc, importlib.util, sys

class EmbeddedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, modules):
        self.modules = modules  # name -> (file, source)

    def find_spec(self, name, path=None, target=None):
        if name not in self.modules:
            return None
        return importlib.util.spec_from_loader(name, self, origin=self.modules[name][0],
                                               is_package=name == "kagent_worker")

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        file, source = self.modules[module.__name__]
        module.__file__ = file
        exec(compile(source, file, "exec"), module.__dict__)

def install(modules):
    sys.meta_path.insert(0, EmbeddedFinder(modules))
)PY";

}  // namespace

PyRef PythonRuntime::registry() {
  if (registry_) return registry_;
  PyRef modules = check(PyDict_New());
  for (const auto& m : kKagentWorkerModules) {
    PyRef entry = check(Py_BuildValue("(ss)", m.file, m.source));
    if (PyDict_SetItemString(modules.get(), m.name, entry.get()) != 0) throw_python_error();
  }
  PyRef code = check(Py_CompileString(kBootstrap, "<kagent bootstrap>", Py_file_input));
  PyRef boot = check(PyImport_ExecCodeModule("kagent_worker_bootstrap", code.get()));
  check(PyObject_CallMethod(boot.get(), "install", "O", modules.get()));
  PyRef module = check(PyImport_ImportModule("kagent_worker.registry"));
  PyRef functions = check(PyObject_GetAttrString(module.get(), "FUNCTIONS"));
  // Both lists must name the same functions: a rename on one side fails here, at start-up.
  for (const auto& [fn, name] : kPyFunctionNames)
    if (!PyDict_GetItemString(functions.get(), name))
      throw std::runtime_error(std::string("kagent_worker.registry has no function '") + name + "'");
  if (PyDict_Size(functions.get()) != static_cast<Py_ssize_t>(kPyFunctionNames.size()))
    throw std::runtime_error("kagent_worker.registry lists functions that python_functions.h does not");
  registry_ = functions;
  return registry_;
}

PyRef PythonRuntime::call(PyFn function, const std::vector<PyRef>& args) {
  PyObject* fn = PyDict_GetItemString(registry().get(), enum_name(kPyFunctionNames, function, "?").c_str());  // borrowed
  if (!fn) throw std::runtime_error("kagent_worker.registry lost a function");
  PyRef tuple = check(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    Py_INCREF(args[i].get());
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), args[i].get());
  }
  return check(PyObject_CallObject(fn, tuple.get()));
}

}  // namespace kagent::worker
