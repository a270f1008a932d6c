// Collections built through the real stores (RunStore, CollectionStore) with fixed verdicts and
// speedups, for the metrics and merge tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/collection_store.h"
#include "trajectory/run_store.h"

namespace kagent::collect::testing {

// One turn: its verdict and, when correct, its speedups over eager and torch.compile.
struct TurnSpec {
  TurnSpec(Status s, std::optional<double> e = std::nullopt, std::optional<double> c = std::nullopt)
      : status(s), eager(e), compiled(c) {}
  Status status;
  std::optional<double> eager, compiled;
};

inline traj::Trajectory trajectory(const std::string& problem, int level, int sample, const std::vector<TurnSpec>& turns) {
  traj::Trajectory t;
  t.problem.name = problem;
  t.problem.level = level;
  t.sample = sample;
  t.max_turns = static_cast<int>(turns.size());
  for (size_t i = 0; i < turns.size(); ++i) {
    traj::Turn turn;
    turn.index = static_cast<int>(i);
    turn.code = "__global__ void k() {}";
    EvalResult r;
    r.status = turns[i].status;
    r.format = "cuda";
    r.eval_seconds = 0.5;
    if (turns[i].eager) {
      Timing tm;
      tm.speedup_eager = turns[i].eager;
      tm.speedup_compiled = turns[i].compiled;
      r.timing = tm;
    }
    turn.eval = r;
    turn.tokens = {100, 50, 0};
    t.turns.push_back(std::move(turn));
  }
  t.status = traj::SampleStatus::Finished;
  t.stop_reason = traj::StopReason::TurnLimit;
  return t;
}

struct ProblemSpecOfTest {
  std::string name;
  int level = 1;
  std::vector<traj::Trajectory> samples;  // empty and `error` set: a problem that cannot run
  std::string error;
};

inline nlohmann::json test_manifest(const std::vector<ProblemSpecOfTest>& problems, int samples, int turns,
                                    const std::string& model = "m") {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : problems)
    list.push_back({{"name", p.name}, {"path", "/suite/level" + std::to_string(p.level) + "/" + p.name + ".py"},
                    {"level", p.level}, {"problem_id", 1}, {"sha256", "sha-" + p.name}, {"op_type", "single-op"}});
  return {{"kind", kCollectionKind},
          {"schema_version", kCollectionSchema},
          {"config", {{"samples", samples}, {"turns", turns}, {"format", "cuda"}, {"llm", {{"model", model}, {"base_url", "x"}}},
                      {"eval", {{"trials", 5}, {"gpus", nlohmann::json::array()}}}, {"order", "largest"}}},
          {"versions", {{"torch", "2.11.0"}, {"gpu", "NVIDIA H200"}}},
          {"shard", nullptr},
          {"suite", {{"root", "/suite"}, {"problems", list}}},
          {"created_at", "2026-01-01T00:00:00.000Z"}};
}

// Writes the collection: manifest, each problem's run folder with its finished samples, the index.
inline void build_collection(const std::filesystem::path& dir, const std::vector<ProblemSpecOfTest>& problems, int samples,
                             int turns, const std::string& model = "m") {
  auto store = CollectionStore::create(dir, test_manifest(problems, samples, turns, model));
  for (const auto& p : problems) {
    if (!p.error.empty()) {
      store->record_problem_error(p.name, p.error);
      continue;
    }
    traj::RunStoreOptions o;
    o.durable = false;
    auto run = traj::RunStore::create_at(store->problem_dir(p.name), {{"problem", p.name}, {"samples", samples}, {"turns", turns}}, o);
    for (const auto& t : p.samples) {
      run->finish_sample(t);
      store->record_sample(p.name, t);
    }
  }
}

}  // namespace kagent::collect::testing
