#include "worker/worker_service.h"

#include <chrono>
#include <filesystem>

#include <ATen/core/grad_mode.h>
#include <fmt/format.h>

#include "worker/baselines.h"
#include "worker/cut_text.h"
#include "worker/evaluator.h"
#include "worker/guard_pass.h"

namespace kagent::worker {

namespace {

nlohmann::json error_reply(const std::string& kind, const std::string& message) {
  return {{"ok", false}, {"error", {{"kind", kind}, {"message", message}}}};
}

// Problem-loading failures carry a kind from the Python side; map them onto a verdict.
void set_problem_error(EvalResult& r, const PythonError& e) {
  r.status = Status::ProblemError;
  r.reason = problem_error_reason(e.kind);
  r.message = e.message;
}

}  // namespace

WorkerService::WorkerService(PythonRuntime& py) : py_(py) { device_ = to_json(py_.call("device_info", {}).get()); }

ProblemSession& WorkerService::problem(const std::string& path) {
  auto it = problems_.find(path);
  if (it != problems_.end()) return *it->second;
  auto session = std::make_unique<ProblemSession>(py_, path);
  return *problems_.emplace(path, std::move(session)).first->second;
}

nlohmann::json WorkerService::handle(const nlohmann::json& request) {
  const std::string op = request.value("op", "");
  try {
    if (op == "hello") return {{"ok", true}, {"result", {{"device", device_}, {"pid", ::getpid()}}}};
    if (op == "load_problem") {
      const std::string path = request.at("path").get<std::string>();
      problems_.erase(path);  // a file may have changed since; loading is cheap (meta tensors)
      return {{"ok", true}, {"result", problem(path).spec_json()}};
    }
    if (op == "evaluate") return evaluate(request);
    if (op == "baselines") {
      // The reference's eager and torch.compile times before any candidate is correct (for the
      // task prompt); measured like an evaluation's, and the orchestrator caches them.
      if (!device_.value("available", false)) return error_reply("no_gpu", "no CUDA device is visible to the worker");
      ProblemSession& session = problem(request.at("problem").get<std::string>());
      EvalOptions opts = eval_options_from_json(request.value("options", nlohmann::json::object()));
      at::NoGradGuard no_grad;
      Baselines b = get_baselines(py_, session, opts, device_);
      return {{"ok", true},
              {"result",
               {{"eager", b.eager ? nlohmann::json(*b.eager) : nlohmann::json(nullptr)},
                {"compiled", b.compiled ? nlohmann::json(*b.compiled) : nlohmann::json(nullptr)},
                {"compiled_error", b.compiled_error},
                {"cache_hit", b.cache_hit}}}};
    }
    if (op == "prepare") {
      // Sent while nvcc compiles: load the problem and run the reference once, so the
      // evaluation that follows starts warm. Failures are reported by that evaluation.
      ProblemSession& session = problem(request.at("path").get<std::string>());
      if (device_.value("available", false)) {
        at::NoGradGuard no_grad;
        py_.call("warm_up", {session.problem()});
        profile_.warm_up();  // once per worker; its setup would otherwise land in the first evaluation
      }
      return {{"ok", true}, {"result", nullptr}};
    }
    return error_reply("bad_request", "unknown op '" + op + "'");
  } catch (const PythonError& e) {
    return error_reply(e.kind, e.message);
  } catch (const std::exception& e) {
    return error_reply("internal_error", e.what());
  }
}

nlohmann::json WorkerService::evaluate(const nlohmann::json& request) {
  auto start = std::chrono::steady_clock::now();
  EvalOptions opts = eval_options_from_json(request.value("options", nlohmann::json::object()));
  const auto& cand = request.at("candidate");
  EvalResult r;
  r.format = cand.value("format", "cuda");
  r.device = device_;
  auto finish = [&] {
    r.eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json reply = {{"ok", true}, {"result", r}};
    if (fatal_) reply["fatal"] = true;
    return reply;
  };
  if (!device_.value("available", false)) {
    r.status = Status::InternalError;
    r.reason = reason::kNoGpu;
    r.message = "no CUDA device is visible to the worker";
    return finish();
  }

  ProblemSession* session = nullptr;
  try {
    session = &problem(request.at("problem").get<std::string>());
  } catch (const PythonError& e) {
    set_problem_error(r, e);
    return finish();
  }

  at::NoGradGuard no_grad;
  std::unique_ptr<Runner> candidate;
  PyRef reference_model;
  try {
    reference_model = session->make_model("cuda", opts.seed);
  } catch (const PythonError& e) {
    set_problem_error(r, e);
    return finish();
  }
  PythonRunner reference(reference_model);
  GuardPass guards(py_, opts.guards);  // before the candidate loads: it snapshots what a candidate could patch
  try {
    if (r.format == "kernelbench") {
      PyRef path = check(PyUnicode_FromString(cand.at("path").get<std::string>().c_str()));
      PyRef device = check(PyUnicode_FromString("cuda"));
      PyRef seed = check(PyLong_FromLongLong(opts.seed));
      PyRef model = py_.call("load_kernelbench_candidate", {path, session->problem(), device, seed});
      guards.kernelbench_loaded(model, cand.at("path").get<std::string>());
      candidate = std::make_unique<PythonRunner>(model);
    } else {
      // Parameters are cloned: a candidate writing its weights must not change the reference's.
      Values params = clone_values(session->state_values(reference_model.get()));
      guards.native_loaded(params, cand.value("kernels", std::vector<std::string>{}));
      candidate = std::make_unique<NativeRunner>(cand.at("artifact").get<std::string>(),
                                                 cand.at("op_name").get<std::string>(), std::move(params));
    }
  } catch (const PythonError& e) {
    r.status = e.kind == "compile_error" ? Status::CompileError
               : e.kind == "invalid"     ? Status::Invalid
                                         : Status::RuntimeError;
    r.message = e.kind == "compile_error" ? "load_inline failed to build the extension" : e.message;
    r.runtime_error = cut_text(e.message + (e.traceback.empty() ? "" : "\n" + e.traceback));
    if (r.status == Status::CompileError) {
      CompileInfo ci;
      ci.ok = false;
      ci.errors = cut_text(e.message, 3000);
      ci.log = cut_text(e.message, 20000);
      r.compile = ci;
    }
    return finish();
  } catch (const CandidateLoadError& e) {
    r.status = Status::Invalid;
    r.message = e.what();
    return finish();
  }

  try {
    check_correctness(*session, *candidate, reference, opts, r);
    if (!r.correctness->first_failure) {
      r.status = Status::Correct;
      r.message = fmt::format("correct in {} trials (max abs error {:.3g}, max rel error {:.3g})", opts.trials,
                              r.correctness->max_abs_error, r.correctness->max_rel_error);
      guards.before_timing(*session, *candidate, reference, reference_model.get(), opts, r);
      if (opts.measure && r.status == Status::Correct) {
        Timing timing;
        Values inputs = session->make_inputs("cuda", opts.seed);
        timing.candidate = measure_cold([&] { run_checked(*candidate, inputs); }, opts.timing);
        guards.after_candidate_timing(*session, *candidate, reference, inputs, opts, r);
        if (opts.eager_baseline || opts.compiled_baseline) {
          Baselines b = get_baselines(py_, *session, opts, device_);
          timing.eager = b.eager;
          timing.compiled = b.compiled;
          timing.baseline_cache_hit = b.cache_hit;
          if (b.eager) timing.speedup_eager = b.eager->median_ms / timing.candidate->median_ms;
          if (b.compiled) timing.speedup_compiled = b.compiled->median_ms / timing.candidate->median_ms;
        }
        r.timing = timing;
        guards.after_baselines(r);
      }
      if (opts.profile && r.status == Status::Correct)
        r.profile = profile_.run(*candidate, *session, reference_model.get(), cand, device_, opts.seed, fatal_);
    }
  } catch (const CudaFatalError& e) {
    fatal_ = true;
    r.status = Status::RuntimeError;
    r.reason = reason::kCudaFatal;
    r.message = "CUDA error in the candidate; the worker is replaced";
    r.runtime_error = cut_text(e.what());
  } catch (const PythonError& e) {
    r.status = Status::RuntimeError;
    r.message = e.message.substr(0, 300);
    r.runtime_error = cut_text(e.message + "\n" + e.traceback);
  } catch (const std::exception& e) {
    r.status = Status::RuntimeError;
    std::string what = e.what();
    r.message = what.substr(0, what.find('\n')).substr(0, 300);
    r.runtime_error = cut_text(what);
  }
  return finish();
}

}  // namespace kagent::worker
