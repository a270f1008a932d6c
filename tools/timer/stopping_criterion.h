// When to stop taking timing samples. Criteria see each sample and the wall time elapsed
// since the measured loop began, and say when they are done and why; they are pure C++
// (no CUDA) so they can be tested with synthetic sample sequences.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "timer/statistics.h"

namespace kagent {

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  // sample_s: one measurement (seconds); elapsed_s: wall seconds since the loop began.
  virtual void add(double sample_s, double elapsed_s) = 0;
  virtual bool is_finished() const = 0;
  // Why it finished, e.g. "noise 0.8% < 1.0%"; empty while not finished.
  virtual std::string reason() const = 0;
};

// What a noise criterion waits for and aims at (StdRelCriterion, IqrNoiseCriterion). Unlike
// nvbench, min_time_s is wall time of the loop, not accumulated GPU time, so a 5 us kernel is
// not run 100,000 times; the budget that matters here is evaluation latency.
struct NoiseParams {
  int64_t min_samples = 20;
  double min_time_s = 0.1;  // MeasureConfig sets its own (timer/measure_config.h)
  double max_noise = 0.01;  // relative spread of the samples
  // Throws std::invalid_argument naming `who` unless min_samples >= 1, min_time_s >= 0, max_noise > 0.
  void validate(const char* who) const;
  // Both minimums met: the criterion may look at the noise.
  bool reached(int64_t samples, double elapsed_s) const { return samples >= min_samples && elapsed_s >= min_time_s; }
};

// nvbench's "stdrel": finished once at least min_samples and min_time_s are reached and
// either the relative stdev of all samples is below max_noise, or the noise has stopped
// improving (the last up-to-512 noise readings vary by under 5% of the current one, looked
// at every 16 samples once 64 readings exist): a kernel that is inherently noisier than
// max_noise then ends as soon as more samples would not tell more.

class StdRelCriterion final : public StoppingCriterion {
 public:
  explicit StdRelCriterion(NoiseParams p = {});
  void add(double sample_s, double elapsed_s) override;
  bool is_finished() const override { return !reason_.empty(); }
  std::string reason() const override { return reason_; }
  double current_noise() const { return stats_.rel_stdev(); }

  static constexpr size_t kNoiseWindow = 512;
  static constexpr size_t kMinNoiseReadings = 64;
  static constexpr int64_t kNoiseCheckEvery = 16;
  static constexpr double kNoiseConvergedRel = 0.05;

 private:
  NoiseParams p_;
  stats::RunningStats stats_;
  std::deque<double> noise_;  // rel stdev after each sample, last kNoiseWindow
  double elapsed_s_ = 0;
  std::string reason_;
};

// What IqrNoiseCriterion and MedianPrecisionCriterion share: every sample kept; finished once at
// least min_samples and min_time_s are reached and `noise` (a statistic of every sample so far,
// relative to the median) is below max_noise, looked at on the min_samples-th sample and then
// every kCheckEvery samples; the reason is "<label> 0.8% < 1.0%<tail>".
class SampleNoiseCriterion : public StoppingCriterion {
 public:
  using Noise = double (*)(std::span<const double>);
  void add(double sample_s, double elapsed_s) override;
  bool is_finished() const override { return !reason_.empty(); }
  std::string reason() const override { return reason_; }
  double current_noise() const;  // of every sample so far; +inf before the first

  static constexpr int64_t kCheckEvery = 8;  // each look is O(samples)

 protected:
  // Throws std::invalid_argument naming `who` for bad params (NoiseParams::validate).
  SampleNoiseCriterion(NoiseParams p, const char* who, Noise noise, const char* label, const char* tail = "");

 private:
  NoiseParams p_;
  Noise noise_;
  const char* label_;
  const char* tail_;
  std::vector<double> samples_;
  std::string reason_;
};

// The interquartile noise (stats::iqr_noise: the spread of the middle half of the samples, over
// the median) below max_noise. The verdict reports the median, and the median does not move
// with the rare outliers of a shared machine (a launch delayed by preemption adds milliseconds
// to one sample of a 0.5 ms kernel), yet those outliers keep the stdev of every sample above 1%
// until the time cap: this criterion ends such a loop once the bulk is steady. A second mode of
// a quarter of the samples or more still keeps it going.
class IqrNoiseCriterion final : public SampleNoiseCriterion {
 public:
  explicit IqrNoiseCriterion(NoiseParams p = {})
      : SampleNoiseCriterion(p, "IqrNoiseCriterion", stats::iqr_noise, "interquartile noise") {}
};

// The median known to within max_noise (stats::median_ci_noise: the 95% confidence interval of
// the median, half its width over the median). The verdict reports the median: a noisy kernel
// (a level-3 model whose launches wait on the CPU, a few percent apart sample to sample) has its
// median pinned down after tens of samples, while its stdev and even its interquartile range
// stay above 1% until the time cap. Two modes that share the middle (each near half of the
// samples) keep the interval wide, and the loop going.
class MedianPrecisionCriterion final : public SampleNoiseCriterion {
 public:
  explicit MedianPrecisionCriterion(NoiseParams p = {})
      : SampleNoiseCriterion(p, "MedianPrecisionCriterion", stats::median_ci_noise, "median within",
                             " (95% confidence)") {}
};

// Hard caps, which win over every other criterion (including min_samples).
struct CapParams {
  int64_t max_iterations = 5000;
  double max_time_s = 1.0;  // wall time of the loop
};

class CapCriterion final : public StoppingCriterion {
 public:
  explicit CapCriterion(CapParams p = {});
  void add(double sample_s, double elapsed_s) override;
  bool is_finished() const override { return !reason_.empty(); }
  std::string reason() const override { return reason_; }

 private:
  CapParams p_;
  int64_t count_ = 0;
  std::string reason_;
};

// Finished when any child is; the reason is that of the first finished child in order.
class AnyOf final : public StoppingCriterion {
 public:
  explicit AnyOf(std::vector<std::unique_ptr<StoppingCriterion>> children);
  void add(double sample_s, double elapsed_s) override;
  bool is_finished() const override;
  std::string reason() const override;

 private:
  std::vector<std::unique_ptr<StoppingCriterion>> children_;
};

// "0.8%" style text for a fraction, and "2.0 s" for seconds: `decimals` at most, one at least.
std::string format_percent(double fraction, int decimals = 2);
std::string format_seconds(double s);

}  // namespace kagent
