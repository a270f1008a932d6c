// Trajectories for the curation tests, one per (task, sample), every turn with its verdict,
// speedup over eager, reasoning text and code; written through the real stores when a folder
// is asked for (a collection, as `kagent collect` leaves it).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collect/collection_store.h"
#include "trajectory/run_store.h"

namespace kagent::curate::testing {

struct TurnOf {
  Status status;
  std::optional<double> speedup;
  std::string reasoning;
  std::string code;
  bool flagged = false;
};

struct SampleOf {
  std::string task;
  int level = 1;
  int sample = 0;
  std::vector<TurnOf> turns;
};

inline std::string kernel(const std::string& body) { return "__global__ void k(float* y) {\n  " + body + ";\n}\n"; }

inline traj::Trajectory make_trajectory(const SampleOf& s) {
  traj::Trajectory t;
  t.problem.name = s.task;
  t.problem.level = s.level;
  t.problem.op_type = s.level == 1 ? traj::kOpSingle : traj::kOpFused;
  t.problem.path = "/suite/level" + std::to_string(s.level) + "/" + s.task + ".py";
  t.sample = s.sample;
  t.max_turns = static_cast<int>(s.turns.size());
  t.status = traj::SampleStatus::Finished;
  t.stop_reason = traj::StopReason::TurnLimit;
  t.versions = {"0.1.0", "2.11.0", "13.0", "NVIDIA H200"};
  for (size_t i = 0; i < s.turns.size(); ++i) {
    const auto& spec = s.turns[i];
    traj::Turn turn;
    turn.index = static_cast<int>(i);
    turn.messages = {{"system", "You write CUDA kernels."}, {"user", "Make " + s.task + " fast."}};
    turn.reasoning = spec.reasoning;
    turn.answer = "```cuda\n" + spec.code + "```\n";
    turn.code = spec.code;
    EvalResult r;
    r.status = spec.status;
    r.format = "cuda";
    if (spec.speedup) {
      Timing tm;
      tm.speedup_eager = spec.speedup;
      r.timing = tm;
    }
    if (spec.flagged) r.guards.push_back({"excessive_speedup", kGuardFlag, "over 100x"});
    turn.eval = r;
    t.turns.push_back(std::move(turn));
  }
  return t;
}

// The fixed set the tests assert on (reasoning lengths in characters):
//   1_relu (L1)  s0: correct 1.5 "aaaa"(4) code A; correct 2.0 (10) code B; wrong
//                s1: correct 1.2 "bb"(2) code A with other comments (a near-duplicate); correct 0.8 (1)
//   2_double (L1) s0: correct 3.0 (1) flagged; correct 1.1 (6) code C
//   3_abs (L1)   s0: correct 1.0 (1) code D (the threshold is inclusive)
//   1_relu_double (L2) s0: correct 1.3 (20) code E; correct 1.4 (30) code F
inline std::vector<SampleOf> fixed_samples() {
  const std::string a = kernel("y[0] = 1.f");
  const std::string a2 = "// first try\n" + kernel("y[0]   =   1.f /* same */");
  return {
      {"1_relu", 1, 0, {{Status::Correct, 1.5, "aaaa", a}, {Status::Correct, 2.0, std::string(10, 'r'), kernel("y[0] = 2.f")},
                        {Status::Wrong, std::nullopt, "w", kernel("y[0] = 3.f")}}},
      {"1_relu", 1, 1, {{Status::Correct, 1.2, "bb", a2}, {Status::Correct, 0.8, "s", kernel("y[0] = 4.f")}}},
      {"2_double", 1, 0, {{Status::Correct, 3.0, "f", kernel("y[0] = 5.f"), true}, {Status::Correct, 1.1, "cccccc", kernel("y[0] = 6.f")}}},
      {"3_abs", 1, 0, {{Status::Correct, 1.0, "d", kernel("y[0] = 7.f")}}},
      {"1_relu_double", 2, 0, {{Status::Correct, 1.3, std::string(20, 'e'), kernel("y[0] = 8.f")},
                               {Status::Correct, 1.4, std::string(30, 'f'), kernel("y[0] = 9.f")}}},
  };
}

// A collection folder of these samples, written by CollectionStore and RunStore, asked in answer
// `format`; `edit` changes each trajectory before it is written (a record as an older kagent wrote it).
inline void write_collection(const std::filesystem::path& dir, const std::vector<SampleOf>& samples,
                             const std::function<void(traj::Trajectory&)>& edit = {}, const std::string& format = "cuda") {
  nlohmann::json list = nlohmann::json::array();
  std::vector<std::string> tasks;
  for (const auto& s : samples)
    if (std::find(tasks.begin(), tasks.end(), s.task) == tasks.end()) {
      tasks.push_back(s.task);
      list.push_back({{"name", s.task}, {"path", "/suite/" + s.task + ".py"}, {"level", s.level}, {"problem_id", 1},
                      {"sha256", "x"}, {"op_type", s.level == 1 ? "single-op" : "fused"}});
    }
  const nlohmann::json manifest = {{"kind", collect::kCollectionKind}, {"schema_version", collect::kCollectionSchema},
                                   {"config", {{"samples", 2}, {"turns", 3}, {"format", format}}},
                                   {"versions", {{"kagent", "0.1.0"}, {"torch", "2.11.0"}, {"cuda", "13.0"}, {"gpu", "NVIDIA H200"}}},
                                   {"shard", nullptr}, {"suite", {{"root", "/suite"}, {"problems", list}}},
                                   {"created_at", "2026-01-01T00:00:00.000Z"}};
  auto store = collect::CollectionStore::create(dir, manifest);
  for (const auto& task : tasks) {
    traj::RunStoreOptions o;
    o.durable = false;
    auto run = traj::RunStore::create_at(store->problem_dir(task), {{"problem", task}, {"samples", 2}, {"turns", 3}, {"format", format}}, o);
    for (const auto& s : samples)
      if (s.task == task) {
        auto t = make_trajectory(s);
        if (edit) edit(t);
        run->finish_sample(t);
        store->record_sample(task, t);
      }
  }
}

}  // namespace kagent::curate::testing
