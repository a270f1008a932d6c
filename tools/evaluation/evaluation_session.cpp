#include "evaluation/evaluation_session.h"

#include <fmt/format.h>

#include "common/files.h"
#include "common/paths.h"
#include "compiler/nvcc_command.h"
#include "evaluation/answer_extensions.h"
#include "problem/spec_cache.h"

namespace kagent {

namespace fs = std::filesystem;

struct EvaluationSession::Worker {
  explicit Worker(WorkerOptions o) : client(std::move(o)) {}
  WorkerClient client;
  bool busy = false;
};

EvaluationSession::EvaluationSession(EvaluationSettings settings) : settings_(std::move(settings)) {
  cache_ = settings_.cache_dir.empty() ? cache_root() : settings_.cache_dir;
  std::vector<std::optional<int>> gpus;
  for (int g : settings_.gpus) gpus.emplace_back(g);
  if (gpus.empty()) gpus.emplace_back(std::nullopt);
  for (auto g : gpus) {
    WorkerOptions wo;
    wo.gpu = g;
    wo.request_timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.timeout_s * 1000));
    workers_.push_back(std::make_unique<Worker>(std::move(wo)));
  }
  device_file_ = fs::path(cache_) / fmt::format("device-{}.json", gpus.front().value_or(0));
  if (fs::exists(device_file_)) {
    const auto j = nlohmann::json::parse(read_file(device_file_), nullptr, false);
    if (!j.is_discarded()) guessed_device_ = j.get<DeviceInfo>();
  }
}

EvaluationSession::~EvaluationSession() {
  if (started_.valid()) started_.wait();  // the start thread uses the workers
}

std::optional<OpenError> EvaluationSession::open(const std::string& problem) {
  problem_ = problem;
  auto problem_error = [&](const WorkerError& err) {
    OpenError e;
    e.result.status = err.kind == "worker_start" ? Status::InternalError : Status::ProblemError;
    e.result.reason = err.kind == "worker_start" ? "worker_start" : problem_error_reason(err.kind);
    e.result.message = err.message;
    e.line = e.result.status == Status::InternalError ? "cannot start the worker: " + err.message
                                                      : "cannot load problem " + problem + ": " + err.message;
    return e;
  };
  // Every worker starts (imports torch, initialises CUDA) and warms the problem up in the
  // background: seconds that nvcc can use.
  auto start_all = [this](bool first_ready) {
    return std::async(std::launch::async, [this, first_ready]() -> std::optional<WorkerError> {
             for (size_t i = 0; i < workers_.size(); ++i) {
               auto hello = workers_[i]->client.hello();
               if (auto* err = std::get_if<WorkerError>(&hello)) return *err;
               if (i == 0 && !first_ready) {
                 std::lock_guard lock(mu_);
                 device_ = std::get<DeviceInfo>(hello);
                 device_known_ = true;
               }
               workers_[i]->client.prepare(problem_);
             }
             return std::nullopt;
           })
        .share();
  };
  if (auto cached = load_cached_spec(cache_, problem)) {
    spec_ = *cached;
    started_ = start_all(false);
    return std::nullopt;
  }
  auto spec_or = workers_.front()->client.load_problem(problem);
  if (auto* err = std::get_if<WorkerError>(&spec_or)) return problem_error(*err);
  spec_ = std::get<ProblemSpec>(spec_or);
  store_cached_spec(cache_, spec_);
  auto hello = workers_.front()->client.hello();  // already running: answers from memory
  if (auto* err = std::get_if<WorkerError>(&hello)) return problem_error(*err);
  device_ = std::get<DeviceInfo>(hello);
  device_known_ = true;
  started_ = start_all(true);
  return std::nullopt;
}

std::variant<DeviceInfo, WorkerError> EvaluationSession::started() {
  if (!started_.valid()) return WorkerError{"worker_start", "the problem was not opened"};
  if (auto err = started_.get()) return *err;
  std::lock_guard lock(mu_);
  try {
    write_file_atomic(device_file_, nlohmann::json(device_).dump());  // next run's nvcc target, before its worker answers
  } catch (const std::exception&) {
  }
  return device_;
}

DeviceInfo EvaluationSession::device() {
  auto d = started();
  return std::holds_alternative<DeviceInfo>(d) ? std::get<DeviceInfo>(d) : DeviceInfo{};
}

std::string EvaluationSession::arch_for(const DeviceInfo& d) const {
  if (!settings_.arch.empty()) return settings_.arch;
  if (d.available) return arch_for_compute_capability(d.cc_major, d.cc_minor);
  return CompileOptions{}.arch;
}

std::string EvaluationSession::current_arch() const {
  std::lock_guard lock(mu_);
  return arch_for(device_known_ ? device_ : guessed_device_);
}

