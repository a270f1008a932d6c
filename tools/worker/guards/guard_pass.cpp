#include "worker/guards/guard_pass.h"

#include <chrono>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "checker/compare.h"
#include "common/files.h"
#include "cuda/cuda_error.h"
#include "profiler/kernel_attribution.h"
#include "result/policy.h"
#include "worker/guards/guard_aliasing.h"
#include "worker/guards/guard_cached.h"
#include "worker/guards/guard_inputs.h"
#include "worker/guards/guard_kernels.h"
#include "worker/guards/own_code.h"
#include "worker/guards/guard_poison.h"
#include "worker/guards/guard_precision.h"
#include "worker/guards/guard_shapes.h"
#include "worker/guards/guard_side_stream.h"
#include "worker/guards/guard_host_work.h"
#include "worker/guards/guard_unjoined_stream.h"
#include "worker/guards/guard_speedup.h"
#include "worker/guards/guard_trace.h"

namespace kagent::worker {

namespace {

std::vector<NamedTensor> named(const Values& values, const char* what) {
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].isTensor()) out.push_back({fmt::format("{} {}", what, i), values[i].toTensor()});
  return out;
}

// A guard run's outputs against the reference's: memory that still holds the poison shows
// that forward returned what it never wrote (leftover_memory); any other difference is a
// candidate that is right in the trials and wrong here (inconsistent_result).
std::optional<GuardFinding> judge_run(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                                      const ToleranceConfig& tolerance, bool poisoned, const char* run,
                                      const GuardOptions& opts) {
  const auto bad = first_mismatch(got, expected, tolerance);
  if (!bad) return std::nullopt;
  const size_t k = static_cast<size_t>(bad->output);
  const int64_t poison = poisoned && k < got.size() ? poisoned_elements(got[k]) : 0;
  if (poison > 0 && opts.on(guard::kLeftoverMemory))
    return GuardFinding{guard::kLeftoverMemory, kGuardReject,
                        fmt::format("{}: output {} holds {} elements of the memory poisoned before the call: forward "
                                    "returned memory it never wrote (a result left there earlier passed the trials)",
                                    run, k, poison)};
  if (!opts.on(guard::kInconsistent)) return std::nullopt;
  return GuardFinding{guard::kInconsistent, kGuardReject,
                      fmt::format("{}: wrong on fresh inputs after passing every trial: output {}: {}", run, k,
                                  bad->message)};
}

}  // namespace

GuardPass::GuardPass(PythonRuntime& py, const GuardOptions& opts) : py_(py), opts_(opts) {
  if (opts_.enabled) watch_.emplace(py_);
}

void GuardPass::native_loaded(const Values& params, std::vector<std::string> own_kernels) {
  format_ = "cuda";
  params_ = params;
  own_kernels_ = std::move(own_kernels);
  if (watch_) {
    watch_->mark_threads();
    watch_->put_back_autotuning();
  }
}

void GuardPass::kernelbench_loaded(PyRef model, std::string source_path, bool built_extensions) {
  format_ = "kernelbench";
  model_ = std::move(model);
  source_path_ = std::move(source_path);
  try {
    no_own_code_ = !may_launch_own_kernels(read_file(source_path_), built_extensions);
  } catch (const std::exception&) {
    no_own_code_ = false;  // unreadable: judged as before
  }
  if (watch_) {
    watch_->mark_threads();
    watch_->put_back_autotuning();  // an answer's module-level `cudnn.benchmark = True`
  }
}

void GuardPass::add(std::optional<GuardFinding> finding) {
  if (finding && opts_.on(finding->name)) pending_.push_back(std::move(*finding));
}

void GuardPass::add(const std::vector<GuardFinding>& findings) {
  for (const auto& f : findings) add(f);
}

bool GuardPass::open(const EvalResult& r) { return r.status == Status::Correct && !rejected_under_all(r.guards); }

void GuardPass::conclude(EvalResult& r) {
  for (auto& f : pending_) r.guards.push_back(std::move(f));
  pending_.clear();
  if (own_share_) r.own_kernel_share = own_share_;
}

void GuardPass::before_timing(ProblemSession& problem, Runner& candidate, Runner& reference,
                              PyObject* reference_model, const EvalOptions& eval, EvalResult& r,
                              const std::function<void()>& between) {
  if (!opts_.enabled || r.status != Status::Correct) return;
  static_checks();
  if (!rejected_under_all(pending_)) {
    try {
      guard_run(problem, candidate, reference, reference_model, eval, between);
    } catch (...) {
      conclude(r);  // what was found before the candidate failed stays on record; the failure is the verdict
      throw;
    }
  }
  conclude(r);
}

void GuardPass::static_checks() {
  // What the candidate's code is and what loading it did: no GPU work needed.
  if (format_ == "kernelbench" && !source_path_.empty()) add(scan_kernelbench_source(py_, source_path_));
  add(watch_->tampering());
}

profiler::Attribution GuardPass::attribution_of(const std::vector<profiler::KernelRecord>& kernels) const {
  // An answer with no code that could launch a kernel owns none of the unclaimed ones.
  return profiler::attribute_kernels(kernels, own_kernels_,
                                     no_own_code_ ? profiler::Unclaimed::NoOnes : profiler::Unclaimed::Own);
}

