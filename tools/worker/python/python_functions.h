// The Python functions the worker calls, by name: the one list on the C++ side. The package's
// registry (kagent_worker/registry.py) holds the same names; tests/worker/python fails when
// the two lists differ, and the worker checks them against each other when it starts.
#pragma once

#include "common/enum_names.h"

namespace kagent::worker {

enum class PyFn {
  Preload,
  DeviceInfo,
  OpenProblem,
  DeriveSpec,
  WarmUp,
  LoadKernelbenchCandidate,
  CompiledModel,
  ExtraInputs,
  ReferenceFp64,
  PrecisionInputs,
  GuardSnapshot,
  GuardTampering,
  PutBackAutotuning,
  PythonThreads,
  NewPythonThreads,
  ScanKernelbenchSource,
  CaptureWorkerState,
  RestoreWorkerState,
  ModuleState,
  ModuleStateChanged,
  RestoreModuleState,
  DrawAheadServe,
};

inline constexpr EnumNames<PyFn, 22> kPyFunctionNames{{
    {PyFn::Preload, "preload"},
    {PyFn::DeviceInfo, "device_info"},
    {PyFn::OpenProblem, "open_problem"},
    {PyFn::DeriveSpec, "derive_spec"},
    {PyFn::WarmUp, "warm_up"},
    {PyFn::LoadKernelbenchCandidate, "load_kernelbench_candidate"},
    {PyFn::CompiledModel, "compiled_model"},
    {PyFn::ExtraInputs, "extra_inputs"},
    {PyFn::ReferenceFp64, "reference_fp64"},
    {PyFn::PrecisionInputs, "precision_inputs"},
    {PyFn::GuardSnapshot, "guard_snapshot"},
    {PyFn::GuardTampering, "guard_tampering"},
    {PyFn::PutBackAutotuning, "put_back_autotuning"},
    {PyFn::PythonThreads, "python_threads"},
    {PyFn::NewPythonThreads, "new_python_threads"},
    {PyFn::ScanKernelbenchSource, "scan_kernelbench_source"},
    {PyFn::CaptureWorkerState, "capture_worker_state"},
    {PyFn::RestoreWorkerState, "restore_worker_state"},
    {PyFn::ModuleState, "module_state"},
    {PyFn::ModuleStateChanged, "module_state_changed"},
    {PyFn::RestoreModuleState, "restore_module_state"},
    {PyFn::DrawAheadServe, "draw_ahead_serve"},
}};

}  // namespace kagent::worker
