// The protocol between the orchestrator (worker/client) and a worker process (worker/service):
// one JSON line per request on the worker's fd 3, one per reply on its fd 4. Every op has a
// typed request and reply here, with their JSON conversions, and one table of op names.
//
//   request line: {"op": <name>, "id": n, "nonce": s, ...the request's fields}
//   reply line:   {"id": n, "nonce": s, "ok": true, "result": <reply>, "fatal": true?, "replace": true?}
//                 {"id": n, "nonce": s, "ok": false, "error": {"kind", "message"}}
// The nonce is random per request and echoed by the worker: candidate code shares the worker's
// process and so fd 4, and a line without it is not the worker's (reply_forged, worker_client.cpp).
// "fatal" says the worker's CUDA context is lost, "replace" that a candidate left state the
// worker could not put back (worker/service/worker_state.h): either way it exits after
// replying, and the client starts a fresh one for the next request.
//   lock line:    {"id": n, "lock": "waiting"|"held"|"broken", "mode", "waited", "why"}
// Before its reply (and before the hello, with id 0), the worker says what it does with the
// GPU's timing lock (gpu_timing_lock.h): the client stops its watchdog's clock while the worker
// waits, and watches the GPU for other processes while it holds the lock exclusively.
//   phase line:   {"id": n, "nonce": s, "phase": name}
// Before its reply to an evaluate request, the worker says each phase as it starts it
// (phase_budgets.h's kEvaluatePhases): the client holds each phase to its budgets. A phase line
// only ever makes the client stricter: it never moves the request's deadline, and the client
// takes only a phase later in the list than the one it is in (a line the candidate forged can
// end a phase's clock early, never start an earlier phase's again).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/enum_names.h"
#include "problem/problem_spec.h"
#include "result/device_info.h"
#include "result/eval_result.h"
#include "worker/protocol/eval_options.h"
#include "worker/protocol/gpu_timing_lock.h"

