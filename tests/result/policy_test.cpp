// Policies (tools/result/policy.h): both verdicts from one set of findings, the ruling one as
// the result's status, the table's rules, old records, JSON.
#include <doctest/doctest.h>

#include <stdexcept>

#include "result/eval_result.h"
#include "result/policy.h"

using namespace kagent;

namespace {

EvalResult correct_with(std::vector<GuardFinding> findings) {
  EvalResult r;
  r.status = Status::Correct;
  r.message = "correct in 5 trials";
  r.guards = std::move(findings);
  return r;
}

}  // namespace

TEST_CASE("Policy names: both spelled, an unknown one refused") {
  CHECK(to_string(policy_from_string("kernelbench")) == "kernelbench");
  CHECK(to_string(policy_from_string("strict")) == "strict");
  CHECK_THROWS_AS(policy_from_string("lenient"), std::invalid_argument);
  CHECK(policy_names() == std::vector<std::string>{"kernelbench", "strict"});
}

TEST_CASE("A library doing the GEMM: correct under kernelbench, rejected under strict") {
  EvalResult r = correct_with({{"library_share", kGuardReject, "own kernels took 12% of the GPU time"}});
  apply_policies(r, Policy::KernelBench);
  CHECK(r.policy == "kernelbench");
  CHECK(r.status == Status::Correct);
  CHECK(r.message == "correct in 5 trials");
  CHECK(r.verdicts.at("strict").status == Status::Rejected);
  CHECK(r.verdicts.at("strict").reason == "library_share");
  CHECK(r.verdicts.at("kernelbench").status == Status::Correct);

  EvalResult s = correct_with({{"library_share", kGuardReject, "own kernels took 12% of the GPU time"}});
  apply_policies(s, Policy::Strict);
  CHECK(s.status == Status::Rejected);
  CHECK(s.reason == "library_share");
  CHECK(s.verdicts.at("kernelbench").status == Status::Correct);
}

TEST_CASE("Bypasses are rejected under both policies; flags reject under neither") {
  for (const char* bypass : {"no_kernel", "try_except_fallback", "cached_results", "output_aliases_input",
                             "leftover_memory", "side_stream", "timing_tampered", "torch_patched", "threads",
                             "inputs_modified", "inconsistent_result", "reply_forged"}) {
    CAPTURE(bypass);
    EvalResult r = correct_with({{bypass, kGuardReject, "caught"}});
    CHECK(rejected_under_all(r.guards));
    apply_policies(r, Policy::KernelBench);
    CHECK(r.verdicts.at("kernelbench").status == Status::Rejected);
    CHECK(r.verdicts.at("strict").status == Status::Rejected);
    CHECK(r.reason == bypass);
  }
  EvalResult f = correct_with({{"excessive_speedup", kGuardFlag, "12x"}, {"torch_ops_in_forward", kGuardFlag, "F.relu"}});
  apply_policies(f, Policy::Strict);
  CHECK(f.status == Status::Correct);
  CHECK_FALSE(rejected_under_all(f.guards));
}

TEST_CASE("cudnn.benchmark alone: noted under kernelbench, rejected under strict; a bypass beside it names the verdict") {
  EvalResult r = correct_with({{"cudnn_benchmark", kGuardReject, "torch.backends.cudnn.benchmark set to True"}});
  CHECK_FALSE(rejected_under_all(r.guards));
  apply_policies(r, Policy::KernelBench);
  CHECK(r.status == Status::Correct);
  CHECK(r.verdicts.at("strict").status == Status::Rejected);
  CHECK(r.verdicts.at("strict").reason == "cudnn_benchmark");
  CHECK(action_under(r.guards[0], Policy::KernelBench) == kGuardFlag);
  // KernelBench's static checker would fail an answer without a kernel of its own: that names it.
  EvalResult both = correct_with({{"cudnn_benchmark", kGuardReject, "set to True"}, {"no_kernel", kGuardReject, "none"}});
  apply_policies(both, Policy::KernelBench);
  CHECK(both.status == Status::Rejected);
  CHECK(both.reason == "no_kernel");
}

TEST_CASE("Hard-coded sizes are flagged under kernelbench, rejected under strict") {
  EvalResult r = correct_with({{"shape_generalization", kGuardReject, "wrong at batch 63"}});
  CHECK_FALSE(rejected_under_all(r.guards));
  apply_policies(r, Policy::KernelBench);
  CHECK(r.status == Status::Correct);
  CHECK(r.verdicts.at("strict").reason == "shape_generalization");
}

