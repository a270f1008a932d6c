#include "worker/service/evaluation.h"

#include <chrono>

#include <optional>

#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include "result/policy.h"
#include "timer/cold_measurement.h"
#include "worker/service/baselines.h"
#include "worker/service/calls.h"
#include "worker/service/correctness.h"
#include "worker/service/cut_text.h"
#include "worker/service/host_work_release.h"
#include "worker/service/phase_runner.h"
#include "worker/service/reference_check.h"
#include "worker/service/worker_state.h"

namespace kagent::worker {

Evaluation::Evaluation(WorkerContext ctx, ProblemSession& problem, const protocol::EvaluateRequest& request)
    : ctx_(ctx), problem_(problem), request_(request), options_(request.options) {
  result_.format = request.candidate.format;
  result_.device = ctx.device;
}

EvalResult Evaluation::operator()() {
  const auto start = std::chrono::steady_clock::now();
  at::NoGradGuard no_grad;
  PhaseRunner phases(result_, ctx_.lock, ctx_.announce);
  const auto phase = [&](const char* name, bool (Evaluation::*body)()) {
    // Under the request's shared hold (load, correctness, the guards before timing), a sibling's
    // timing that waits goes first, between two phases: it waits for one phase of ours, not for
    // the whole shared part (issue 46's drains). Before the phase starts: the wait is not its time.
    if (ctx_.lock) ctx_.lock->yield_to_exclusive();  // only where it holds it shared
    return phases.run(name, [&] {
      // Only under the request's shared hold (load, correctness, the guards before timing).
      std::optional<HostWorkRelease> host_work;
      const auto open_host_work = [&] {
        if (ctx_.idle_release.count() > 0 && ctx_.lock && ctx_.lock->mode() == LockMode::Shared)
          host_work.emplace(*ctx_.lock, ctx_.idle_release, name);
        host_work_released_ = host_work && host_work->active();
      };
      open_host_work();
      // Between two steps of the phase too (correctness's trials, the guard run's checks): a
      // waiting timing then waits for one step, not the phase. The idle release's watcher stops
      // around the yield (it takes and lets go of the same lock from its own thread); stopping
      // it takes the lock back shared where it had let go.
      between_steps_ = [&] {
        // Probed first (yield_to_exclusive probes again): no waiter, no watcher torn down.
        if (!ctx_.lock || !ctx_.lock->exclusive_waiting()) return;
        host_work.reset();
        ctx_.lock->yield_to_exclusive();
        open_host_work();
      };
      const struct Clear {
        std::function<void()>& f;
        ~Clear() { f = nullptr; }
      } clear{between_steps_};
      return blaming_broken_reference([&] { return (this->*body)(); });
    });
  };
  const auto guard_run = [&] {
    const bool go_on = phase("guards_before_timing", &Evaluation::guards_before_timing);
    if (guards_ && !result_.phases.empty()) result_.phases.back().parts = guards_->split();
    return go_on;
  };
  const bool loaded = phase("load", &Evaluation::load);
  phases.candidate_started();  // its code ran while it loaded: a CUDA context lost from here on is its doing
  const bool right = loaded && phase("correctness", &Evaluation::correctness);
  // A wrong output still gets the code's own findings (guard_pass.h: code_checks), in the phase
  // the guards have before timing, which a wrong answer never reaches.
  if (loaded && !right && result_.status == Status::Wrong) phase("guards_before_timing", &Evaluation::code_checks);
  if (right && guard_run()) {
    // From the timing to the end the GPU is this worker's alone: one turn under the lock, not
    // one per timed phase with a sibling's work let in between (and a wait for it each time).
    // Not put back to shared after it: the request's last steps (the verdict, dropping the
    // candidate, the state check: milliseconds) keep it, and the request's own hold lets go at
    // its end. Going back to shared queued at the turnstile behind every sibling timing that
    // waited there, about a timing each, for those milliseconds.
    if ((options_.measure || options_.profile) && ctx_.lock) ctx_.lock->set(LockMode::Exclusive);
    if (options_.measure && phase("timing", &Evaluation::timing) &&
        phase("guards_after_timing", &Evaluation::guards_after_timing) &&
        (options_.eager_baseline || options_.compiled_baseline))
      phase("baselines", &Evaluation::baselines);
    if (options_.profile && GuardPass::open(result_)) phase("profile", &Evaluation::profile);
  }
  context_lost_ = context_lost_ || phases.context_lost();
  // The guards only recorded findings: the verdict under each policy is made here, once.
  apply_policies(result_, options_.policy);
  result_.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(result_);
}

bool Evaluation::blaming_broken_reference(const std::function<bool()>& body) {
  try {
    return body();
  } catch (const EvaluatorError& e) {
    if (!candidate_) throw;  // nothing of the candidate's has run: kagent's or the problem's
    if (auto message = reference_broken_by_candidate(problem_, ctx_.state, e, options_.seed, "cuda"))
      throw CandidateError(*message, reason::kReferenceBrokenByCandidate);
    throw;
  }
}

bool Evaluation::load() {
  try {
    reference_model_ = problem_.make_model("cuda", options_.seed);
  } catch (const PythonError& e) {  // the problem's own failure: neither side's
    result_.status = Status::ProblemError;
    result_.reason = problem_error_reason(e.kind);
    result_.message = e.message;
    return false;
  }
  // Its plain tensor state as built, before any call (module_state.h): what every compared call
  // starts from if the trials find forward changing it.
  ModuleState reference_state(ctx_.py, reference_model_);
  const bool plain_state = !reference_state.empty();
  reference_ = std::make_unique<PythonRunner>(reference_model_, std::move(reference_state));
  guards_.emplace(ctx_.py, options_.guards);  // before the candidate loads: it snapshots what a candidate could patch
  const CandidateRef& cand = request_.candidate;
  try {
    if (cand.format == "kernelbench") {
      PyRef path = check(PyUnicode_FromString(cand.path.c_str()));
      PyRef device = check(PyUnicode_FromString("cuda"));
      PyRef seed = check(PyLong_FromLongLong(options_.seed));
      nlohmann::json ext = {{"prebuilt", cand.extensions}, {"reasons", cand.extension_reasons}};
      // What kagent did not build, torch builds here for up to a minute of CPU: the request's
      // shared hold of the GPU's timing lock is let go meanwhile, or no sibling could time. The
      // idle release does it where it runs (and says its waits on the pipe); else the Python side
      // lets go around torch's build. (The mode is not read here: with the idle release, another
      // thread may be letting it go.)
      if (ctx_.lock && !ctx_.lock->broken() && !host_work_released_) {
        ext["gpu_lock_fd"] = ctx_.lock->fd();
        if (ctx_.lock->turnstile_fd() >= 0) {
          ext["gpu_turnstile_fd"] = ctx_.lock->turnstile_fd();
          ext["gpu_turnstile_patience_s"] =
              std::chrono::duration<double>(ctx_.lock->turnstile_patience()).count();
        }
      }
      PyRef extensions = check(PyUnicode_FromString(ext.dump().c_str()));
      PyRef loaded =
          ctx_.py.call(PyFn::LoadKernelbenchCandidate, {path, problem_.problem(), device, seed, extensions});
      PyRef model = PyRef::borrow(PyTuple_GetItem(loaded.get(), 0));
      result_.extensions = to_json(PyTuple_GetItem(loaded.get(), 1)).get<std::vector<ExtensionBuild>>();
      guards_->kernelbench_loaded(model, cand.path, !result_.extensions.empty());
      // The ModelNew's state as built, where the reference has some to watch at all.
      std::optional<ModuleState> state;
      if (plain_state) state.emplace(ctx_.py, model);
      candidate_ = std::make_unique<PythonRunner>(model, std::move(state));
    } else {
      // Parameters are cloned: a candidate writing its weights must not change the reference's.
      params_ = clone_values(problem_.state_values(reference_model_.get()));
      guards_->native_loaded(params_, cand.kernels);
      const LibraryInstance library = ctx_.libraries.fresh(cand.artifact, cand.op_name);
      candidate_ = std::make_unique<NativeRunner>(library.path, library.op_name, params_);
    }
  } catch (const PythonError& e) {
    const bool option = e.kind == reason::kLoadInlineOption;  // torch would refuse the call: no build
    result_.status = e.kind == "compile_error" || option ? Status::CompileError
                     : e.kind == "invalid"               ? Status::Invalid
                                                         : Status::RuntimeError;
    if (option) result_.reason = reason::kLoadInlineOption;
    result_.message = e.kind == "compile_error" ? "load_inline failed to build the extension" : e.message;
    result_.runtime_error = cut_text(e.message + (e.traceback.empty() ? "" : "\n" + e.traceback));
    if (result_.status == Status::CompileError) {
      CompileInfo ci;
      ci.ok = false;
      ci.errors = cut_text(e.message, 3000);
      ci.log = cut_text(e.message, 20000);
      result_.compile = ci;
    }
    return false;
  } catch (const CandidateLoadError& e) {
    result_.status = Status::Invalid;
    result_.message = e.what();
    return false;
  }
  return true;
}

bool Evaluation::correctness() {
  // The footprint counts the reference's parameters and buffers whatever the answer's format (a
  // KernelBench answer holds its own copy, which the candidate allocates).
  const int64_t params_bytes = tensor_bytes(problem_.state_values(reference_model_.get()));
  if (!check_correctness(problem_, *candidate_, *reference_, params_bytes, options_, result_, "cuda", between_steps_))
    return false;
  result_.status = Status::Correct;
  result_.message = fmt::format("correct in {} trials (max abs error {:.3g}, max rel error {:.3g})", options_.trials,
                                result_.correctness->max_abs_error, result_.correctness->max_rel_error);
  return true;
}

bool Evaluation::guards_before_timing() {
  guards_->before_timing(problem_, *candidate_, *reference_, reference_model_.get(), options_, result_, between_steps_);
  return GuardPass::open(result_);
}

bool Evaluation::code_checks() {
  guards_->code_checks(problem_, *candidate_, options_, result_);
  return false;
}

bool Evaluation::timing() {
  timing_inputs_ = problem_.make_inputs("cuda", options_.seed);
  Timing t;
  // Unsynchronised, as eager and torch.compile are timed: the timer waits for the device
  // itself, and a synchronisation inside the timed region would count host latency against
  // the candidate alone.
  {
    const GcPaused gc;
    t.candidate = measure_cold([&] { call_candidate_unsynchronized(*candidate_, timing_inputs_); }, options_.timing);
  }
  if (options_.speedup_rounds >= 2 && options_.eager_baseline && t.candidate->median_ms < kSpeedupRoundsBelowMs)
    t.rounds = speedup_rounds();  // none where a round's median was 0 (nothing to divide)
  result_.timing = t;
  return true;
}

std::optional<SpeedupRounds> Evaluation::speedup_rounds() {
  // Each round on inputs of its own, kept until the last: new allocations elsewhere in memory,
  // where a kernel's time may depend on where its data lie (small inputs only: at most 1 GiB in
  // all, or the timing's inputs every round). The order alternates, so that neither side is
  // always the one timed first after the other's.
  const int n = options_.speedup_rounds;
  const bool own_inputs = tensor_bytes(timing_inputs_) * n <= (int64_t{1} << 30);
  std::vector<Values> kept;
  if (own_inputs) kept.reserve(n);
  PythonRunner eager(reference_model_);
  const MeasureConfig brief = brief_measure(options_.timing);
  std::vector<double> ratios;
  const GcPaused gc;
  for (int i = 0; i < n; ++i) {
    if (own_inputs) kept.push_back(problem_.make_inputs("cuda", options_.seed));
    const Values& in = own_inputs ? kept.back() : timing_inputs_;
    const auto time_eager = [&] { return measure_cold([&] { eager.run(in); }, brief).median_ms; };
    const auto time_candidate = [&] {
      return measure_cold([&] { call_candidate_unsynchronized(*candidate_, in); }, brief).median_ms;
    };
    double eager_ms = 0, candidate_ms = 0;
    if (i % 2 == 0) {
      eager_ms = time_eager();
      candidate_ms = time_candidate();
    } else {
      candidate_ms = time_candidate();
      eager_ms = time_eager();
    }
    if (!(eager_ms > 0 && candidate_ms > 0)) return std::nullopt;
    ratios.push_back(eager_ms / candidate_ms);
  }
  return summarize_rounds(std::move(ratios));
}

bool Evaluation::guards_after_timing() {
  guards_->after_candidate_timing(problem_, *candidate_, *reference_, timing_inputs_, options_, result_);
  timing_inputs_.clear();
  return GuardPass::open(result_);
}

bool Evaluation::baselines() {
  const std::set<pid_t> before = own_threads();
  const Baselines b = get_baselines(ctx_.py, problem_, options_, ctx_.device, reference_model_.get(), ctx_.lock,
                                    request_.trusted_eager_ms);
  for (pid_t t : own_threads())
    if (!before.contains(t)) kagent_threads_.insert(t);
  Timing& t = *result_.timing;
  t.eager = b.eager;
  t.compiled = b.compiled;
  t.baseline_cache_hit = b.cache_hit;
  t.baseline_recheck = b.recheck;
  if (b.eager) t.speedup_eager = b.eager->median_ms / t.candidate->median_ms;
  if (b.compiled) t.speedup_compiled = b.compiled->median_ms / t.candidate->median_ms;
  guards_->after_baselines(result_);
  return GuardPass::open(result_);
}

bool Evaluation::profile() {
  // A lost context here keeps the verdict (the profile says what failed); the worker is replaced.
  result_.profile = ctx_.profiler.run(*candidate_, problem_, reference_model_.get(), request_.candidate, ctx_.device,
                                      options_.seed, context_lost_);
  return true;
}

}  // namespace kagent::worker
