#include "collect/baselines_table.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "common/json_optional.h"

namespace kagent::collect {

using nlohmann::json;

json baseline_row(const SuiteProblem& p, const std::optional<Timing>& t, bool compiled_asked) {
  json row = {{"problem", p.name}, {"level", json_or_null(p.level)}};
  auto put = [&](const char* ms, const char* noise, const std::optional<TimingStats>& s) {
    row[ms] = s ? json(s->median_ms) : json(nullptr);
    row[noise] = s ? json(s->rel_stdev) : json(nullptr);
  };
  put("eager_ms", "eager_noise", t ? t->eager : std::nullopt);
  put("compiled_ms", "compiled_noise", t ? t->compiled : std::nullopt);
  // How the eager loop ended and what it took (its samples, their GPU seconds): a baseline is
  // timed with the GPU to itself, so a long one holds every other worker's timing back.
  if (t && t->eager && !t->baseline_cache_hit)
    row["eager_timing"] = {{"iterations", t->eager->iterations},
                           {"total_s", t->eager->total_s},
                           {"stop_reason", t->eager->stop_reason}};
  row["compiled_error"] = t && t->eager && compiled_asked && !t->compiled ? "torch.compile failed" : "";
  row["cache_hit"] = t ? t->baseline_cache_hit : false;
  // A cached eager time is measured again before use: what this GPU measured now (the cache
  // may hold another GPU's time: a per-GPU comparison reads this).
  row["recheck_eager_ms"] = t && t->baseline_recheck ? json(t->baseline_recheck->measured_ms) : json(nullptr);
  std::string contention = "unknown";
  json others = json::array();
  if (t && t->contention && t->contention->known) {
    contention = t->contention->shared ? "shared" : "idle";
    others = t->contention->others;
  }
  row["contention"] = contention;
  row["shared_with"] = others;
  row["trusted"] = t && t->eager && contention != "shared";
  return row;
}

json baselines_table(const std::string& gpu, const std::string& torch, std::vector<json> rows) {
  std::sort(rows.begin(), rows.end(), [](const json& a, const json& b) { return a.value("problem", "") < b.value("problem", ""); });
  return {{"gpu", gpu}, {"torch", torch}, {"rows", std::move(rows)}};
}

json merge_baselines(const json& base, const json& update) {
  std::map<std::string, json> by_problem;
  for (const json* t : {&base, &update})
    if (t->is_object())
      for (const auto& r : t->value("rows", json::array())) by_problem[r.value("problem", "")] = r;
  std::vector<json> rows;
  for (auto& [name, r] : by_problem) rows.push_back(std::move(r));
  const json& named = update.is_object() && !update.value("gpu", "").empty() ? update : base;
  return baselines_table(named.is_object() ? named.value("gpu", "") : "", named.is_object() ? named.value("torch", "") : "",
                         std::move(rows));
}

std::string baselines_csv(const json& table) {
  auto cell = [](const json& v) -> std::string {
    if (v.is_null()) return "";
    if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    }
    return v.dump();
  };
  static const char* kColumns[] = {"problem",        "level",          "eager_ms",   "eager_noise", "compiled_ms",
                                   "compiled_noise", "compiled_error", "contention", "trusted"};
  std::string out;
  for (const char* c : kColumns) out += std::string(out.empty() ? "" : ",") + c;
  out += '\n';
  for (const auto& r : table.value("rows", json::array())) {
    std::string line;
    for (const char* c : kColumns) {
      if (!line.empty() || c != kColumns[0]) line += ',';
      line += cell(r.value(c, json()));
    }
    out += line + '\n';
  }
  return out;
}

std::string baselines_file_stem(const std::string& gpu, const std::string& torch) {
  std::string s = (gpu.empty() ? std::string("no_gpu") : gpu) + "-torch" + torch;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return s;
}

}  // namespace kagent::collect
