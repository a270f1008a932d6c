#include "profiler/kernel_groups.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "profiler/kernel_names.h"

namespace kagent::profiler {

namespace {

using nlohmann::json;

double number(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// Sums rows into groups keyed by `key_of(row)`; `first` makes a group's fixed fields.
template <class Key, class KeyOf, class First>
json group(const json& kernels, KeyOf key_of, First first) {
  std::map<Key, json> groups;
  double all_ms = 0;
  for (const auto& k : kernels) {
    if (!k.is_object()) continue;
    auto [it, fresh] = groups.try_emplace(key_of(k));
    json& g = it->second;
    if (fresh) {
      g = first(k);
      g["kernels"] = 0;
      g["calls"] = 0;
      g["total_ms"] = 0.0;
    }
    g["kernels"] = g["kernels"].get<int>() + 1;
    g["calls"] = g["calls"].get<int64_t>() + k.value("calls", int64_t{0});
    g["total_ms"] = g["total_ms"].get<double>() + number(k, "total_ms");
    all_ms += number(k, "total_ms");
  }
  json out = json::array();
  for (auto& [key, g] : groups) {
    g["share_pct"] = all_ms > 0 ? std::round(1000.0 * number(g, "total_ms") / all_ms) / 10.0 : 0.0;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const json& a, const json& b) { return a["total_ms"].get<double>() > b["total_ms"].get<double>(); });
  return out;
}

std::string text(const json& k, const char* key) {
  return k.contains(key) && k[key].is_string() ? k[key].get<std::string>() : std::string();
}

}  // namespace

json group_kernels_by_name(const json& kernels) {
  using Key = std::tuple<std::string, bool, std::string>;
  auto family = [](const json& k) { return kernel_family(text(k, "name")); };
  return group<Key>(
      kernels, [&](const json& k) { return Key{family(k), k.value("own", false), text(k, "source")}; },
      [&](const json& k) {
        return json{{"name", family(k)}, {"own", k.value("own", false)}, {"source", text(k, "source")}};
      });
}

json group_kernels_by_source(const json& kernels) {
  using Key = std::pair<std::string, bool>;
  return group<Key>(
      kernels, [](const json& k) { return Key{text(k, "source"), k.value("own", false)}; },
      [](const json& k) { return json{{"source", text(k, "source")}, {"own", k.value("own", false)}}; });
}

}  // namespace kagent::profiler
