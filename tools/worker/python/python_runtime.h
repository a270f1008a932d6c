// The embedded CPython interpreter and the few RAII pieces kagent needs around it.
// The worker is single-threaded and holds the GIL for its whole life.
#pragma once

#include <Python.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/python/python_functions.h"

namespace kagent::worker {

// An owned (strong) reference.
class PyRef {
 public:
  PyRef() = default;
  static PyRef steal(PyObject* o) { return PyRef(o); }
  static PyRef borrow(PyObject* o) {
    Py_XINCREF(o);
    return PyRef(o);
  }
  PyRef(const PyRef& o) : obj_(o.obj_) { Py_XINCREF(obj_); }
  PyRef& operator=(const PyRef& o) {
    if (this != &o) {
      Py_XINCREF(o.obj_);
      Py_XDECREF(obj_);
      obj_ = o.obj_;
    }
    return *this;
  }
  PyRef(PyRef&& o) noexcept : obj_(o.obj_) { o.obj_ = nullptr; }
  PyRef& operator=(PyRef&& o) noexcept {
    if (this != &o) {
      Py_XDECREF(obj_);
      obj_ = o.obj_;
      o.obj_ = nullptr;
    }
    return *this;
  }
  ~PyRef() { Py_XDECREF(obj_); }
  PyObject* get() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }

 private:
  explicit PyRef(PyObject* o) : obj_(o) {}
  PyObject* obj_ = nullptr;
};

// A Python exception turned into C++: `kind` is KagentError.kind when the helper module
// raised one, else "python_error".
struct PythonError : std::runtime_error {
  PythonError(std::string kind_, std::string message_, std::string traceback_)
      : std::runtime_error(message_), kind(std::move(kind_)), message(std::move(message_)),
        traceback(std::move(traceback_)) {}
  std::string kind, message, traceback;
};

// Takes the pending Python exception and throws it as PythonError.
[[noreturn]] void throw_python_error();
// Throws when `o` is null (a failed call), else returns it owned.
PyRef check(PyObject* o);

// Python's cyclic garbage collector off for a scope, as timeit turns it off: a collection that
// falls inside a timed call (a candidate's forward allocates Python objects) stalls its launch,
// and on a worker whose heap holds torch and its kept problems a full collection takes 4-12 ms
// (measured: 0.3-1 ms kernels with single samples 4-5 ms over their median, noise 10-75%, loops
// run to the time cap). Reference counting still frees everything that forms no cycle.
class GcPaused {
 public:
  GcPaused() : was_enabled_(PyGC_Disable() == 1) {}
  ~GcPaused() {
    if (was_enabled_) PyGC_Enable();
  }
  GcPaused(const GcPaused&) = delete;
  GcPaused& operator=(const GcPaused&) = delete;

 private:
  bool was_enabled_;
};

// Starts the interpreter as if `python_executable` ran (so its stdlib, site-packages and
// torch are found); finalization is skipped on purpose: torch does not survive it.
class PythonRuntime {
 public:
  explicit PythonRuntime(const std::string& python_executable);
  PythonRuntime(const PythonRuntime&) = delete;
  PythonRuntime& operator=(const PythonRuntime&) = delete;

  // Calls one of the package's registered functions (python_functions.h).
  PyRef call(PyFn function, const std::vector<PyRef>& args);

 private:
  PyRef registry();  // kagent_worker.registry.FUNCTIONS, the package imported on first use

  PyRef registry_;
};

std::string to_std_string(PyObject* o);  // str(o)
// json.dumps(o) parsed back: specs and device facts cross from Python as text, rarely.
nlohmann::json to_json(PyObject* o);

}  // namespace kagent::worker
