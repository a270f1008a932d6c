#include "sandbox/violation_verdict.h"

#include <fmt/format.h>

#include "result/eval_result.h"

namespace kagent::sandbox {

void apply_violations(nlohmann::json& reply, const Violations& v) {
  if (!v.any() || !reply.contains("result") || !reply["result"].is_object()) return;
  nlohmann::json& r = reply["result"];
  const char* reason = v.network ? kReasonNetwork : v.filesystem ? kReasonFilesystem : kReasonProcesses;
  const char* what = v.network      ? "opened a network socket"
                     : v.filesystem ? "wrote outside its scratch folder"
                                    : "started too many processes or left processes running";
  std::string details;
  for (const auto& d : v.details) details += (details.empty() ? "" : "; ") + d;
  const std::string message = r.value("message", "");
  const std::string before = r.value("status", "") + (message.empty() ? "" : ": " + message);
  r["status"] = to_string(Status::RuntimeError);
  r["reason"] = reason;
  r["message"] = fmt::format("the candidate {}, which the sandbox blocked ({})", what, details);
  r["runtime_error"] =
      fmt::format("sandbox: {}\nverdict without the sandbox's: {}\n{}", details, before, r.value("runtime_error", ""));
  // The same under every policy: no policy lets a candidate past the sandbox.
  if (r.contains("verdicts") && r["verdicts"].is_object())
    for (auto& verdict : r["verdicts"])
      verdict = {{"status", r["status"]}, {"reason", r["reason"]}, {"message", r["message"]}};
}

}  // namespace kagent::sandbox
