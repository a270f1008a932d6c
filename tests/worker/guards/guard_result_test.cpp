// Guard findings in the result model: JSON round trip, the rejected status, exit status 16
// and the report's guard lines.
#include <doctest/doctest.h>

#include "result/eval_report.h"
#include "result/eval_result.h"
#include "result/exit_status.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent;

namespace {
EvalResult rejected_result() {
  EvalResult r;
  r.status = Status::Rejected;
  r.reason = "leftover_memory";
  r.message = "rejected by guard leftover_memory: output 0 holds poisoned memory";
  r.guards = {{"leftover_memory", kGuardReject, "output 0 holds 524288 poisoned elements"},
              {"excessive_speedup", kGuardFlag, "31.0x faster than eager PyTorch"}};
  r.phases = {{"correctness", 1.0, 0, ""}, {"guards_before_timing", 0.1, 0, ""}, {"guards_after_timing", 0.025, 0, ""}};
  return r;
}
}  // namespace

TEST_CASE("a guard finding survives a JSON round trip") {
  const GuardFinding g{"side_stream", kGuardReject, "1 kernel(s) still ran after forward returned"};
  const GuardFinding back = nlohmann::json(g).get<GuardFinding>();
  CHECK(back.name == g.name);
  CHECK(back.action == g.action);
  CHECK(back.message == g.message);
  CHECK(nlohmann::json(g) == nlohmann::json{{"name", "side_stream"},
                                            {"action", "reject"},
                                            {"kernelbench_action", "reject"},
                                            {"message", "1 kernel(s) still ran after forward returned"}});
}

TEST_CASE("a rejected result keeps its status, findings and guard time through JSON") {
  const EvalResult r = rejected_result();
  const nlohmann::json j = r;
  CHECK(j["status"] == "rejected");
  CHECK(j["guards"].size() == 2);
  const EvalResult back = j.get<EvalResult>();
  CHECK(back.status == Status::Rejected);
  CHECK(back.reason == "leftover_memory");
  REQUIRE(back.guards.size() == 2);
  CHECK(back.guards[1].name == "excessive_speedup");
  CHECK(back.guards[1].action == kGuardFlag);
  CHECK(back.guards_seconds() == doctest::Approx(0.125));
  REQUIRE(back.phases.size() == 3);
  CHECK(back.phases[1].name == "guards_before_timing");
  CHECK(status_from_string("rejected") == Status::Rejected);
  CHECK(to_string(Status::Rejected) == "rejected");
}

TEST_CASE("an old result without guard fields reads as no findings") {
  const EvalResult back = nlohmann::json{{"status", "correct"}}.get<EvalResult>();
  CHECK(back.guards.empty());
  CHECK(back.guards_seconds() == 0);
  CHECK(back.phases.empty());
}

TEST_CASE("a rejected candidate exits with status 16, whatever the guard") {
  EvalResult r = rejected_result();
  CHECK(exit_status::kRejected == 16);
  CHECK(exit_status::for_result(r) == 16);
  r.reason = "no_kernel";
  CHECK(exit_status::for_result(r) == 16);
  r.status = Status::Correct;  // a flag keeps the verdict, and the exit status with it
  r.reason.clear();
  CHECK(exit_status::for_result(r) == 0);
}

TEST_CASE("the report shows every finding and the guards' time") {
  const std::string text = render_eval_report(rejected_result(), "p <- c");
  CHECK(text.find("REJECTED (leftover_memory)") != std::string::npos);
  CHECK(text.find("guards    reject leftover_memory: output 0 holds 524288 poisoned elements") != std::string::npos);
  CHECK(text.find("          flag   excessive_speedup: 31.0x faster") != std::string::npos);
  CHECK(text.find("(0.12 s of guards)") != std::string::npos);

  EvalResult clean;
  clean.status = Status::Correct;
  clean.phases = {{"guards_before_timing", 0.05, 0, ""}};
  CHECK(render_eval_report(clean, "t").find("guards    passed (0.05 s)") != std::string::npos);
  EvalResult off;  // guards did not run: no line at all
  off.status = Status::Correct;
  CHECK(render_eval_report(off, "t").find("guards") == std::string::npos);
}

TEST_CASE("the report says who built each load_inline extension, and why not kagent") {
  EvalResult r;
  r.status = Status::Rejected;
  r.extensions = {{"fast_ext", kBuiltByKagent, "", 0.02},
                  {"dyn_ext", kBuiltByTorch, "cpp_sources is not a constant", 41.5},
                  {"twice_ext", kBuiltByNobody, "functions= is given and the sources define their own PYBIND11_MODULE", 0}};
  const std::string text = render_eval_report(r, "p <- c");
  CHECK(text.find("extension fast_ext: kagent's build") != std::string::npos);
  CHECK(text.find("extension dyn_ext: torch's load_inline built it in 41.5 s; kagent did not because cpp_sources is "
                  "not a constant") != std::string::npos);
  CHECK(text.find("extension twice_ext: not built, torch's build error raised to the answer: functions= is given") !=
        std::string::npos);
}
