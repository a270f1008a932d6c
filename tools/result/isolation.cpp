#include "result/isolation.h"

#include "common/json_optional.h"
#include "result/eval_result.h"
#include "result/policy.h"

namespace kagent {

bool Isolation::charged() const {
  for (const auto& l : left_behind)
    if (l.charged) return true;
  return false;
}

std::string Isolation::charged_text() const {
  std::string s;
  for (const auto& l : left_behind)
    if (l.charged) s += (s.empty() ? "" : "; ") + l.item + (l.detail.empty() ? "" : ": " + l.detail);
  return s;
}

void to_json(nlohmann::json& j, const LeftBehind& l) {
  j = {{"item", l.item}, {"detail", l.detail}, {"action", l.action}, {"charged", l.charged}};
}

void from_json(const nlohmann::json& j, LeftBehind& l) {
  l.item = get_or<std::string>(j, "item", "");
  l.detail = get_or<std::string>(j, "detail", "");
  l.action = get_or<std::string>(j, "action", "");
  l.charged = get_measured(j, "charged", false);
}

void to_json(nlohmann::json& j, const WorkerRetry& r) {
  j = {{"first_status", r.first_status}, {"first_reason", r.first_reason}, {"first_message", r.first_message},
       {"why", r.why}, {"after", r.after}};
}

void from_json(const nlohmann::json& j, WorkerRetry& r) {
  r.first_status = get_or<std::string>(j, "first_status", "");
  r.first_reason = get_or<std::string>(j, "first_reason", "");
  r.first_message = get_or<std::string>(j, "first_message", "");
  r.why = get_or<std::string>(j, "why", "");
  r.after = get_or<std::string>(j, "after", "");
}

void to_json(nlohmann::json& j, const Isolation& i) {
  j = nlohmann::json::object();
  if (!i.left_behind.empty()) j["left_behind"] = i.left_behind;
  if (i.retry) j["retry"] = *i.retry;
  if (i.memory_wait_seconds > 0) j["memory_wait_seconds"] = i.memory_wait_seconds;
  if (i.timing_lock_wait_seconds > 0) j["timing_lock_wait_seconds"] = i.timing_lock_wait_seconds;
}

void from_json(const nlohmann::json& j, Isolation& i) {
  i = Isolation{};
  if (!j.is_object()) return;
  i.left_behind = get_measured(j, "left_behind", std::vector<LeftBehind>{});
  if (j.contains("retry") && j["retry"].is_object()) i.retry = j["retry"].get<WorkerRetry>();
  i.memory_wait_seconds = get_or(j, "memory_wait_seconds", 0.0);
  i.timing_lock_wait_seconds = get_or(j, "timing_lock_wait_seconds", 0.0);
}

void to_json(nlohmann::json& j, const WorkerCharge& c) {
  j = {{"candidate", c.candidate},         {"problem", c.problem},
       {"next", c.next},                   {"next_problem", c.next_problem},
       {"failed_status", c.failed_status}, {"failed_reason", c.failed_reason},
       {"failed_message", c.failed_message}};
}

void from_json(const nlohmann::json& j, WorkerCharge& c) {
  c.candidate = get_or<std::string>(j, "candidate", "");
  c.problem = get_or<std::string>(j, "problem", "");
  c.next = get_or<std::string>(j, "next", "");
  c.next_problem = get_or<std::string>(j, "next_problem", "");
  c.failed_status = get_or<std::string>(j, "failed_status", "");
  c.failed_reason = get_or<std::string>(j, "failed_reason", "");
  c.failed_message = get_or<std::string>(j, "failed_message", "");
}

void charge_left_behind(EvalResult& r) {
  if (!r.isolation.charged()) return;
  bool context_lost = false;  // a fault that landed after the evaluation's last check
  for (const auto& l : r.isolation.left_behind) context_lost = context_lost || (l.charged && l.item == "cuda_error");
  const std::string what = r.isolation.charged_text();
  const PolicyVerdict charged{Status::RuntimeError, context_lost ? reason::kCudaFatal : reason::kWorkerState,
                              "the candidate left the worker unusable: " + what};
  // Under every policy that called it correct: the damage is the candidate's whatever the rules.
  // An evaluator step that failed beside what the candidate left (kagent's next CUDA call
  // refused by a capture it left open) is the candidate's too, never kagent's.
  const bool failed_step = r.status == Status::InternalError;
  const std::string step_error = r.message;
  if (!overrule(r, charged, Status::Correct, Status::InternalError)) return;
  r.runtime_error = failed_step ? "kagent's step failed (" + step_error + "), after the candidate left: " + what
                                : "outputs were correct, but after the evaluation: " + what;
}

}  // namespace kagent