CompileOptions EvaluationSession::compile_options(const std::string& display_name, const std::string& arch) const {
  CompileOptions co;
  co.display_name = display_name;
  co.arch = arch;
  co.use_cache = settings_.use_compile_cache;
  if (!settings_.cache_dir.empty()) co.cache_dir = (fs::path(settings_.cache_dir) / "compile").string();
  return co;
}

// Waits for a free worker and holds it until destroyed.
class EvaluationSession::Lease {
 public:
  explicit Lease(EvaluationSession& s) : s_(s) {
    std::unique_lock lock(s_.mu_);
    s_.free_.wait(lock, [&] {
      for (auto& w : s_.workers_)
        if (!w->busy) return (worker_ = w.get())->busy = true;
      return false;
    });
  }
  ~Lease() {
    {
      std::lock_guard lock(s_.mu_);
      worker_->busy = false;
    }
    s_.free_.notify_one();
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  WorkerClient& client() { return worker_->client; }

 private:
  EvaluationSession& s_;
  Worker* worker_ = nullptr;
};

std::optional<Timing> EvaluationSession::baselines() {
  if (!device().available) return std::nullopt;
  Lease lease(*this);
  return lease.client().baselines(problem_, settings_.options);
}

EvalResult EvaluationSession::evaluate_file(const std::string& path, const std::string& format,
                                            const std::string& display_name) {
  EvalResult r;
  r.format = format;
  std::optional<CompileInfo> ci;
  std::optional<AnswerExtensions> ext;  // kernelbench: its load_inline extensions, built by kagent
  CandidateRef cand{format, {}, {}, path, {}};
  std::string source, arch;
  // Compile first, on this thread, while the workers start.
  if (format == "cuda") {
    try {
      source = read_file(path);
      arch = current_arch();
      ci = compile_native(spec_, source, compile_options(display_name, arch));
    } catch (const std::invalid_argument& e) {  // a problem a native candidate cannot express
      r.status = Status::Invalid;
      r.message = e.what();
      return r;
    }
  } else if (format == "kernelbench") {
    arch = current_arch();
    ext = build_answer_extensions(path, compile_options(display_name, arch), cand);
  }
  const auto workers = started();
  if (const auto* err = std::get_if<WorkerError>(&workers)) {
    r.status = Status::InternalError;
    r.reason = "worker_start";
    r.message = err->message;
    return r;
  }
  const DeviceInfo& device = std::get<DeviceInfo>(workers);
  r.device = device;
  // The workers' GPU differs from the guess the compile used: build for the one that is there.
  if (arch_for(device) != arch) {
    if (ci && ci->ok) ci = compile_native(spec_, source, compile_options(display_name, arch_for(device)));
    if (ext) {
      cand = CandidateRef{format, {}, {}, path, {}};
      ext = build_answer_extensions(path, compile_options(display_name, arch_for(device)), cand);
    }
  }
  if (ext && ext->compile && !ext->compile->ok) {  // the answer's own sources do not compile
    r.compile = ext->compile;
    r.status = Status::CompileError;
    r.message = "nvcc failed on the answer's load_inline sources";
    if (!ext->compile->limit.empty()) {  // the compiler was killed: say which limit
      r.reason = ext->compile->limit;
      r.message = "the compile of the answer's load_inline sources ran past its " + ext->compile->limit + " limit";
    }
    r.phases.push_back(PhaseRecord{"compile", ext->seconds, 0, kFailureCandidate});
    return r;
  }
  if (ci) {
    r.compile = *ci;
    if (!ci->ok) {
      r.status = ci->reason.empty() ? Status::CompileError : Status::Invalid;
      r.reason = ci->reason;
      r.message = ci->reason == reason::kMissingForward     ? "the candidate defines no forward function"
                  : ci->reason == reason::kSignatureMismatch ? "forward does not have the signature the problem needs"
                                                             : "nvcc failed";
      if (!ci->limit.empty()) {  // the compiler was killed: say which limit, keep compile_error
        r.reason = ci->limit;
        r.message = "the compile ran past its " + ci->limit + " limit";
      }
      return r;
    }
    cand.artifact = ci->artifact;
    cand.op_name = ci->op_name;
    for (const auto& k : ci->resources) cand.kernels.push_back(k.kernel);
  }
  EvalResult got = Lease(*this).client().evaluate(problem_, cand, settings_.options);
  if (ci) got.compile = *ci;
  if (ext) {
    if (ext->compile) got.compile = ext->compile;
    got.phases.insert(got.phases.begin(), PhaseRecord{"compile", ext->seconds, 0, ""});
  }
  if (!got.device.available) got.device = device;
  return got;
}

}  // namespace kagent
