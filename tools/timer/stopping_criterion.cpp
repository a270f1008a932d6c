#include "timer/stopping_criterion.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <cstdio>

namespace kagent {

namespace {
// snprintf, not fmt: in torch-linked targets <fmt/format.h> is torch's bundled fmt.
std::string trimmed(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  // "0.80" -> "0.8", "1.00" -> "1.0"
  while (s.size() > 2 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}
}  // namespace

std::string format_percent(double fraction, int decimals) { return trimmed(fraction * 100, decimals) + "%"; }
std::string format_seconds(double s) { return trimmed(s) + " s"; }

namespace {
// "noise 0.9996% < 1.0%": enough digits that the noise visibly sits below the target.
std::string below_target(const char* label, double noise, double target) {
  int d = 2;
  while (d < 6 && format_percent(noise, d) == format_percent(target, d)) ++d;
  return std::string(label) + " " + format_percent(noise, d) + " < " + format_percent(target);
}
}  // namespace

void NoiseParams::validate(const char* who) const {
  if (min_samples < 1 || min_time_s < 0 || !(max_noise > 0))
    throw std::invalid_argument(std::string(who) + ": need min_samples >= 1, min_time_s >= 0, max_noise > 0");
}

StdRelCriterion::StdRelCriterion(NoiseParams p) : p_(p) { p_.validate("StdRelCriterion"); }

void StdRelCriterion::add(double sample_s, double elapsed_s) {
  stats_.add(sample_s);
  elapsed_s_ = elapsed_s;
  const double noise = stats_.rel_stdev();
  if (std::isfinite(noise)) {
    noise_.push_back(noise);
    if (noise_.size() > kNoiseWindow) noise_.pop_front();
  }
  if (is_finished() || noise_.empty()) return;
  if (!p_.reached(stats_.count(), elapsed_s_)) return;

  if (noise < p_.max_noise) {
    reason_ = below_target("noise", noise, p_.max_noise);
    return;
  }
  // Converged above the target: the noise estimate itself no longer moves.
  if (noise_.size() > kMinNoiseReadings && stats_.count() % kNoiseCheckEvery == 0) {
    stats::RunningStats window;
    for (double n : noise_) window.add(n);
    const double current = noise_.back();
    if (current > 0 && window.stdev() / current < kNoiseConvergedRel)
      reason_ = "noise converged at " + format_percent(current) + " (target " + format_percent(p_.max_noise) + ")";
  }
}

SampleNoiseCriterion::SampleNoiseCriterion(NoiseParams p, const char* who, Noise noise, const char* label,
                                           const char* tail)
    : p_(p), noise_(noise), label_(label), tail_(tail) {
  p_.validate(who);
}

double SampleNoiseCriterion::current_noise() const {
  return samples_.empty() ? std::numeric_limits<double>::infinity() : noise_(samples_);
}

void SampleNoiseCriterion::add(double sample_s, double elapsed_s) {
  samples_.push_back(sample_s);
  if (is_finished()) return;
  const auto n = static_cast<int64_t>(samples_.size());
  if (!p_.reached(n, elapsed_s)) return;
  if (n != p_.min_samples && n % kCheckEvery != 0) return;
  const double noise = noise_(samples_);
  if (noise < p_.max_noise) reason_ = below_target(label_, noise, p_.max_noise) + tail_;
}

CapCriterion::CapCriterion(CapParams p) : p_(p) {
  if (p_.max_iterations < 1 || !(p_.max_time_s > 0))
    throw std::invalid_argument("CapCriterion: need max_iterations >= 1 and max_time_s > 0");
}

void CapCriterion::add(double, double elapsed_s) {
  ++count_;
  if (is_finished()) return;
  if (count_ >= p_.max_iterations)
    reason_ = "max iterations " + std::to_string(p_.max_iterations);
  else if (elapsed_s >= p_.max_time_s)
    reason_ = "max time " + format_seconds(p_.max_time_s);
}

AnyOf::AnyOf(std::vector<std::unique_ptr<StoppingCriterion>> children) : children_(std::move(children)) {
  if (children_.empty()) throw std::invalid_argument("AnyOf: no criteria");
  for (const auto& c : children_)
    if (!c) throw std::invalid_argument("AnyOf: null criterion");
}

void AnyOf::add(double sample_s, double elapsed_s) {
  for (auto& c : children_) c->add(sample_s, elapsed_s);
}

bool AnyOf::is_finished() const {
  for (const auto& c : children_)
    if (c->is_finished()) return true;
  return false;
}

std::string AnyOf::reason() const {
  for (const auto& c : children_)
    if (c->is_finished()) return c->reason();
  return {};
}

}  // namespace kagent
