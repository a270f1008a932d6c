// The hygiene suite: one candidate per kind of state a candidate can leave in a worker
// (tests/gpu/hygiene/manifest.json: generators and graph capture, default dtype and device,
// grad modes, torch.backends flags, allocator settings, patched functions, threads, streams,
// graphs kept alive, pending and sticky CUDA errors). Each is evaluated, then the clean-worker
// probe (hygiene/kb_probe.py, which raises when it finds the state changed) in the SAME
// WorkerClient: the culprit's result must name what it left behind (isolation.left_behind),
// charged where it made the worker unusable, and the probe must be correct. Skips without a GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <future>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "common/files.h"
#include "compiler/native_compiler.h"
#include "compiler/nvcc_command.h"
#include "result/eval_result.h"
#include "worker/client/worker_client.h"
#include "worker_device.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

std::string left_behind_text(const EvalResult& r) {
  std::string s;
  for (const auto& l : r.isolation.left_behind)
    s += fmt::format("{}{} ({}{})", s.empty() ? "" : ", ", l.item, l.action, l.charged ? ", charged" : "");
  return s.empty() ? "nothing" : s;
}

}  // namespace

TEST_CASE("Hygiene suite: what a candidate leaves in the worker is named, cleaned, and the next evaluation unaffected") {
  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  wo.request_timeout = std::chrono::seconds(60);
  WorkerClient worker(wo);
  const DeviceInfo device = testing::require_worker_gpu(worker, "hygiene suite");
  const fs::path root = KAGENT_SOURCE_DIR;
  const fs::path dir = root / "tests/gpu/hygiene";
  const std::string problem = (root / "tests/gpu/problems/small_gelu.py").string();
  const auto manifest = nlohmann::json::parse(read_file(dir / "manifest.json"));
  auto spec = worker.load_problem(problem);
  REQUIRE(std::holds_alternative<ProblemSpec>(spec));

  // The native culprits, compiled at once.
  CompileOptions co;
  co.arch = arch_for_compute_capability(device.cc_major, device.cc_minor);
  co.cache_dir = KAGENT_BINARY_DIR "/test-cache/hygiene-suite/compile";
  std::map<std::string, std::future<CompileInfo>> builds;
  for (const auto& e : manifest)
    if (e["format"] == "cuda") {
      const std::string file = e["candidate"];
      CompileOptions o = co;
      o.display_name = file;
      builds[file] = std::async(std::launch::async, [o, file, &dir, s = std::get<ProblemSpec>(spec)] {
        return compile_native(s, read_file(dir / file), o);
      });
    }

  EvalOptions options;  // the defaults, without what this suite does not look at
  options.compiled_baseline = false;
  options.eager_baseline = false;
  options.profile = false;
  EvalOptions probe_options = options;
  probe_options.guards.enabled = false;  // the probe computes with PyTorch: correct in a clean worker
  const CandidateRef probe{"kernelbench", "", "", (dir / "kb_probe.py").string()};
  const EvalResult alone = worker.evaluate(problem, probe, probe_options);
  REQUIRE_MESSAGE(alone.status == Status::Correct, "the probe in a fresh worker: " << to_string(alone.status) << " "
                                                                                   << alone.message);

  int named = 0, next_ok = 0, failed = 0;
  const int restarts_before = worker.restarts();
  for (const auto& e : manifest) {
    const std::string name = e["name"];
    CandidateRef cand{e["format"], "", "", (dir / e["candidate"].get<std::string>()).string()};
    if (e["format"] == "cuda") {
      const CompileInfo ci = builds[e["candidate"]].get();
      REQUIRE_MESSAGE(ci.ok, name << ": " << ci.errors);
      cand = CandidateRef{"cuda", ci.artifact, ci.op_name, "", {}};
    }
    const EvalResult r = worker.evaluate(problem, cand, options, name);
    std::vector<std::string> missing;
    for (const auto& want : e["left_behind"]) {
      bool found = false;
      for (const auto& l : r.isolation.left_behind) found = found || l.item == want.get<std::string>();
      if (!found) missing.push_back(want);
    }
    const bool charged_ok = !e.value("charged", false) || r.isolation.charged();
    const bool status_ok = !e.contains("expect_status") || to_string(r.status) == e["expect_status"].get<std::string>();
    const bool reason_ok = !e.contains("expect_reason") || r.reason == e["expect_reason"].get<std::string>();
    const bool never_internal = r.status != Status::InternalError && r.status != Status::ProblemError;
    const EvalResult next = worker.evaluate(problem, probe, probe_options, "probe after " + name);
    const bool clean = next.status == Status::Correct && next.isolation.left_behind.empty();
    const bool ok = missing.empty() && charged_ok && status_ok && reason_ok && never_internal && clean;
    named += missing.empty() && charged_ok;
    next_ok += clean;
    failed += !ok;
    std::cout << fmt::format("{:<4} {:<22} {:<14} {:<18} left behind: {} | next: {}\n", ok ? "ok" : "FAIL", name,
                             to_string(r.status), r.reason, left_behind_text(r),
                             clean ? "correct" : to_string(next.status) + " " + next.message.substr(0, 120));
    CHECK_MESSAGE(missing.empty(), name << " (" << e["item"] << "): not named: " << missing.front() << "; found "
                                        << left_behind_text(r));
    CHECK_MESSAGE(charged_ok, name << ": not charged: " << left_behind_text(r));
    CHECK_MESSAGE(status_ok, name << ": expected " << e["expect_status"] << ", got " << to_string(r.status) << " "
                                  << r.reason << ": " << r.message);
    CHECK_MESSAGE(reason_ok, name << ": expected reason " << e["expect_reason"] << ", got " << r.reason);
    CHECK_MESSAGE(never_internal, name << ": blamed on kagent or the problem: " << r.message << "\n" << r.runtime_error);
    CHECK_MESSAGE(clean, name << ": the next evaluation in the same worker: " << to_string(next.status) << " "
                              << next.message << "\n" << next.runtime_error);
  }
  std::cout << fmt::format("Hygiene suite: {} of {} kinds of state named, next evaluation clean {}/{}, {} worker "
                           "replacements, {} failed on {}\n",
                           named, manifest.size(), next_ok, manifest.size(), worker.restarts() - restarts_before, failed,
                           device.name);
}
