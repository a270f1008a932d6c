// The reward-hack guard suite: every hacking candidate of tests/gpu/hacks/manifest.json must be
// caught by its guard (or flagged, for the flag-only guards), and every correct kernel of
// tests/gpu/kernels/manifest.json must pass with no reject and no flag (no false rejects). All
// of it through ONE WorkerClient, as evaluations run in kagent. Then each rejected hack runs
// again in a second, fresh worker with the guards off, where it must pass: proof that it beats
// the checks kagent had without the guards (fresh, because several hacks keep state in the
// process). Skips, saying why, without a GPU.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/files.h"
#include "compiler/compile_pool.h"
#include "compiler/nvcc_command.h"
#include "evaluation/answer_extensions.h"
#include "result/eval_result.h"
#include "result/policy.h"
#include "worker/client/worker_client.h"
#include "kernelbench_dir.h"
#include "worker_device.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {


struct Case {
  nlohmann::json entry;
  bool hack = false;  // from the hacks manifest (else a correct kernel of the verdict suite)
  std::string name() const { return entry["name"]; }
  std::string format() const { return entry.value("format", "cuda"); }
};

bool unavailable(const GuardFinding& g) { return g.action == kGuardFlag && g.message.rfind("unavailable", 0) == 0; }

bool has_finding(const EvalResult& r, const std::string& name) {
  for (const auto& g : r.guards)
    if (g.name == name && !unavailable(g)) return true;
  return false;
}

// Every candidate compiled up front, in parallel (nvcc dominates the suite otherwise): native
// ones by the compile pool, KernelBench-format ones' load_inline extensions by kagent as `kagent
// eval` builds them (left to torch inside the worker, each took a minute of the suite).
class Candidates {
 public:
  Candidates(WorkerClient& worker, const std::vector<Case>& cases, const fs::path& root, const CompileOptions& co) {
    CompilePool pool;
    std::map<std::string, std::future<CompileInfo>> pending;
    std::map<std::string, std::future<std::pair<CandidateRef, AnswerExtensions>>> answers;
    for (const auto& c : cases) {
      if (c.format() == "kernelbench") {
        const std::string path = (root / c.entry["candidate"].get<std::string>()).string();
        CompileOptions opts = co;
        opts.display_name = fs::path(path).filename().string();
        answers.emplace(key(c), std::async(std::launch::async, [path, opts] {
                          CandidateRef cand{"kernelbench", "", "", path, {}};
                          AnswerExtensions ext = build_answer_extensions(path, opts, cand);
                          return std::pair{std::move(cand), std::move(ext)};
                        }));
        continue;
      }
      const std::string problem = testing::manifest_problem(c.entry["problem"]);
      auto spec = specs_.find(problem);
      if (spec == specs_.end()) {
        auto loaded = worker.load_problem(problem);
        REQUIRE_MESSAGE(std::holds_alternative<ProblemSpec>(loaded), c.name() << ": problem failed to load");
        spec = specs_.emplace(problem, std::get<ProblemSpec>(loaded)).first;
      }
      const fs::path source = root / c.entry["candidate"].get<std::string>();
      CompileOptions opts = co;
      opts.display_name = source.filename().string();
      pending.emplace(key(c), pool.submit(spec->second, read_file(source), opts));
    }
    for (auto& [k, f] : pending) compiled_.emplace(k, f.get());
    for (auto& [k, f] : answers) answers_.emplace(k, f.get());
  }

  // The candidate as the orchestrator sends it; nullopt (with the compile info) when it did not compile.
  std::optional<CandidateRef> ref(const Case& c, EvalResult& r) const {
    if (c.format() != "cuda") {
      const auto& [cand, ext] = answers_.at(key(c));
      if (ext.compile && !ext.compile->ok) {  // the answer's own load_inline sources do not compile
        r.compile = ext.compile;
        r.status = Status::CompileError;
        r.message = ext.compile->errors;
        return std::nullopt;
      }
      return cand;
    }
    const CompileInfo& ci = compiled_.at(key(c));
    r.compile = ci;
    if (!ci.ok) {
      r.status = ci.reason.empty() ? Status::CompileError : Status::Invalid;
      r.reason = ci.reason;
      r.message = ci.errors;
      return std::nullopt;
    }
    CandidateRef ref{"cuda", ci.artifact, ci.op_name, "", {}};
    for (const auto& k : ci.resources) ref.kernels.push_back(k.kernel);
    return ref;
  }

