// The reward-hack guards of one evaluation, in the order the evaluation gives them a place (docs/evaluation.md):
//   construction (before the candidate loads): snapshot of what a candidate could tamper with;
//   before_timing (after correctness passed): the static checks of the candidate's source and
//     of tampering, then ONE guard run on fresh inputs that feeds most guards at once (a traced
//     call after poisoning free memory, a second call after poisoning again, the fp64 truth,
//     extra shapes);
//   code_checks (instead, after the trials found a wrong output): the findings about the code
//     that do not depend on its outputs: the static checks, tampering, and whether forward
//     launched a kernel of its own (one traced call). A rejection among them outranks the wrong
//     output (result/policy.h), as KernelBench's static checker runs before its harness: an
//     answer racing its own side stream gets one verdict whoever wins the race in the trials;
//   after_candidate_timing (before the baselines are measured): cached results on the timed
//     inputs, tampering and threads again (a patch made during timing would slow the eager
//     baseline that is measured next);
//   after_baselines: the excessive-speedup flag.
// Findings go into the result as they are concluded; the verdicts under each policy are made
// from them where the evaluation ends (result/policy.h: apply_policies). The evaluation goes on
// while some policy would still call the candidate correct (open()): timing is skipped only for
// a candidate rejected under every policy. Findings of disabled guards are dropped.
#pragma once

#include <functional>

#include <optional>
#include <string>
#include <vector>

#include "profiler/kernel_activity.h"
#include "profiler/kernel_attribution.h"
#include "result/eval_result.h"
#include "worker/guards/guard_python.h"
#include "worker/protocol/eval_options.h"
#include "worker/protocol/guard_options.h"
#include "worker/python/python_runtime.h"
#include "worker/service/calls.h"
#include "worker/service/problem_session.h"
#include "worker/service/runners.h"

namespace kagent::worker {

class GuardPass {
 public:
  // Construct before the candidate loads.
  GuardPass(PythonRuntime& py, const GuardOptions& opts);

  // What the guards need to know about the loaded candidate besides its runner.
  // Native: the very parameter tensors forward receives, and its kernels' names (from ptxas;
  // may be empty, then library name patterns decide what is own).
  void native_loaded(const Values& params, std::vector<std::string> own_kernels);
  // Kernelbench: the ModelNew instance, its source file, and whether it built extensions.
  void kernelbench_loaded(PyRef model, std::string source_path, bool built_extensions);

  // `between` runs between the guard run's steps (the evaluation's yield to a waiting timing).
  void before_timing(ProblemSession& problem, Runner& candidate, Runner& reference, PyObject* reference_model,
                     const EvalOptions& eval, EvalResult& r, const std::function<void()>& between = {});
  // `r` is wrong (its trials failed): see code_checks above.
  void code_checks(ProblemSession& problem, Runner& candidate, const EvalOptions& eval, EvalResult& r);
  void after_candidate_timing(ProblemSession& problem, Runner& candidate, Runner& reference, Values& timing_inputs,
                              const EvalOptions& eval, EvalResult& r);
  void after_baselines(EvalResult& r);

  // Whether some policy would still call `r` correct: its status is Correct and the findings
  // so far reject it under some policy but not all.
  static bool open(const EvalResult& r);

  // Seconds of the guard run's steps (calls, precision, shapes, tampering), once it ran.
  const std::vector<std::pair<std::string, double>>& split() const { return split_; }

 private:
  // The source scan and tampering: findings about the code that need no GPU work.
  void static_checks();
  // Which of a traced call's kernels are the candidate's own: the own-kernel share and no_kernel.
  profiler::Attribution own_kernels(const std::vector<profiler::KernelRecord>& kernels);
  profiler::Attribution attribution_of(const std::vector<profiler::KernelRecord>& kernels) const;
  // With the GPU alone (after the timing): library_share traced again where the share measured
  // beside siblings was near its bound; the new measurement replaces the old one in r.
  void recheck_library_share(Runner& candidate, const Values& inputs, EvalResult& r);
  void guard_run(ProblemSession& problem, Runner& candidate, Runner& reference, PyObject* reference_model,
                 const EvalOptions& eval, const std::function<void()>& between);
  void add(std::optional<GuardFinding> finding);
  void add(const std::vector<GuardFinding>& findings);
  // Moves new findings (and the own-kernel share, once measured) into r.
  void conclude(EvalResult& r);

  PythonRuntime& py_;
  GuardOptions opts_;
  std::optional<PythonWatch> watch_;
  std::string format_ = "cuda";
  Values params_;
  std::vector<std::string> own_kernels_;
  PyRef model_;
  std::string source_path_;
  bool no_own_code_ = false;  // kernelbench: nothing in it could launch a kernel (own_code.h)
  std::vector<GuardFinding> pending_;
  std::optional<double> own_share_;  // of the traced call
  std::vector<std::pair<std::string, double>> split_;
};

}  // namespace kagent::worker
