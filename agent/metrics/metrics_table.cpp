#include "metrics/metrics_table.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "common/json_optional.h"
#include "metrics/collection_metrics.h"

namespace kagent::metrics {

using nlohmann::json;

namespace {

constexpr const char* kBaselines[][2] = {{"eager", "eager"}, {"compiled", "torch.compile"}};

std::string percent(const json& v) { return v.is_number() ? fmt::format("{:.1f}%", 100.0 * v.get<double>()) : "-"; }
std::string times(const json& v) { return v.is_number() ? fmt::format("{:.2f}x", v.get<double>()) : "-"; }
std::string number(const json& v) {
  if (!v.is_number()) return "-";
  const double d = v.get<double>();
  return d == static_cast<double>(static_cast<int64_t>(d)) ? fmt::format("{}", static_cast<int64_t>(d)) : fmt::format("{:.1f}", d);
}
// j[a][b]... or null where a member is missing (metrics.json from an older or partial writer).
const json& get(const json& j, std::initializer_list<std::string> path) {
  static const json null;
  const json* at = &j;
  for (const auto& k : path) {
    if (!at->is_object() || !at->contains(k)) return null;
    at = &(*at)[k];
  }
  return *at;
}

std::string csv_number(const json& v) { return v.is_number() ? fmt::format("{:.6g}", v.get<double>()) : ""; }

// The keys of an object member in the order metrics.json holds them (k values sort as numbers there).
std::vector<std::string> keys_of(const json& groups, const char* member, const char* sub = nullptr) {
  std::vector<std::string> keys;
  if (!groups.is_array() || groups.empty()) return keys;
  const json* o = sub ? &get(groups[0], {member, sub}) : &get(groups[0], {member});
  if (!o->is_object()) return keys;
  for (auto it = o->begin(); it != o->end(); ++it) keys.push_back(it.key());
  // nlohmann's object sorts keys as strings ("16" before "2"): order them as numbers.
  // strtod, not stod: a key that is no number (a hand-edited file) sorts as 0 instead of throwing.
  std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
  });
  return keys;
}

}  // namespace

std::string render_metrics_table(const json& m) {
  const json groups = get_or(m, "groups", json::array());
  std::string out;
  auto row = [&](const std::string& label, auto cell) {
    out += fmt::format("{:<24}", label);
    for (const auto& g : groups) out += fmt::format("{:>11}", cell(g));
    out += "\n";
  };
  row("", [](const json& g) {
    const std::string l = get_or<std::string>(g, "level", "");
    return l == "all" ? std::string("all") : "level " + l;
  });
  row("problems", [](const json& g) { return number(get(g, {"problems"})); });
  row("samples", [](const json& g) { return number(get(g, {"samples"})); });
  row("correct", [](const json& g) { return percent(get(g, {"correct_rate"})); });
  for (const auto& k : keys_of(groups, "pass_at_k"))
    row("pass@" + k, [&](const json& g) { return percent(get(g, {"pass_at_k", k})); });
  const int turns = get_or(m, "turns", 0);
  for (const auto& [key, label] : kBaselines) {
    out += fmt::format("vs {}\n", label);
    for (const auto& p : kFastP) row("  fast_" + p, [&](const json& g) { return percent(get(g, {"fast_p", key, p})); });
    row("  geomean speedup", [&](const json& g) { return times(get(g, {"geomean_speedup", key})); });
    for (const auto& k : keys_of(groups, "fast1_at_k", key))
      row("  fast_1@" + k, [&](const json& g) { return percent(get(g, {"fast1_at_k", key, k})); });
    for (int t = 1; t <= turns; ++t)
      row(fmt::format("  fast_1 by turn {}", t), [&](const json& g) {
        const json& l = get(g, {"fast1_by_turn", key});
        return l.is_array() && static_cast<int>(l.size()) >= t ? percent(l[static_cast<size_t>(t - 1)]) : std::string("-");
      });
  }
  out += "cost\n";
  row("  tokens / problem", [](const json& g) { return number(get(g, {"cost", "tokens_per_problem"})); });
  row("  GPU-seconds / problem", [](const json& g) {
    const json& v = get(g, {"cost", "gpu_seconds_per_problem"});
    return v.is_number() ? fmt::format("{:.2f}", v.get<double>()) : std::string("-");
  });
  // Every policy's headline numbers, the table's own (m["policy"]) among them, same columns.
  const json policies = get_or(m, "policies", json::object());
  if (policies.is_object() && !policies.empty()) {
    out += fmt::format("by policy (the table above: {})\n", get_or<std::string>(m, "policy", std::string("?")));
    for (auto it = policies.begin(); it != policies.end(); ++it) {
      auto level_group = [&](const json& g) {
        for (const auto& pg : it.value())
          if (get_or<std::string>(pg, "level", "") == get_or<std::string>(g, "level", "")) return pg;
        return json();
      };
      row("  " + it.key() + " correct", [&](const json& g) { return percent(get(level_group(g), {"correct_rate"})); });
      row("  " + it.key() + " fast_1", [&](const json& g) { return percent(get(level_group(g), {"fast_p", "eager", "1.0"})); });
      row("  " + it.key() + " geomean", [&](const json& g) { return times(get(level_group(g), {"geomean_speedup", "eager"})); });
    }
  }
  return out;
}