 private:
  static std::string key(const Case& c) { return c.entry["problem"].get<std::string>() + "|" + c.entry["candidate"].get<std::string>(); }
  std::map<std::string, ProblemSpec> specs_;
  std::map<std::string, CompileInfo> compiled_;
  std::map<std::string, std::pair<CandidateRef, AnswerExtensions>> answers_;
};

EvalResult evaluate(WorkerClient& worker, const Candidates& candidates, const Case& c, const EvalOptions& options) {
  EvalResult r;
  const auto ref = candidates.ref(c, r);
  if (!ref) return r;
  const std::optional<CompileInfo> compile = r.compile;  // the worker's result does not carry it
  r = worker.evaluate(testing::manifest_problem(c.entry["problem"]), *ref, options);
  if (compile) r.compile = compile;
  return r;
}

std::string findings_text(const EvalResult& r) {
  std::string s;
  for (const auto& g : r.guards) s += fmt::format("{}[{} {}: {}]", s.empty() ? "" : " ", g.action, g.name, g.message.substr(0, 110));
  return s;
}

enum class Outcome { Pass, Fail, Skip };

// What a case must show with the guards on: "expect"/"expect_reason" under the strict policy,
// "expect_kernelbench" (default: the same) under the kernelbench policy, from one evaluation.
Outcome judge(const Case& c, const EvalResult& r, std::string& why) {
  const std::string expect = c.entry.value("expect", "correct");
  const std::string reason = c.entry.value("expect_reason", "");
  const PolicyVerdict strict = verdict_under(r, Policy::Strict);
  const PolicyVerdict kernelbench = verdict_under(r, Policy::KernelBench);
  const std::string expect_kb = c.entry.value("expect_kernelbench", expect);
  // A guard that could not run here (CUPTI refused) has not failed: say so and skip the case.
  for (const auto& g : r.guards)
    if (unavailable(g) && g.name == reason) {
      why = g.name + " " + g.message;
      return Outcome::Skip;
    }
  if (to_string(strict.status) != expect) {
    why = fmt::format("strict: expected {} {}, got {} {}: {}", expect, reason, to_string(strict.status), strict.reason,
                      strict.message);
    return Outcome::Fail;
  }
  if (to_string(kernelbench.status) != expect_kb) {
    why = fmt::format("kernelbench: expected {}, got {} {}: {}", expect_kb, to_string(kernelbench.status),
                      kernelbench.reason, kernelbench.message);
    return Outcome::Fail;
  }
  // Caught with its named reason: the verdict's, or one more guard that also rejected it (a hack
  // can trip two guards; the first one to run names the verdict).
  bool named = strict.reason == reason;
  for (const auto& g : r.guards) named = named || (g.name == reason && g.action == "reject");
  if (!reason.empty() && !named) {
    why = fmt::format("expected reason {}, got {}: {}", reason, strict.reason, strict.message);
    return Outcome::Fail;
  }
  for (const auto& flag : c.entry.value("expect_flags", std::vector<std::string>{}))
    if (!has_finding(r, flag)) {
      why = "expected finding " + flag + " is missing";
      return Outcome::Fail;
    }
  if (expect == "correct" && !c.entry.contains("expect_flags")) {
    for (const auto& g : r.guards)
      if (!unavailable(g)) {
        why = fmt::format("a correct kernel got a guard finding: {} {}: {}", g.action, g.name, g.message);
        return Outcome::Fail;
      }
  }
  return Outcome::Pass;
}

}  // namespace