namespace kagent {

// A load_inline extension of a KernelBench answer that kagent compiled before the worker
// loads the answer: the worker's load_inline returns its ops when a call's key matches.
struct PrebuiltExtension {
  std::string key;           // the normalised call's SHA-256 (kagent_worker/inline_calls.py)
  std::string library;       // the shared object
  std::string op_namespace;  // its ops are <op_namespace>::<function>
  std::vector<std::string> functions;
  // Not empty: `library` is cuda.cu alone and this shared object registers its functions
  // (compiler/shared_binding.h); empty: `library` registers them when loaded.
  std::string binding;
  // Not empty: kagent's build of this very call failed in the answer's own code (the compiler's
  // first error line; `library` empty). The worker raises torch's build error at the call at
  // once, as torch's own build would after its minute (the answer's except then runs).
  std::string build_error{};
};

// What a candidate is, as the worker needs to know it.
struct CandidateRef {
  std::string format;    // "cuda" | "kernelbench"
  std::string artifact;  // cuda: the compiled shared object
  std::string op_name;   // cuda: dispatcher name of forward
  std::string path;      // kernelbench: the Python file
  std::vector<std::string> kernels{};  // cuda: the candidate's own kernels (ptxas names), for the guards
  std::vector<PrebuiltExtension> extensions{};             // kernelbench: what kagent built
  std::map<std::string, std::string> extension_reasons{};  // kernelbench: extension name -> why torch builds it
};
void to_json(nlohmann::json& j, const PrebuiltExtension& e);
void from_json(const nlohmann::json& j, PrebuiltExtension& e);
void to_json(nlohmann::json& j, const CandidateRef& c);
void from_json(const nlohmann::json& j, CandidateRef& c);

namespace protocol {

enum class Op { Hello, LoadProblem, Prepare, Evaluate, Baselines, Shutdown };
inline constexpr EnumNames<Op, 6> kOpNames{{
    {Op::Hello, "hello"},
    {Op::LoadProblem, "load_problem"},
    {Op::Prepare, "prepare"},
    {Op::Evaluate, "evaluate"},
    {Op::Baselines, "baselines"},
    {Op::Shutdown, "shutdown"},
}};

// hello: the worker's GPU, its pid and its sandbox report. Sent by the worker unasked when it
// has started (as the reply to request id 0), and answered again on request.
struct HelloRequest {
  static constexpr Op op = Op::Hello;
};
struct HelloReply {
  DeviceInfo device;
  int pid = 0;
  nlohmann::json sandbox = nlohmann::json::object();  // tools/sandbox/apply_sandbox.h's report
  std::string timing_lock;  // the GPU's timing lock file the worker takes; empty: none (it runs unlocked)
  // Seconds of each start-up step, as the worker measured them ("cuda_probe", "python", "device",
  // "runtime_threads"): where a cold `kagent eval` spends what is not compile or evaluation.
  nlohmann::json startup = nlohmann::json::object();
};

// load_problem: executes the problem file afresh and derives its spec (meta tensors).
struct LoadProblemRequest {
  static constexpr Op op = Op::LoadProblem;
  std::string path;
};
using LoadProblemReply = ProblemSpec;

// prepare: loads the problem and runs its reference once, while the candidate compiles.
// compile_warm: also torch.compile it once, if this worker has not yet (the pool's start, where
// compiled baselines are asked: the first torch.compile of a process imports inductor and sets
// up Triton, seconds that would otherwise land in its first evaluation).
struct PrepareRequest {
  static constexpr Op op = Op::Prepare;
  std::string path;
  bool compile_warm = false;
};
struct PrepareReply {};

// evaluate: one candidate, every phase (tools/worker/service/evaluation.h).
struct EvaluateRequest {
  static constexpr Op op = Op::Evaluate;
  std::string problem;
  CandidateRef candidate;
  EvalOptions options;
  // The eager baseline the orchestrator measured in this run with the GPU to itself: a cached
  // entry with this time needs no re-check (evaluation/baseline_memo.h).
  std::optional<double> trusted_eager_ms;
};
using EvaluateReply = EvalResult;

// baselines: the reference's eager and torch.compile times, measured (or read from the
// cache) as an evaluation would.
struct BaselinesRequest {
  static constexpr Op op = Op::Baselines;
  std::string problem;
  EvalOptions options;
};
struct BaselinesReply {
  std::optional<TimingStats> eager, compiled;
  std::string compiled_error;
  bool cache_hit = false;
  std::optional<BaselineRecheck> recheck;
};

// shutdown: the worker replies and exits.
struct ShutdownRequest {
  static constexpr Op op = Op::Shutdown;
};
struct ShutdownReply {};

// The reply type of each request type.
template <class Request>
struct ReplyOf;
template <>
struct ReplyOf<HelloRequest> {
  using type = HelloReply;
};
template <>
struct ReplyOf<LoadProblemRequest> {
  using type = LoadProblemReply;
};
template <>
struct ReplyOf<PrepareRequest> {
  using type = PrepareReply;
};
template <>
struct ReplyOf<EvaluateRequest> {
  using type = EvaluateReply;
};
template <>
struct ReplyOf<BaselinesRequest> {
  using type = BaselinesReply;
};
template <>
struct ReplyOf<ShutdownRequest> {
  using type = ShutdownReply;
};

// A request the worker answered with an error (a problem that fails to load, a bad request).
struct ErrorReply {
  std::string kind;  // problem_load_error, problem_incomplete, file_not_found, bad_request, internal_error, ...
  std::string message;
};

void to_json(nlohmann::json& j, const HelloReply& r);
void from_json(const nlohmann::json& j, HelloReply& r);
void to_json(nlohmann::json& j, const LoadProblemRequest& r);
void from_json(const nlohmann::json& j, LoadProblemRequest& r);
void to_json(nlohmann::json& j, const PrepareRequest& r);
void from_json(const nlohmann::json& j, PrepareRequest& r);
void to_json(nlohmann::json& j, const EvaluateRequest& r);
void from_json(const nlohmann::json& j, EvaluateRequest& r);
void to_json(nlohmann::json& j, const BaselinesRequest& r);
void from_json(const nlohmann::json& j, BaselinesRequest& r);
void to_json(nlohmann::json& j, const BaselinesReply& r);
void from_json(const nlohmann::json& j, BaselinesReply& r);
void to_json(nlohmann::json& j, const ErrorReply& r);
void from_json(const nlohmann::json& j, ErrorReply& r);
// Field-less messages.
void to_json(nlohmann::json& j, const HelloRequest&);
void from_json(const nlohmann::json&, HelloRequest&);
void to_json(nlohmann::json& j, const PrepareReply&);
void from_json(const nlohmann::json&, PrepareReply&);
void to_json(nlohmann::json& j, const ShutdownRequest&);
void from_json(const nlohmann::json&, ShutdownRequest&);
void to_json(nlohmann::json& j, const ShutdownReply&);
void from_json(const nlohmann::json&, ShutdownReply&);

// Lines of the envelope.
template <class Request>
nlohmann::json request_line(const Request& request, int id) {
  nlohmann::json j = request;
  j["op"] = enum_name(kOpNames, Request::op, "?");
  j["id"] = id;
  return j;
}
// The op of a request line; throws std::invalid_argument for a missing or unknown op.
Op op_of(const nlohmann::json& line);
template <class Reply>
nlohmann::json ok_line(const Reply& reply, bool fatal = false) {
  nlohmann::json j = {{"ok", true}, {"result", reply}};
  if (fatal) j["fatal"] = true;
  return j;
}
nlohmann::json error_line(const std::string& kind, const std::string& message);

// A lock line (above): not a reply, it carries no "ok".
struct LockEvent {
  enum class Kind { Waiting, Held, Broken } kind = Kind::Held;
  LockMode mode = LockMode::None;  // Waiting: the mode wanted; Held: the mode held now
  double waited_s = 0;             // Held: how long it waited for it
  std::string why;                 // Broken: the flock's error
};
nlohmann::json lock_line(const LockEvent& event);
// The event of a lock line; nullopt for any other line.
std::optional<LockEvent> lock_event_of(const nlohmann::json& line);

// A phase line (above): not a reply, no "ok", no "lock".
nlohmann::json phase_line(std::string_view phase);
// The phase a phase line names; nullopt for any other line (a reply, a lock line, a "phase"
// that is not a non-empty string). A name the client does not know is returned as it is: the
// client ignores it (a newer worker's phase).
std::optional<std::string> phase_of(const nlohmann::json& line);

}  // namespace protocol
}  // namespace kagent
