#include "worker/python_runtime.h"

#include "kagent_worker_py.h"  // generated: kKagentWorkerPy, the helper module's source

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

PyRef PythonRuntime::helper_module() {
  if (helper_) return helper_;
  PyRef code = check(Py_CompileString(kKagentWorkerPy, "kagent_worker.py", Py_file_input));
  PyRef module = check(PyImport_ExecCodeModule("kagent_worker", code.get()));
  helper_ = module;
  return helper_;
}

PyRef PythonRuntime::call(const char* function, const std::vector<PyRef>& args) {
  PyRef fn = check(PyObject_GetAttrString(helper_module().get(), function));
  PyRef tuple = check(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    Py_INCREF(args[i].get());
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), args[i].get());
  }
  return check(PyObject_CallObject(fn.get(), tuple.get()));
}

}  // namespace kagent::worker
