#include "curate/reasoning_stats.h"

#include <algorithm>
#include <map>
#include <string>

namespace kagent::curate {

using nlohmann::json;

namespace {

json summary(std::vector<double> v) {
  if (v.empty()) return {{"turns", 0}, {"mean", nullptr}, {"median", nullptr}};
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {{"turns", n}, {"mean", sum / static_cast<double>(n)}, {"median", median}};
}

// Speedup bands of correct turns, as KernelBench's fast_p thresholds.
const std::vector<std::pair<double, std::string>> kBands = {{0, "<1"}, {1, "1-1.5"}, {1.5, "1.5-2"}, {2, ">=2"}};

std::string band_of(double speedup) {
  std::string b = kBands.front().second;
  for (const auto& [floor, name] : kBands)
    if (speedup >= floor) b = name;
  return b;
}

}  // namespace

json reasoning_stats(const std::vector<dataset::SourceTrajectory>& runs) {
  std::vector<double> correct, incorrect;
  std::map<std::string, std::vector<double>> bands;
  json points = json::array();
  struct Task { std::vector<double> lengths; int correct = 0; std::string op_type; };
  std::map<std::string, Task> tasks;
  for (const auto& src : runs) {
    const auto& t = src.trajectory;
    auto& task = tasks[dataset::task_of(t)];
    task.op_type = t.problem.op_type;
    for (const auto& turn : t.turns) {
      if (!turn.eval || turn.error) continue;  // no verdict: nothing to relate the length to
      const double len = static_cast<double>(turn.reasoning.size());
      task.lengths.push_back(len);
      if (turn.correct()) {
        ++task.correct;
        correct.push_back(len);
        if (auto sp = turn.speedup_eager()) {
          bands[band_of(*sp)].push_back(len);
          points.push_back({{"reasoning_chars", len}, {"speedup_eager", *sp}});
        }
      } else {
        incorrect.push_back(len);
      }
    }
  }
  json by_band = json::array();
  for (const auto& [floor, name] : kBands) {
    json row = summary(bands[name]);
    row["band"] = name;
    by_band.push_back(std::move(row));
  }
  json difficulty = json::array();
  for (auto& [name, task] : tasks) {
    if (task.lengths.empty()) continue;
    json row = summary(task.lengths);
    difficulty.push_back({{"task", name}, {"op_type", task.op_type}, {"turns", row["turns"]},
                          {"mean_reasoning_chars", row["mean"]}, {"correct_turns", task.correct}});
  }
  std::stable_sort(difficulty.begin(), difficulty.end(), [](const json& a, const json& b) {
    return a["mean_reasoning_chars"].get<double>() > b["mean_reasoning_chars"].get<double>();
  });
  for (size_t i = 0; i < difficulty.size(); ++i) difficulty[i]["rank"] = i + 1;
  return {{"unit", "characters of reasoning text"},
          {"by_correctness", {{"correct", summary(correct)}, {"incorrect", summary(incorrect)}}},
          {"by_speedup", std::move(by_band)},
          {"speedup_points", std::move(points)},
          {"difficulty", std::move(difficulty)}};
}

}  // namespace kagent::curate
