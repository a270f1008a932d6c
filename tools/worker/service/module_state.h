// A Python model's plain tensor state (kagent_worker/module_state.py): tensors its modules keep as
// ordinary attributes. A problem whose forward replaces one on every call (KernelBench level 3's
// VanillaRNN: self.hidden) gives outputs that depend on how many calls came before, and kagent
// calls the candidate more often than the reference (before and after it in every trial; the
// guards' extra calls). Snapshotted when the model is built; once held, every compared call
// starts from that snapshot, on both sides, as KernelBench's lockstep calls do.
#pragma once

#include <string>
#include <vector>

#include "worker/python/python_runtime.h"

namespace kagent::worker {

class ModuleState {
 public:
  // Takes the snapshot: construct it right after the model is built, before any call.
  ModuleState(PythonRuntime& py, PyRef model);

  // Whether the model keeps any plain tensor attribute at all.
  bool empty() const { return empty_; }
  // The attributes ("Model.hidden") whose value differs from the snapshot now (a device move
  // is no change): after a call, the problem is stateful when there is one.
  std::vector<std::string> changed() const;
  // From now on restore() puts the snapshot back; before, it does nothing.
  void hold() { held_ = true; }
  // Clones of the snapshot back into the model (in-place writes then never reach the snapshot).
  void restore() const;

 private:
  PythonRuntime& py_;
  PyRef model_;
  PyRef snapshot_;
  bool empty_ = true;
  bool held_ = false;
};

}  // namespace kagent::worker