std::string metrics_csv(const json& m) {
  const json groups = get_or(m, "groups", json::array());
  const std::vector<std::string> ks = keys_of(groups, "pass_at_k");
  const int turns = get_or(m, "turns", 0);
  // One block of rows per policy; metrics.json without "policies" (older) has one, its own.
  std::vector<std::pair<std::string, json>> blocks;
  const json policies = get_or(m, "policies", json::object());
  if (policies.is_object() && !policies.empty())
    for (auto it = policies.begin(); it != policies.end(); ++it) blocks.emplace_back(it.key(), it.value());
  else
    blocks.emplace_back(get_or<std::string>(m, "policy", std::string()), groups);
  std::string out = "policy,level,baseline,problems,samples,correct_rate";
  for (const auto& p : kFastP) out += fmt::format(",fast_{}", p);
  out += ",geomean_speedup";
  for (const auto& k : ks) out += fmt::format(",pass@{}", k);
  for (const auto& k : ks) out += fmt::format(",fast1@{}", k);
  for (int t = 1; t <= turns; ++t) out += fmt::format(",fast1_turn{}", t);
  out += ",tokens_per_problem,gpu_seconds_per_problem\n";
  auto cell = [&out](const json& v) {
    out += ',';
    out += csv_number(v);
  };
  for (const auto& [policy, block] : blocks)
  for (const auto& g : block)
    for (const auto& [key, label] : kBaselines) {
      out += policy;
      out += ',';
      out += get_or<std::string>(g, "level", "");
      out += ',';
      out += key;
      cell(get(g, {"problems"}));
      cell(get(g, {"samples"}));
      cell(get(g, {"correct_rate"}));
      for (const auto& p : kFastP) cell(get(g, {"fast_p", key, p}));
      cell(get(g, {"geomean_speedup", key}));
      for (const auto& k : ks) cell(get(g, {"pass_at_k", k}));
      for (const auto& k : ks) cell(get(g, {"fast1_at_k", key, k}));
      const json& by_turn = get(g, {"fast1_by_turn", key});
      for (int t = 1; t <= turns; ++t)
        cell(by_turn.is_array() && static_cast<int>(by_turn.size()) >= t ? by_turn[static_cast<size_t>(t - 1)] : json());
      cell(get(g, {"cost", "tokens_per_problem"}));
      cell(get(g, {"cost", "gpu_seconds_per_problem"}));
      out += '\n';
    }
  return out;
}

}  // namespace kagent::metrics
