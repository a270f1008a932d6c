// The profile phase (docs/evaluation.md, "Profile"), after timing a correct candidate: one call under kernel
// activity tracing, then one under hardware counters, each after an L2 flush as in every timed
// iteration. It never changes the verdict: a failure becomes {"error": ...} (a lost CUDA
// context also retires the worker).
//
// One per worker, kept across evaluations: the range profiler's initialisation and host-side
// setup cost several times the profiled calls (about 0.4 s on an H200). warm_up() pays them
// early, on a trivial kernel, while nvcc compiles the candidate (the "prepare" request).
#pragma once

#include <optional>

#include <Python.h>
#include <nlohmann/json.hpp>

#include "profiler/range_profiler.h"
#include "timer/l2_flush.h"
#include "result/device_info.h"
#include "worker/protocol/protocol.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

// The worker's counter passes per profile, unless KAGENT_PROFILER_PASSES says otherwise.
inline constexpr size_t kWorkerCounterPasses = 1;

class ProfilePhase {
 public:
  // Reads KAGENT_PROFILER_KEEP_SESSION (configuration; 0 ends the session after each profile) and
  // KAGENT_PROFILER_PASSES (counter passes per profile: 1, or 2 for the roofline's FLOPs).
  ProfilePhase();

  // Best effort: a failure here shows again, with its reason, in the first real profile.
  void warm_up();
  bool warm() const { return warm_; }

  // `fatal` is set when the candidate broke the CUDA context.
  nlohmann::json run(Runner& candidate, ProblemSession& session, PyObject* reference_model, const CandidateRef& cand,
                     const DeviceInfo& device, int64_t seed, bool& fatal);

 private:
  void flush_l2();  // before each profiled call, as before every timed one

  profiler::RangeProfiler counters_;
  std::optional<L2Flush> flush_;  // made on first use: it needs the CUDA context
  bool warm_ = false;
};

}  // namespace kagent::worker
