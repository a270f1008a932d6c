// The embedded Python of a test that calls the worker's Python functions in-process: one
// runtime per test executable (Python cannot be started twice), started on first use.
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "build_info.h"
#include "worker/python/python_runtime.h"

namespace kagent::testing {

inline worker::PythonRuntime& embedded_python() {
  static worker::PythonRuntime runtime(build::kPythonExecutable);
  return runtime;
}

// Runs `code` in the runtime's __main__; a test fails on any exception, showing the code.
inline void run_python(const std::string& code) { REQUIRE_MESSAGE(PyRun_SimpleString(code.c_str()) == 0, code); }

}  // namespace kagent::testing
