// The GPU verdict suite: every kernel of tests/gpu/kernels/manifest.json, compiled and
// evaluated by the real worker on the real GPU, through ONE WorkerClient so that the run
// must go on after each crash, hang and CUDA fault. Then the GPU's timing lock through one
// correct evaluation. Skips, saying why, without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "common/files.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"
#include "evaluation/answer_extensions.h"
#include "result/eval_result.h"
#include "temp_dir.h"
#include "worker/client/worker_client.h"
#include "worker_device.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {
}  // namespace

TEST_CASE("GPU verdict suite: every manifest kernel gets its expected verdict") {
  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  wo.request_timeout = std::chrono::seconds(20);  // correct kernels answer in about a second
  WorkerClient worker(wo);
  const DeviceInfo device = testing::require_worker_gpu(worker, "GPU verdict suite");
  const fs::path root = KAGENT_SOURCE_DIR;
  auto manifest = nlohmann::json::parse(read_file(root / "tests/gpu/kernels/manifest.json"));
  fs::path cache = fs::path(KAGENT_BINARY_DIR) / "test-cache" / "gpu-suite";
  CompileOptions co;
  co.arch = arch_for_compute_capability(device.cc_major, device.cc_minor);
  co.cache_dir = (cache / "compile").string();
  EvalOptions options;
  options.compiled_baseline = false;
  options.cache_dir = cache.string();

  // KAGENT_GPU_SUITE_ONLY=a,b: only these entries (a quick look at a few on the GPU).
  const char* only = std::getenv("KAGENT_GPU_SUITE_ONLY");
  const std::string only_list = only ? std::string(",") + only + "," : "";
  if (only) std::cout << "GPU suite: only " << only << " (KAGENT_GPU_SUITE_ONLY)\n";
  int passed = 0, failed = 0;
  for (const auto& e : manifest) {
    const std::string name = e["name"];
    if (only && only_list.find("," + name + ",") == std::string::npos) continue;
    const std::string problem = (root / e["problem"].get<std::string>()).string();
    const std::string cand_path = (root / e["candidate"].get<std::string>()).string();
    const std::string format = e.value("format", "cuda");
    // An entry's "speedup_rounds": the rounds run after its timing (a candidate under 1 ms).
    options.speedup_rounds = e.value("speedup_rounds", 0);
    EvalResult r;
    if (format == "cuda") {
      auto spec = worker.load_problem(problem);
      REQUIRE_MESSAGE(std::holds_alternative<ProblemSpec>(spec), name << ": problem failed to load");
      co.display_name = fs::path(cand_path).filename().string();
      CompileInfo ci = compile_native(std::get<ProblemSpec>(spec), read_file(cand_path), co);
      if (!ci.ok) {
        r.status = ci.reason.empty() ? Status::CompileError : Status::Invalid;
        r.reason = ci.reason;
        r.message = ci.errors;
      } else {
        r = worker.evaluate(problem, CandidateRef{"cuda", ci.artifact, ci.op_name, ""}, options);
      }
      r.compile = ci;
    } else {
      // As `kagent eval` does: the answer's load_inline extensions built first, by kagent.
      CandidateRef cand{"kernelbench", "", "", cand_path};
      const AnswerExtensions ext = build_answer_extensions(cand_path, co, cand);
      r = (ext.compile && !ext.compile->ok) ? EvalResult{} : worker.evaluate(problem, cand, options);
      if (ext.compile && !ext.compile->ok) r.status = Status::CompileError;
      for (const auto& b : r.extensions) std::cout << fmt::format("     extension {} built by {} {}\n", b.name, b.built_by, b.reason);
    }
    const std::string got = to_string(r.status);
    bool ok = got == e["expect"].get<std::string>() &&
              (!e.contains("expect_reason") || r.reason == e["expect_reason"].get<std::string>());
    // The rounds: as many ratios as asked, an interval holding their median and mean, where the
    // candidate took under 1 ms; none otherwise.
    if (ok && options.speedup_rounds > 0 && r.timing && r.timing->candidate) {
      const auto& rounds = r.timing->rounds;
      const bool asked = r.timing->candidate->median_ms < kSpeedupRoundsBelowMs;
      ok = asked == rounds.has_value() &&
           (!rounds || (static_cast<int>(rounds->ratios.size()) == options.speedup_rounds && rounds->low > 0 &&
                        rounds->low <= rounds->median && rounds->median <= rounds->high && rounds->low <= rounds->mean &&
                        rounds->mean <= rounds->high));
      if (rounds)
        std::cout << fmt::format("     rounds {:.3f}x in [{:.3f}, {:.3f}] ({}), the timing's {:.3f}x\n", rounds->mean,
                                 rounds->low, rounds->high, rounds->resolved ? "resolved" : "not resolved",
                                 r.timing->speedup_eager.value_or(0));
    }
    std::string speed = r.timing && r.timing->speedup_eager ? fmt::format(" {:.2f}x eager", *r.timing->speedup_eager) : "";
    std::cout << fmt::format("{:<4} {:<28} {:<14} {:<18} eval {:5.2f}s{}  {}\n", ok ? "ok" : "FAIL", name, got,
                             r.reason, r.eval_seconds, speed, r.message.substr(0, 90));
    CHECK_MESSAGE(ok, name << ": expected " << e["expect"] << " " << e.value("expect_reason", "") << ", got " << got
                           << " " << r.reason << ": " << r.message << "\n" << r.runtime_error);
    (ok ? passed : failed)++;
  }
  std::cout << fmt::format("GPU suite: {} passed, {} failed ({} worker restarts) on {}\n", passed, failed,
                           worker.restarts(), device.name);
}