profiler::Attribution GuardPass::own_kernels(const std::vector<profiler::KernelRecord>& kernels) {
  auto attribution = attribution_of(kernels);
  own_share_ = own_kernel_share(kernels, attribution);
  auto no_kernel = check_no_kernel(kernels, attribution);
  if (no_kernel && no_own_code_)
    no_kernel->message += " (the answer builds no extension and calls no kernel compiler: no kernel can be its own)";
  add(std::move(no_kernel));
  return attribution;
}

void GuardPass::code_checks(ProblemSession& problem, Runner& candidate, const EvalOptions& eval, EvalResult& r) {
  if (!opts_.enabled || r.status != Status::Wrong) return;
  static_checks();
  // Only no_kernel of the traced call's findings: whether an own kernel ran is the code's, where
  // library_share (a share of GPU time) and side_stream (a moment) may go either way on a rerun.
  if (!rejected_under_all(pending_) && opts_.on(guard::kNoKernel)) {
    try {
      const TracedCall call = traced_call(candidate, problem.make_inputs("cuda", eval.seed + opts_.seed_offset), true);
      if (call.kernels) (void)own_kernels(*call.kernels);
    } catch (...) {
      conclude(r);
      throw;
    }
  }
  conclude(r);
}

void GuardPass::guard_run(ProblemSession& problem, Runner& candidate, Runner& reference, PyObject* reference_model,
                          const EvalOptions& eval, const std::function<void()>& between) {
  // Between steps whose every call has finished (never between a poisoning and its call).
  const auto next_step = [&] {
    if (between) between();
  };
  // Memory: on problems whose tensors take gigabytes, the guards hold at most the pristine
  // inputs and one copy, the expected outputs and one call's outputs at once; parameters are
  // watched through snapshots (checksums when large), the fp64 truth is taken on cut inputs.
  const ToleranceConfig& tol = eval.tolerance;
  // Where the guard run's time goes (the phase record's parts: what a warm evaluation costs).
  auto mark = std::chrono::steady_clock::now();
  split_.clear();
  const auto lap = [&](const char* what) {
    const auto now = std::chrono::steady_clock::now();
    split_.emplace_back(what, std::chrono::duration<double>(now - mark).count());
    mark = now;
  };
  const Values pristine = problem.make_inputs("cuda", eval.seed + opts_.seed_offset);
  // State the reference's own forward changes (BatchNorm's running statistics in training
  // mode) may change in the candidate too; it is left out of the write check below.
  const Values reference_state = problem.state_values(reference_model);
  std::vector<at::Tensor> expected;
  std::set<std::string> reference_writes;
  bool poison = opts_.on(guard::kLeftoverMemory);
  {
    const auto reference_before = snapshot_all(named(reference_state, "parameter"));
    std::vector<at::Tensor> produced = call_reference(reference, clone_values(pristine));
    expected = clone_tensors(produced);
    // The reference's own output memory is freed next; it must not hold the answer then.
    // (Not an output that is the model's own state: a problem may return a parameter's view.)
    if (poison) {
      std::vector<at::Tensor> released;
      for (const auto& t : produced) {
        bool state = false;
        for (const auto& v : reference_state) state = state || (v.isTensor() && storages_overlap(t, v.toTensor()));
        if (!state) released.push_back(t);
      }
      poison_tensors(released);
    }
    const auto reference_after = named(reference_state, "parameter");
    for (const auto& b : reference_before)
      for (const auto& n : reference_after)
        if (n.name == b.name && b.snapshot.changed(n.tensor) != 0) reference_writes.insert(n.name);
  }
  auto poison_free = [&] {
    if (!poison) return;
    try {
      poison_free_memory();
    } catch (const cuda::ContextLost&) {
      throw;
    } catch (const std::exception& e) {
      poison = false;
      add(GuardFinding{guard::kLeftoverMemory, kGuardFlag, std::string("unavailable: ") + e.what()});
    }
  };

  // The parameters as forward sees them, for aliasing and for writes. A native candidate's are
  // the reference's in state_dict order, so the reference's own writes can be left out by
  // position; a ModelNew's need not line up, so there any reference write skips the check.
  const Values params = format_ == "kernelbench" && model_ ? problem.state_values(model_.get()) : params_;
  std::vector<NamedSnapshot> params_before;
  if (format_ == "cuda" || reference_writes.empty())
    for (auto& p : snapshot_all(named(params, "parameter")))
      if (!reference_writes.contains(p.name)) params_before.push_back(std::move(p));

  // Call 1: traced, observed when forward returns.
  poison_free();
  std::optional<GuardFinding> run1;
  {
    const Values in1 = clone_values(pristine);
    const bool trace = opts_.on(guard::kNoKernel) || opts_.on(guard::kLibraryShare) || opts_.on(guard::kSideStream);
    std::vector<int64_t> expected_bytes;
    for (const auto& t : expected)
      if (t.defined()) expected_bytes.push_back(static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size()));
    const TracedCall call = traced_call(candidate, in1, trace, expected_bytes);
    if (call.kernels) {
      const auto attribution = own_kernels(*call.kernels);
      add(check_library_share(*call.kernels, attribution, opts_));
      if (call.marker_start_ns)
        add(check_late_kernels(*call.kernels, {*call.marker_start_ns, true}, opts_.side_stream_marker_margin_us));
      else
        add(check_late_kernels(*call.kernels, {call.stream_done_ns, false}, opts_.side_stream_margin_us));
      if (!call.timeline.empty()) std::fprintf(stderr, "kagent guards: %s\n", call.timeline.c_str());
    } else if (trace) {
      add(kernel_guards_unavailable(call.trace_error, opts_));
    }
    run1 = judge_run(call.outputs, expected, tol, poison, "a traced call on fresh inputs", opts_);
    add(check_outputs_at_return(call.at_return, expected, !run1, tol));
    std::vector<NamedTensor> others = named(in1, "input");
    for (auto& p : named(params, "parameter")) others.push_back(std::move(p));
    add(check_output_aliasing(call.outputs, others));
    add(check_unmodified(named(pristine, "input"), named(in1, "input")));
    add(check_unwritten(params_before, named(params, "parameter")));
    add(run1);
  }

  // Call 2: the same inputs again after poisoning again. A candidate that computes only when
  // it sees new inputs and otherwise returns an unwritten buffer shows it here.
  if (poison) {
    poison_free();
    const auto out2 = call_candidate(candidate, clone_values(pristine));
    add(judge_run(out2, expected, tol, poison, "a second call with the same inputs", opts_));
  }
  // Call 3 (when asked, and call 1 was right): the inputs still being written on the caller's
  // stream when forward is called.
  if (!run1 && opts_.unjoined_stream_check && opts_.on(guard::kUnjoinedStream))
    add(check_unjoined_stream(candidate, pristine, expected, tol));
  expected.clear();
  lap("calls");
  next_step();

  // The fp64 truth, on inputs of its own (cut to a bounded size, mixed signs).
  if (!run1 && opts_.on(guard::kPrecisionLowered)) {
    std::string note;
    add(check_precision(py_, problem, reference_model, candidate, reference, eval.seed + opts_.seed_offset + 3, opts_,
                        tol, note));
    std::fprintf(stderr, "kagent guards: precision_lowered measured on %s\n", note.c_str());
  }
  lap("precision");
  next_step();

  if (opts_.on(guard::kShapeGeneralization))
    add(check_extra_shapes(py_, problem, reference_model, candidate, reference, eval.seed + opts_.seed_offset + 2, tol));
  lap("shapes");
  next_step();
  add(watch_->new_threads());
  add(watch_->tampering());
  lap("tampering");
}

