// Isolation: what keeps one candidate from changing another's verdict, as it shows in a result.
//   left_behind  what the candidate left in the worker after its evaluation, found by the
//                worker's state check (tools/worker/service/worker_state.h): restored, or the
//                worker was replaced; where the worker could not be made clean the verdict is
//                charged (a correct one turns runtime_error / worker_state)
//   retry        the verdict came from a second try on a fresh worker (tools/worker/client): the
//                first failed in a way that a previous candidate in the same worker, or another
//                process on the GPU, could have caused (its memory, or a fault of its kernels)
//   memory_wait  seconds this evaluation queued for GPU memory that other processes held
//                (tools/worker/client/gpu_admission.h)
//   timing_lock_wait  seconds the worker waited for the GPU's timing lock while a sibling worker
//                timed or checked (worker/protocol/gpu_timing_lock.h); not counted against the
//                candidate's timeout
// A WorkerCharge is the note a collection keeps when a retry passed: the candidate that ran
// before in that worker is blamed, its own verdict being delivered already.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kagent {

struct EvalResult;

namespace reason {
// The candidate left the worker in a state it could not be brought back from (a CUDA graph
// capture still running, a thread still busy, ...): runtime_error, even with correct outputs.
inline constexpr const char* kWorkerState = "worker_state";
}  // namespace reason

// A CUDA fault while other processes used the GPU, tried again with the GPU to itself.
inline constexpr const char* kRetryGpuFaultShared = "gpu_fault_shared";

inline constexpr const char* kLeftRestored = "restored";  // put back; the worker serves on
inline constexpr const char* kLeftReplaced = "replaced";  // the worker exits after the reply

struct LeftBehind {
  std::string item;     // "cuda_generator", "graph_capture", "torch.backends.cudnn.benchmark", "thread", ...
  std::string detail;   // what was seen, e.g. "True -> False"
  std::string action;   // kLeftRestored | kLeftReplaced
  bool charged = false; // it made the worker unusable: the candidate's verdict names it
};

struct WorkerRetry {
  std::string first_status;  // the first try's verdict (a status name)
  std::string first_reason;
  std::string first_message;
  std::string why;    // "after_candidate" | "shared_gpu_memory" | kRetryGpuFaultShared
  std::string after;  // why == after_candidate: the candidate that ran before in that worker
};

struct Isolation {
  std::vector<LeftBehind> left_behind;
  std::optional<WorkerRetry> retry;
  double memory_wait_seconds = 0;  // queued for GPU memory before the worker got the request
  double timing_lock_wait_seconds = 0;  // the worker waited for the GPU's timing lock
  bool empty() const {
    return left_behind.empty() && !retry && memory_wait_seconds == 0 && timing_lock_wait_seconds == 0;
  }
  bool charged() const;            // some left_behind item is charged
  std::string charged_text() const;  // "graph_capture: ...; thread: ..." of the charged items
};

// A candidate blamed after its verdict was delivered: the next evaluation in its worker
// failed, and passed when tried again on a fresh worker.
struct WorkerCharge {
  std::string candidate;   // the blamed candidate (its label: file or display name)
  std::string problem;     // its problem
  std::string next;        // the candidate whose evaluation failed after it
  std::string next_problem;
  std::string failed_status;  // how that evaluation failed at first (a status name)
  std::string failed_reason;
  std::string failed_message;
};

void to_json(nlohmann::json& j, const LeftBehind& l);
void from_json(const nlohmann::json& j, LeftBehind& l);
void to_json(nlohmann::json& j, const WorkerRetry& r);
void from_json(const nlohmann::json& j, WorkerRetry& r);
void to_json(nlohmann::json& j, const Isolation& i);
void from_json(const nlohmann::json& j, Isolation& i);
void to_json(nlohmann::json& j, const WorkerCharge& c);
void from_json(const nlohmann::json& j, WorkerCharge& c);

// A correct verdict whose candidate left the worker unusable turns runtime_error / worker_state
// (cuda_fatal when what it left is a lost CUDA context), under every policy that called it
// correct; any other verdict keeps its status (the left_behind list names what was found).
void charge_left_behind(EvalResult& r);

}  // namespace kagent
