#include "result/speedup_rounds.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/json_optional.h"

namespace kagent {

namespace {

double geometric_mean(const std::vector<double>& ratios) {
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return std::exp(log_sum / static_cast<double>(ratios.size()));
}

}  // namespace

SpeedupRounds summarize_rounds(std::vector<double> ratios) {
  if (ratios.size() < 2) throw std::invalid_argument("speedup rounds: at least 2 are needed");
  for (double r : ratios)
    if (!std::isfinite(r) || r <= 0) throw std::invalid_argument("speedup rounds: a ratio is not a positive number");
  SpeedupRounds s;
  s.ratios = ratios;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  s.median = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  s.mean = geometric_mean(ratios);
  s.low = ratios.front();
  s.high = ratios.back();
  s.coverage = 1 - std::pow(2.0, 1.0 - static_cast<double>(n));
  s.resolved = s.high <= s.low * (1 + kSpeedupResolution);
  return s;
}

void to_json(nlohmann::json& j, const SpeedupRounds& r) {
  j = {{"ratios", r.ratios}, {"median", r.median},     {"mean", r.mean},        {"low", r.low},
       {"high", r.high},     {"coverage", r.coverage}, {"resolved", r.resolved}};
}

void from_json(const nlohmann::json& j, SpeedupRounds& r) {
  r = SpeedupRounds();
  r.ratios = get_or(j, "ratios", r.ratios);
  r.median = get_or(j, "median", 0.0);
  // Records written before the mean was kept: it follows from their ratios.
  const bool ratios_positive = std::all_of(r.ratios.begin(), r.ratios.end(), [](double x) { return x > 0; });
  r.mean = get_or(j, "mean", !r.ratios.empty() && ratios_positive ? geometric_mean(r.ratios) : 0.0);
  r.low = get_or(j, "low", 0.0);
  r.high = get_or(j, "high", 0.0);
  r.coverage = get_or(j, "coverage", 0.0);
  r.resolved = get_or(j, "resolved", false);
}

std::string to_string(SpeedupEstimate e) {
  switch (e) {
    case SpeedupEstimate::Rounds: return "rounds";
    case SpeedupEstimate::RoundsLow: return "rounds_low";
    case SpeedupEstimate::Timing: break;
  }
  return "timing";
}

std::optional<SpeedupEstimate> speedup_estimate_from_name(std::string_view name) {
  for (SpeedupEstimate e : {SpeedupEstimate::Timing, SpeedupEstimate::Rounds, SpeedupEstimate::RoundsLow})
    if (name == to_string(e)) return e;
  return std::nullopt;
}

}  // namespace kagent