TEST_CASE("an evaluation's exclusive turn lasts to the request's end: the lock is never shared again after it") {
  // Going back to a shared hold after the timing queued the worker at the turnstile behind every
  // sibling timing waiting there, for the milliseconds of the verdict and the state check
  // (docs/evaluation.md, "Phases").
  testing::TempDir dir("kagent-lock-order");
  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  wo.request_timeout = std::chrono::seconds(60);
  wo.admission_folder = (dir.path() / "ledger").string();
  std::mutex mu;
  std::vector<LockMode> held;  // each mode the worker said it holds, in order
  wo.lock_observer = [&](LockMode mode, bool waiting) {
    std::lock_guard lock(mu);
    if (!waiting) held.push_back(mode);
  };
  WorkerClient worker(wo);
  const DeviceInfo device = testing::require_worker_gpu(worker, "timing lock order");
  const fs::path root = KAGENT_SOURCE_DIR;
  const std::string problem = (root / "examples/gemm_bias_relu.py").string();
  auto spec = worker.load_problem(problem);
  REQUIRE(std::holds_alternative<ProblemSpec>(spec));
  CompileOptions co;
  co.arch = arch_for_compute_capability(device.cc_major, device.cc_minor);
  co.cache_dir = (dir.path() / "compile").string();
  co.display_name = "gemm_bias_relu.cu";
  const CompileInfo ci = compile_native(std::get<ProblemSpec>(spec), read_file(root / "examples/gemm_bias_relu.cu"), co);
  REQUIRE_MESSAGE(ci.ok, ci.errors);
  EvalOptions options;
  options.compiled_baseline = false;
  options.cache_dir = (dir.path() / "cache").string();
  const CandidateRef cand{"cuda", ci.artifact, ci.op_name, ""};
  // A first evaluation sets the profiler up (exclusive, then back to the request's shared hold:
  // that is before the evaluation's own phases) and caches the baseline.
  CHECK(worker.evaluate(problem, cand, options).status == Status::Correct);
  {
    std::lock_guard lock(mu);
    held.clear();
  }
  const EvalResult r = worker.evaluate(problem, cand, options);
  CHECK(r.status == Status::Correct);
  std::lock_guard lock(mu);
  std::string modes;
  for (LockMode m : held) modes += std::string(modes.empty() ? "" : " ") + std::string(lock_mode_name(m));
  std::cout << "GPU suite: the timing lock through one evaluation: " << modes << "\n";
  const auto exclusive = std::find(held.begin(), held.end(), LockMode::Exclusive);
  REQUIRE_MESSAGE(exclusive != held.end(), "the timing never held the lock alone");
  CHECK_MESSAGE(std::find(exclusive, held.end(), LockMode::Shared) == held.end(),
                "the lock was taken shared again after the exclusive turn");
  CHECK(held.back() == LockMode::None);  // and let go at the request's end
}
