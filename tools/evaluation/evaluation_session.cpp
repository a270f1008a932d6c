#include "evaluation/evaluation_session.h"

#include <chrono>
#include <tuple>

#include "common/elapsed.h"
#include "common/files.h"
#include "evaluation/answer_extensions.h"
#include "problem/spec_cache.h"
#include "worker/client/request_paths.h"
#include "worker/protocol/baseline_cache.h"

namespace kagent {

EvaluationSession::EvaluationSession(EvaluationSettings settings)
    : pool_(std::make_shared<EvaluationPool>(std::move(settings))), own_pool_(true) {}

EvaluationSession::EvaluationSession(std::shared_ptr<EvaluationPool> pool) : pool_(std::move(pool)) {}

EvaluationSession::~EvaluationSession() = default;

namespace {
// A KernelBench answer's load_inline extensions for `arch`, in one of the pool's compile slots;
// fills cand's extensions and reasons.
AnswerExtensions build_extensions(EvaluationPool& pool, const std::string& path, const std::string& display_name,
                                  const std::string& arch, CandidateRef& cand) {
  EvaluationPool::CompileSlot slot(pool);
  return build_answer_extensions(path, pool.compile_options(display_name, arch), cand);
}
}  // namespace

std::optional<EvaluationSession::Prebuilt> EvaluationSession::start_build(const std::shared_ptr<EvaluationPool>& pool,
                                                                         const std::string& path, const std::string& format,
                                                                         const std::string& display_name) {
  if (format != "kernelbench") return std::nullopt;
  Prebuilt pre{path, pool->current_arch(), {}};
  pre.result = std::async(std::launch::async, [pool, path, display_name, arch = pre.arch] {
    CandidateRef cand{"kernelbench", {}, {}, path, {}};
    AnswerExtensions ext = build_extensions(*pool, path, display_name, arch, cand);
    return std::make_pair(std::move(ext), std::move(cand));
  });
  return pre;
}

std::optional<OpenError> EvaluationSession::open(const std::string& problem) {
  problem_ = problem;
  auto problem_error = [&](const WorkerError& err) {
    OpenError e;
    const bool start = err.kind == "worker_start" || err.kind == reason::kSandboxUnmet;
    e.result.status = start ? Status::InternalError : Status::ProblemError;
    e.result.reason = start ? err.kind : problem_error_reason(err.kind);
    e.result.message = err.message;
    e.line = err.kind == reason::kSandboxUnmet      ? "refused: " + err.message
             : e.result.status == Status::InternalError ? "cannot start the worker: " + err.message
                                                        : "cannot load problem " + problem + ": " + err.message;
    return e;
  };
  // A pool of our own starts now and warms this problem up in the background: seconds that
  // nvcc can use. A shared pool's workers serve many problems; each evaluation loads its own.
  const std::string warm = own_pool_ ? problem_ : std::string();
  const std::string& cache = pool_->cache_dir();
  if (auto cached = load_cached_spec(cache, problem)) {
    spec_ = *cached;
    pool_->expect_footprint(problem_, footprint_bytes(spec_));  // before the warm-up asks for GPU memory
    pool_->start(warm);
    return std::nullopt;
  }
  std::variant<ProblemSpec, WorkerError> spec_or;
  if (!pool_->starting()) {
    // The first worker starts with this request; the others start after it.
    spec_or = pool_->first_worker_before_start().load_problem(problem);
    if (const auto* spec = std::get_if<ProblemSpec>(&spec_or)) pool_->expect_footprint(problem_, footprint_bytes(*spec));
    pool_->start(warm);
  } else {
    const auto workers = pool_->started();
    if (const auto* err = std::get_if<WorkerError>(&workers)) return problem_error(*err);
    EvaluationPool::Lease lease(*pool_, problem_);
    const auto start = std::chrono::steady_clock::now();
    spec_or = lease.client().load_problem(problem);
    lease.count_load(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (auto* err = std::get_if<WorkerError>(&spec_or)) return problem_error(*err);
  spec_ = std::get<ProblemSpec>(spec_or);
  pool_->expect_footprint(problem_, footprint_bytes(spec_));
  store_cached_spec(cache, spec_);
  return std::nullopt;
}

std::variant<DeviceInfo, WorkerError> EvaluationSession::started() {
  if (problem_.empty()) return WorkerError{"worker_start", "the problem was not opened"};
  return pool_->started();
}

DeviceInfo EvaluationSession::device() {
  auto d = started();
  return std::holds_alternative<DeviceInfo>(d) ? std::get<DeviceInfo>(d) : DeviceInfo{};
}

std::string EvaluationSession::baseline_key(const DeviceInfo& device) const {
  // The spec's hash of the file: the one the worker keys the baseline cache with.
  return spec_.sha256.empty() ? std::string()
                              : baseline_cache_file(spec_.sha256, device, pool_->settings().options).string();
}

std::optional<Timing> EvaluationSession::baselines() {
  const DeviceInfo device = this->device();
  if (!device.available) return std::nullopt;
  const auto measure = [&] {
    EvaluationPool::Lease lease(*pool_, problem_);
    const auto start = std::chrono::steady_clock::now();
    auto timing = lease.client().baselines(problem_, pool_->settings().options);
    lease.count_baselines(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return timing;
  };
  const std::string key = baseline_key(device);
  return key.empty() ? measure() : pool_->baseline_memo().get(key, measure);
}

namespace {

// The verdict of a compile that failed: `status` with `message`, or, when a limit killed the
// compiler, that status with the limit as its reason ("<what> ran past its compile_timeout limit").
void compile_failed(EvalResult& r, const CompileInfo& ci, Status status, const std::string& message,
                    const std::string& what) {
  r.compile = ci;
  r.status = status;
  r.reason = ci.limit.empty() ? ci.reason : ci.limit;
  r.message = ci.limit.empty() ? message : what + " ran past its " + ci.limit + " limit";
}

}  // namespace

EvalResult EvaluationSession::evaluate_file(const std::string& path, const std::string& format,
                                            const std::string& display_name, const std::optional<EvalOptions>& options,
                                            std::optional<Prebuilt> prebuilt) {
  EvalResult r;
  r.format = format;
  std::optional<CompileInfo> ci;
  std::optional<AnswerExtensions> ext;  // kernelbench: its load_inline extensions, built by kagent
  CandidateRef cand{format, {}, {}, path, {}};
  std::string source, arch;
  std::optional<double> compile_wait;  // seconds the prebuilt compile kept this evaluation waiting
  // The trials' CPU draws start now, beside the compile, in the pool's draw process (draws of
  // other seeds than the pool's would be of no use to the worker).
  const EvalOptions& pool_options = pool_->settings().options;
  const bool pool_seeds = !options || (options->seed == pool_options.seed && options->trials == pool_options.trials);
  DrawAhead::Ticket draws(pool_seeds ? pool_->draw_ahead() : nullptr, absolute_path(problem_));
  // Compile first (native: on the pool's compile threads; load_inline extensions: on this
  // thread), while the workers start.
  if (format == "cuda") {
    try {
      source = read_file(path);
      arch = pool_->current_arch();
      ci = pool_->compile(spec_, source, display_name, arch);
    } catch (const std::invalid_argument& e) {  // a problem a native candidate cannot express
      r.status = Status::Invalid;
      r.message = e.what();
      return r;
    }
  } else if (format == "kernelbench") {
    if (prebuilt && prebuilt->path == path) {  // another file's build is not this answer's
      const auto waited_from = std::chrono::steady_clock::now();
      std::tie(ext, cand) = prebuilt->result.get();  // the same CandidateRef, its extensions filled
      compile_wait = seconds_since(waited_from);
      arch = prebuilt->arch;
    } else {
      arch = pool_->current_arch();
      ext = build_extensions(*pool_, path, display_name, arch, cand);
    }
  }
  const auto workers = started();
  if (const auto* err = std::get_if<WorkerError>(&workers)) {
    r.status = Status::InternalError;
    r.reason = err->kind == reason::kSandboxUnmet ? err->kind : "worker_start";
    r.message = err->message;
    return r;
  }
  const DeviceInfo& device = std::get<DeviceInfo>(workers);
  r.device = device;
  // The workers' GPU differs from the guess the compile used: build for the one that is there.
  if (pool_->arch_for(device) != arch) {
    if (ci && ci->ok) ci = pool_->compile(spec_, source, display_name, pool_->arch_for(device));
    if (ext) {
      cand = CandidateRef{format, {}, {}, path, {}};
      ext = build_extensions(*pool_, path, display_name, pool_->arch_for(device), cand);
    }
  }
  if (ext && ext->compile && !ext->compile->ok) {  // the answer's own sources do not compile
    compile_failed(r, *ext->compile, Status::CompileError, "nvcc failed on the answer's load_inline sources",
                   "the compile of the answer's load_inline sources");
    r.phases.push_back(PhaseRecord{"compile", ext->seconds, 0, kFailureCandidate});
    return r;
  }
  if (ci) {
    if (!ci->ok) {
      compile_failed(r, *ci, ci->reason.empty() ? Status::CompileError : Status::Invalid,
                     ci->reason == reason::kMissingForward     ? "the candidate defines no forward function"
                     : ci->reason == reason::kSignatureMismatch ? "forward does not have the signature the problem needs"
                                                                : "nvcc failed",
                     "the compile");
      return r;
    }
    r.compile = *ci;
    cand.artifact = ci->artifact;
    cand.op_name = ci->op_name;
    for (const auto& k : ci->resources) cand.kernels.push_back(k.kernel);
  }
  EvalResult got;
  const std::string baselines = baseline_key(device);
  {
    EvaluationPool::Lease lease(*pool_, problem_);
    const auto start = std::chrono::steady_clock::now();
    got = lease.client().evaluate(problem_, cand, options ? *options : pool_->settings().options,
                                  display_name.empty() || display_name == path ? path : display_name + " (" + path + ")",
                                  pool_->baseline_memo().trusted_eager_ms(baselines));
    lease.count_evaluation(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // The reference's times this evaluation measured itself (nothing had measured them first),
  // for the evaluations on other workers; kept on the terms the cache is written on (a correct
  // candidate's: one that patched torch is never correct).
  if (!baselines.empty() && got.status == Status::Correct && got.timing)
    pool_->baseline_memo().note_measured(baselines, *got.timing);
  if (ci) got.compile = *ci;
  if (ext) {
    if (ext->compile) got.compile = ext->compile;
    got.phases.insert(got.phases.begin(), PhaseRecord{"compile", ext->seconds, 0, ""});
  }
  if (!got.device.available) got.device = device;
  if (own_pool_ && !startup_reported_.exchange(true)) {  // a session's first evaluation: where the seconds before it went
    got.startup = pool_->first_worker_startup();
    if (compile_wait) got.startup["compile_wait"] = *compile_wait;
  }
  return got;
}

}  // namespace kagent
