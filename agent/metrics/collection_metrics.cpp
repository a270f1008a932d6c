#include "metrics/collection_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "result/policy.h"
#include "trajectory/trajectory.h"

namespace kagent::metrics {

using nlohmann::json;

namespace {

struct Baseline {
  const char* name;
  std::optional<double> SampleOutcomeRow::*speedup;
  std::optional<int> SampleOutcomeRow::*fast1_turn;
};

constexpr Baseline kBaselines[] = {
    {"eager", &SampleOutcomeRow::speedup_eager, &SampleOutcomeRow::fast1_turn_eager},
    {"compiled", &SampleOutcomeRow::speedup_compiled, &SampleOutcomeRow::fast1_turn_compiled},
};

bool faster_than(const SampleOutcomeRow& r, const Baseline& b, double p) {
  const auto& s = r.*b.speedup;
  return r.correct && s && *s > p;
}

// The k values reported: powers of two up to n, and n itself.
std::vector<int> k_values(int n) {
  std::vector<int> ks;
  for (int k = 1; k <= n; k *= 2) ks.push_back(k);
  if (n >= 1 && ks.back() != n) ks.push_back(n);
  return ks;
}

json group_json(const std::string& level, const std::vector<const SampleOutcomeRow*>& rows, int error_problems,
                int samples_per_problem, int turns) {
  std::map<std::string, std::vector<const SampleOutcomeRow*>> by_problem;
  for (const auto* r : rows) by_problem[r->problem].push_back(r);
  const int problems = static_cast<int>(by_problem.size()) + error_problems;
  const double samples = static_cast<double>(rows.size()) + static_cast<double>(error_problems) * samples_per_problem;
  auto share = [&](auto pred) {
    if (samples <= 0) return 0.0;
    return static_cast<double>(std::count_if(rows.begin(), rows.end(), [&](const auto* r) { return pred(*r); })) / samples;
  };

  json g = {{"level", level}, {"problems", problems}, {"samples", samples}};
  g["correct_rate"] = share([](const SampleOutcomeRow& r) { return r.correct; });
  json fast_p = json::object(), geomean = json::object(), fast1_at_k = json::object(), by_turn = json::object();
  const std::vector<int> ks = k_values(samples_per_problem);
  // Averages over problems of the pass@k estimator, where a problem that could not run has
  // none of its samples passing.
  auto at_k = [&](auto pass) {
    json out = json::object();
    for (int k : ks) {
      double sum = 0;
      for (const auto& [name, list] : by_problem) {
        const int n = static_cast<int>(list.size());
        const int c = static_cast<int>(std::count_if(list.begin(), list.end(), [&](const auto* r) { return pass(*r); }));
        sum += pass_at_k(n, c, k);
      }
      out[std::to_string(k)] = problems > 0 ? sum / problems : 0.0;
    }
    return out;
  };
  for (const Baseline& b : kBaselines) {
    json fp = json::object();
    for (const auto& p : kFastP) fp[p] = share([&](const SampleOutcomeRow& r) { return faster_than(r, b, std::stod(p)); });
    fast_p[b.name] = fp;
    double log_sum = 0;
    int timed = 0;
    for (const auto* r : rows)
      if (r->correct && r->*b.speedup && *(r->*b.speedup) > 0) {
        log_sum += std::log(*(r->*b.speedup));
        ++timed;
      }
    geomean[b.name] = timed > 0 ? json(std::exp(log_sum / timed)) : json(nullptr);
    fast1_at_k[b.name] = at_k([&](const SampleOutcomeRow& r) { return faster_than(r, b, 1.0); });
    json turns_list = json::array();
    for (int t = 1; t <= turns; ++t)
      turns_list.push_back(share([&](const SampleOutcomeRow& r) { return r.*b.fast1_turn && *(r.*b.fast1_turn) <= t; }));
    by_turn[b.name] = turns_list;
  }
  g["fast_p"] = fast_p;
  g["geomean_speedup"] = geomean;
  g["pass_at_k"] = at_k([](const SampleOutcomeRow& r) { return r.correct; });
  g["fast1_at_k"] = fast1_at_k;
  g["fast1_by_turn"] = by_turn;
  double tokens = 0, gpu = 0;
  for (const auto* r : rows) {
    tokens += r->tokens;
    gpu += r->gpu_seconds;
  }
  g["cost"] = {{"tokens_per_problem", problems > 0 ? tokens / problems : 0.0},
               {"gpu_seconds_per_problem", problems > 0 ? gpu / problems : 0.0}};
  return g;
}

}  // namespace

json compute_policy_metrics(const RowsByPolicy& rows, const std::string& policy,
                            const std::vector<std::string>& problem_error_levels, int samples_per_problem, int turns,
                            const std::string& computed_by) {
  static const std::vector<SampleOutcomeRow> none;
  const auto rows_of = [&](const std::string& p) -> const std::vector<SampleOutcomeRow>& {
    const auto it = rows.find(p);
    return it == rows.end() ? none : it->second;
  };
  json m = compute_metrics(rows_of(policy), problem_error_levels, samples_per_problem, turns, computed_by);
  m["policy"] = policy;
  m["policies"] = json::object();
  for (const auto& p : policy_names())
    m["policies"][p] = compute_metrics(rows_of(p), problem_error_levels, samples_per_problem, turns, computed_by)["groups"];
  return m;
}

std::string collection_policy(const json& config) {
  const json eval = config.value("eval", json::object());
  if (eval.contains("policy") && eval["policy"].is_string()) return eval["policy"].get<std::string>();
  return eval.contains("tolerance") ? to_string(Policy::KernelBench) : to_string(Policy::Strict);
}

double pass_at_k(int n, int c, int k) {
  if (n <= 0 || c <= 0) return 0.0;
  if (n - c < k) return 1.0;
  // 1 - prod_{i = n-c+1}^{n} (1 - k / i): the product form avoids huge binomials.
  double fail = 1.0;
  for (int i = n - c + 1; i <= n; ++i) fail *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - fail;
}

json compute_metrics(const std::vector<SampleOutcomeRow>& rows, const std::vector<std::string>& problem_error_levels,
                     int samples_per_problem, int turns, const std::string& computed_by) {
  std::set<std::string> levels;
  for (const auto& r : rows)
    if (!r.level.empty()) levels.insert(r.level);
  for (const auto& l : problem_error_levels)
    if (!l.empty()) levels.insert(l);
  json groups = json::array();
  auto add = [&](const std::string& level) {
    std::vector<const SampleOutcomeRow*> in;
    for (const auto& r : rows)
      if (level == "all" || r.level == level) in.push_back(&r);
    const int errors = static_cast<int>(std::count_if(problem_error_levels.begin(), problem_error_levels.end(),
                                                      [&](const std::string& l) { return level == "all" || l == level; }));
    groups.push_back(group_json(level, in, errors, samples_per_problem, turns));
  };
  for (const auto& l : levels) add(l);
  add("all");
  return {{"generated_at", traj::now_iso8601()},
          {"computed_by", computed_by},
          {"samples_per_problem", samples_per_problem},
          {"turns", turns},
          {"groups", groups}};
}

}  // namespace kagent::metrics