void GuardPass::after_candidate_timing(ProblemSession& problem, Runner& candidate, Runner& reference,
                                       Values& timing_inputs, const EvalOptions& eval, EvalResult& r) {
  if (!opts_.enabled || !open(r)) return;
  try {
    if (opts_.on(guard::kCachedResults))
      add(check_fresh_values(problem, candidate, reference, timing_inputs, eval.seed + opts_.seed_offset + 1,
                             eval.tolerance));
    if (library_share_needs_recheck(own_share_, opts_)) recheck_library_share(candidate, timing_inputs, r);
    add(watch_->new_threads());
    add(watch_->tampering());
  } catch (...) {
    conclude(r);
    throw;
  }
  conclude(r);
}

void GuardPass::recheck_library_share(Runner& candidate, const Values& inputs, EvalResult& r) {
  // Three calls' kernels together: near the bound, one call's noise would decide.
  constexpr int kCalls = 3;
  std::vector<profiler::KernelRecord> kernels;
  for (int i = 0; i < kCalls; ++i) {
    TracedCall call = traced_call(candidate, clone_values(inputs), true);
    if (!call.kernels) return;  // CUPTI could not trace: the first measurement stands
    kernels.insert(kernels.end(), call.kernels->begin(), call.kernels->end());
  }
  const double before = *own_share_;
  const auto attribution = attribution_of(kernels);
  own_share_ = own_kernel_share(kernels, attribution);
  std::erase_if(r.guards, [](const GuardFinding& f) { return f.name == guard::kLibraryShare; });
  std::optional<GuardFinding> finding = check_library_share(kernels, attribution, opts_);
  if (finding)
    finding->message += fmt::format(" (over {} calls with the GPU alone; {:.0f}% in one call beside other workers' kernels)",
                                    kCalls, before * 100);
  std::fprintf(stderr, "kagent guards: library_share traced again with the GPU alone: own share %.2f (%.2f beside siblings)\n",
               own_share_.value_or(0), before);
  add(std::move(finding));
}

void GuardPass::after_baselines(EvalResult& r) {
  if (!opts_.enabled || !open(r) || !r.timing) return;
  add(check_speedup(*r.timing, opts_.speedup_flag));
  add(check_host_work(*r.timing));
  conclude(r);
}

}  // namespace kagent::worker
