#include "worker/guards/guard_python.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/files.h"
#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::vector<GuardFinding> findings_from_python(PyObject* list) {
  return to_json(list).get<std::vector<GuardFinding>>();
}

PythonWatch::PythonWatch(PythonRuntime& py) : py_(py), snapshot_(py.call(PyFn::GuardSnapshot, {})) { mark_threads(); }

void PythonWatch::mark_threads() { threads_ = py_.call(PyFn::PythonThreads, {}); }

std::vector<GuardFinding> PythonWatch::tampering() const {
  PyRef findings = py_.call(PyFn::GuardTampering, {snapshot_});
  return findings_from_python(findings.get());
}

void PythonWatch::put_back_autotuning() const { py_.call(PyFn::PutBackAutotuning, {snapshot_}); }

std::optional<GuardFinding> PythonWatch::new_threads() const {
  const auto names = to_json(py_.call(PyFn::NewPythonThreads, {threads_}).get()).get<std::vector<std::string>>();
  if (names.empty()) return std::nullopt;
  return GuardFinding{guard::kThreads, kGuardReject,
                      fmt::format("{} Python thread(s) started by the candidate still run after forward: {}",
                                  names.size(), fmt::join(names, ", "))};
}

std::vector<GuardFinding> scan_kernelbench_source(PythonRuntime& py, const std::string& path) {
  const std::string text = read_file(path);
  PyRef source = check(PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  PyRef findings = py.call(PyFn::ScanKernelbenchSource, {source});
  return findings_from_python(findings.get());
}

}  // namespace kagent::worker
