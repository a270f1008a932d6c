#include "worker/protocol/phase_budgets.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace kagent {

std::optional<size_t> phase_index(std::string_view phase) {
  for (size_t i = 0; i < kEvaluatePhases.size(); ++i)
    if (kEvaluatePhases[i] == phase) return i;
  return std::nullopt;
}

std::string phase_list() {
  std::string list;
  for (const auto p : kEvaluatePhases) {
    if (!list.empty()) list += ", ";
    list += p;
  }
  return list;
}

PhaseBudgets PhaseBudgets::defaults() {
  PhaseBudgets b;
  b.phases["timing"].gpu_s = 30;
  b.phases["guards_after_timing"].gpu_s = 30;
  b.phases["profile"].gpu_s = 60;
  // Shared holds too: a timing waits for every shared holder of the moment, so one candidate
  // whose calls take minutes (l1_p23 at KernelBench's official size) kept every timing of its
  // GPU out for 300 s. `load` has none: torch's builds inside it let go of the lock from Python,
  // which the lock lines do not show.
  b.phases["correctness"].gpu_s = 60;
  b.phases["guards_before_timing"].gpu_s = 60;
  return b;
}

PhaseBudget PhaseBudgets::of(std::string_view phase) const {
  const auto it = phases.find(phase);
  return it == phases.end() ? PhaseBudget{} : it->second;
}

std::string PhaseBudgets::listed(bool gpu) const {
  std::string out;
  for (const auto phase : kEvaluatePhases) {
    const PhaseBudget b = of(phase);
    if (const auto s = gpu ? b.gpu_s : b.wall_s) out += fmt::format("{}{}={:g}", out.empty() ? "" : ",", phase, *s);
  }
  return out.empty() ? "none" : out;
}

void PhaseBudgets::set(const std::string& phase, bool gpu, std::optional<double> seconds) {
  PhaseBudget& b = phases[phase];
  (gpu ? b.gpu_s : b.wall_s) = seconds;
  if (!b.wall_s && !b.gpu_s) phases.erase(phase);
}

namespace {

// Seconds of a budget: a finite number more than 0. `what` names it in the message.
double budget_seconds(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("{}: '{}' is not a number", what, text));
  if (v < 0) throw std::invalid_argument(fmt::format("{}: '{}' is negative (seconds, more than 0)", what, text));
  if (v == 0) throw std::invalid_argument(fmt::format("{}: '{}' must be more than 0 (none lifts a budget)", what, text));
  return v;
}

void check_phase(const std::string& phase, const std::string& what) {
  if (!phase_index(phase))
    throw std::invalid_argument(fmt::format("{}: no phase '{}' (the phases are {})", what, phase, phase_list()));
}

}  // namespace

std::pair<std::string, std::optional<double>> parse_phase_budget(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument(fmt::format("'{}' is not PHASE=SECONDS", spec));
  const std::string phase = spec.substr(0, eq), value = spec.substr(eq + 1);
  const std::string what = fmt::format("'{}'", spec);
  check_phase(phase, what);
  if (value == "none") return {phase, std::nullopt};
  return {phase, budget_seconds(value, what)};
}

void to_json(nlohmann::json& j, const PhaseBudgets& b) {
  j = nlohmann::json::object();
  for (const auto& [phase, budget] : b.phases) {
    nlohmann::json one = nlohmann::json::object();
    if (budget.wall_s) one["wall"] = *budget.wall_s;
    if (budget.gpu_s) one["gpu"] = *budget.gpu_s;
    if (!one.empty()) j[phase] = one;
  }
}

void from_json(const nlohmann::json& j, PhaseBudgets& b) {
  if (!j.is_object()) throw std::invalid_argument("phase budgets must be an object of phases");
  b.phases.clear();
  for (const auto& [phase, one] : j.items()) {
    const std::string what = "phase budget " + phase;
    check_phase(phase, what);
    if (!one.is_object()) throw std::invalid_argument(what + " must be an object with \"wall\" and/or \"gpu\"");
    for (const char* key : {"wall", "gpu"}) {
      if (!one.contains(key) || one[key].is_null()) continue;
      if (!one[key].is_number()) throw std::invalid_argument(fmt::format("{}: {} is not a number", what, key));
      const double v = one[key].get<double>();
      if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument(fmt::format("{}: {} must be more than 0", what, key));
      b.set(phase, std::string_view(key) == "gpu", v);
    }
  }
}

}  // namespace kagent