TEST_CASE("Lowered precision: kernelbench rejects it only beyond the tolerance, as the guard judged") {
  GuardFinding within{"precision_lowered", kGuardReject, "TF32, within 1e-2 of the fp64 truth", kGuardFlag};
  GuardFinding beyond{"precision_lowered", kGuardReject, "fp16 sums, outside the tolerance", kGuardReject};
  CHECK(action_under(within, Policy::KernelBench) == kGuardFlag);
  CHECK(action_under(within, Policy::Strict) == kGuardReject);
  CHECK(action_under(beyond, Policy::KernelBench) == kGuardReject);
  // A record without the guard's own judgement keeps the strict action.
  CHECK(action_under(GuardFinding{"precision_lowered", kGuardReject, "old"}, Policy::KernelBench) == kGuardReject);
  EvalResult r = correct_with({within});
  apply_policies(r, Policy::KernelBench);
  CHECK(r.status == Status::Correct);
  CHECK(r.verdicts.at("strict").status == Status::Rejected);
}

TEST_CASE("A candidate that failed has the same verdict under both policies") {
  EvalResult r;
  r.status = Status::Wrong;
  r.reason = "value_mismatch";
  r.message = "trial 1: 98% of elements outside tolerance";
  apply_policies(r, Policy::Strict);
  CHECK(r.status == Status::Wrong);
  CHECK(r.verdicts.at("kernelbench").status == Status::Wrong);
  CHECK(r.verdicts.at("kernelbench").reason == "value_mismatch");
}

// CUDA-L1's answers that race their own side stream (l1_p16, l1_p56, l1_p74, ...) were wrong when
// they lost the race in the trials and rejected no_kernel when they won it: two verdicts, and two
// rewards, for one answer, decided by the GPU's load (10 of 125 flipped between a one-at-a-time
// collection and a four-worker one on an H200).
namespace {
// A failed evaluation with these findings, its verdicts made under `ruling`.
EvalResult failed_with(Status status, std::vector<GuardFinding> guards, Policy ruling) {
  EvalResult r;
  r.status = status;
  r.reason = "value_mismatch";
  r.message = "trial 5: 99% of elements outside tolerance";
  r.guards = std::move(guards);
  apply_policies(r, ruling);
  return r;
}
}  // namespace

TEST_CASE("A rejection about the code outranks a wrong output, under the policies that reject") {
  const EvalResult r =
      failed_with(Status::Wrong, {{"no_kernel", kGuardReject, "forward launched no kernel of its own"}}, Policy::KernelBench);
  CHECK(r.status == Status::Rejected);
  CHECK(r.reason == "no_kernel");
  CHECK(r.message.find("no kernel of its own") != std::string::npos);
  CHECK(r.message.find("trial 5: 99%") != std::string::npos);  // the wrong output is still said
  CHECK(r.verdicts.at("strict").status == Status::Rejected);

  // A finding that one policy only flags leaves that policy's verdict wrong, not correct.
  const EvalResult c = failed_with(Status::Wrong, {{"cudnn_benchmark", kGuardReject, "cudnn.benchmark switched on"}},
                                   Policy::KernelBench);
  CHECK(c.status == Status::Wrong);
  CHECK(c.reason == "value_mismatch");
  CHECK(c.verdicts.at("strict").status == Status::Rejected);

  // Flags alone change nothing; other failures are never turned into rejections.
  CHECK(failed_with(Status::Wrong, {{"torch_ops_in_forward", kGuardFlag, "torch.mean"}}, Policy::Strict).status ==
        Status::Wrong);
  CHECK(failed_with(Status::RuntimeError, {{"try_except_fallback", kGuardReject, "except computes with PyTorch"}},
                    Policy::Strict)
            .status == Status::RuntimeError);
}

TEST_CASE("JSON carries both verdicts, the policy, the own-kernel share and each finding's kernelbench action") {
  EvalResult r = correct_with({{"library_share", kGuardReject, "12%"}});
  r.own_kernel_share = 0.12;
  apply_policies(r, Policy::KernelBench);
  const nlohmann::json j = r;
  CHECK(j["policy"] == "kernelbench");
  CHECK(j["verdicts"]["strict"]["status"] == "rejected");
  CHECK(j["verdicts"]["kernelbench"]["status"] == "correct");
  CHECK(j["own_kernel_share"] == doctest::Approx(0.12));
  CHECK(j["guards"][0]["action"] == "reject");
  CHECK(j["guards"][0]["kernelbench_action"] == "flag");
  const EvalResult back = j.get<EvalResult>();
  CHECK(back.verdicts.at("strict").reason == "library_share");
  CHECK(back.own_kernel_share == doctest::Approx(0.12));
  CHECK(verdict_under(back, Policy::Strict).status == Status::Rejected);
}

TEST_CASE("Records made before policies: their status is strict's, kernelbench's is derived from the findings") {
  EvalResult old;
  old.status = Status::Rejected;
  old.reason = "library_share";
  old.message = "rejected by guard library_share: 12%";
  old.guards = {{"library_share", kGuardReject, "12%"}};
  CHECK(verdict_under(old, Policy::Strict).status == Status::Rejected);
  CHECK(verdict_under(old, Policy::KernelBench).status == Status::Correct);
  old.guards = {{"no_kernel", kGuardReject, "none"}};
  old.reason = "no_kernel";
  CHECK(verdict_under(old, Policy::KernelBench).status == Status::Rejected);
}