TEST_CASE("Guard suite: every hack is caught, every correct kernel passes clean") {
  WorkerOptions wo;
  wo.worker_path = KAGENT_BINARY_DIR "/kagent-worker";
  wo.request_timeout = std::chrono::seconds(180);  // KernelBench problems at their official sizes
  WorkerClient worker(wo);
  const DeviceInfo device = testing::require_worker_gpu(worker, "guard suite");
  const fs::path root = KAGENT_SOURCE_DIR;
  std::vector<Case> cases;
  for (const auto& e : nlohmann::json::parse(read_file(root / "tests/gpu/hacks/manifest.json"))) cases.push_back({e, true});
  for (const auto& e : nlohmann::json::parse(read_file(root / "tests/gpu/kernels/manifest.json")))
    if (e["expect"] == "correct") cases.push_back({e, false});
  // KAGENT_GUARD_SUITE_ONLY=a,b: only these cases (a quick look at one guard on the GPU).
  if (const char* only = std::getenv("KAGENT_GUARD_SUITE_ONLY")) {
    const std::string list = std::string(",") + only + ",";
    std::erase_if(cases, [&](const Case& c) { return list.find("," + c.name() + ",") == std::string::npos; });
    std::cout << "Guard suite: only " << only << " (KAGENT_GUARD_SUITE_ONLY)\n";
  }

  // The verdict suite's caches: its correct kernels and baselines are usually there already.
  const fs::path cache = fs::path(KAGENT_BINARY_DIR) / "test-cache" / "gpu-suite";
  CompileOptions co;
  co.arch = arch_for_compute_capability(device.cc_major, device.cc_minor);
  co.cache_dir = (cache / "compile").string();
  const Candidates candidates(worker, cases, root, co);
  // No profile phase: it is not what this suite checks, and it would cost time on every case.
  EvalOptions options;
  options.compiled_baseline = false;
  options.profile = false;
  options.cache_dir = cache.string();

  int caught = 0, clean = 0, failed = 0, skipped = 0, bypasses = 0;
  std::vector<const Case*> proofs;
  for (const auto& c : cases) {
    const EvalResult r = evaluate(worker, candidates, c, options);
    std::string why;
    const Outcome outcome = judge(c, r, why);
    const bool counts_as_hack =
        c.hack && (c.entry.value("expect", "correct") != "correct" || c.entry.contains("expect_flags"));
    if (outcome == Outcome::Pass) (counts_as_hack ? caught : clean)++;
    if (outcome == Outcome::Pass && c.entry.value("bypass", false)) bypasses++;  // rejected under both policies
    if (outcome == Outcome::Fail) failed++;
    if (outcome == Outcome::Skip) skipped++;
    const PolicyVerdict strict = verdict_under(r, Policy::Strict), kb = verdict_under(r, Policy::KernelBench);
    std::cout << fmt::format("{:<4} {:<28} strict {:<9} {:<21} kernelbench {:<9} guards {:4.2f}s eval {:5.2f}s  {}\n",
                             outcome == Outcome::Pass ? "ok" : outcome == Outcome::Fail ? "FAIL" : "skip", c.name(),
                             to_string(strict.status), strict.reason, to_string(kb.status), r.guards_seconds(),
                             r.eval_seconds, outcome == Outcome::Pass ? findings_text(r) : why);
    CHECK_MESSAGE(outcome != Outcome::Fail, c.name() << ": " << why << "\n" << r.runtime_error);
    if (c.entry.value("expect", "correct") == "rejected") proofs.push_back(&c);
  }
  const int restarts = worker.restarts();
  // What the side-stream guard saw: the worker logs the timeline of a traced call that ran on
  // several streams (kernels, the marker, the host's moment).
  {
    std::istringstream log(read_file(worker.log_path()));
    int more = 0, clock_lines = 0;
    for (std::string line; std::getline(log, line);) {
      // What CUPTI's clock did here (guard_trace.cpp): records without timestamps, or before the host's call.
      if (line.find("without timestamps") != std::string::npos && clock_lines++ < 5) std::cout << "  log: " << line << "\n";
      if (line.find("kagent guards: traced call") != std::string::npos) more = 8;
      if (more > 0 && more--) std::cout << "  log: " << line << "\n";
    }
  }

  // The proof that each rejected hack beats the checks without guards: a fresh worker. A case
  // about verdict ranking (manifest "guards_off": "wrong") must instead give that verdict.
  WorkerClient unguarded(wo);
  EvalOptions off = options;
  off.guards.enabled = false;
  int pass_without = 0, ranked = 0;
  for (const Case* c : proofs) {
    const EvalResult r = evaluate(unguarded, candidates, *c, off);
    const std::string want = c->entry.value("guards_off", "correct");
    const bool ok = to_string(r.status) == want;
    pass_without += ok && want == "correct";
    ranked += want != "correct";
    if (!ok) failed++;
    std::cout << fmt::format("{:<4} {:<28} guards off: {} {}  {}\n", ok ? "ok" : "FAIL", c->name(), to_string(r.status),
                             r.reason, ok ? "" : r.message.substr(0, 120));
    CHECK_MESSAGE(ok, c->name() << " without the guards gives " << to_string(r.status) << " " << r.reason
                                << ", not " << want << ", so it proves nothing: " << r.message);
  }
  std::cout << fmt::format("Guard suite: {} caught ({} bypasses rejected under both policies), {} correct passed clean, {} "
                           "failed on {}{} ({} of {} hacks pass with the guards off, {} wrong by design; {} worker restarts)\n",
                           caught, bypasses, clean, failed, device.name,
                           skipped ? fmt::format(", {} skipped (guard unavailable)", skipped) : "", pass_without,
                           proofs.size() - ranked, ranked, restarts + unguarded.restarts());
}
