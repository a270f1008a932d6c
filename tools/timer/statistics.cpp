#include "timer/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace kagent::stats {

namespace {
void require(std::span<const double> xs, const char* what) {
  if (xs.empty()) throw std::invalid_argument(std::string("stats::") + what + " of no samples");
}
double rel(double sd, double m) {
  if (m != 0) return sd / std::fabs(m);
  return sd == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}
}  // namespace

double mean(std::span<const double> xs) {
  require(xs, "mean");
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

double median(std::span<const double> xs) { return percentile(xs, 50); }

double min(std::span<const double> xs) {
  require(xs, "min");
  return *std::min_element(xs.begin(), xs.end());
}

double max(std::span<const double> xs) {
  require(xs, "max");
  return *std::max_element(xs.begin(), xs.end());
}

double stdev(std::span<const double> xs) {
  require(xs, "stdev");
  if (xs.size() < 2) return 0;
  const double m = mean(xs);
  double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(xs.size() - 1));
}

double rel_stdev(std::span<const double> xs) { return rel(stdev(xs), mean(xs)); }

double percentile(std::span<const double> xs, double p) {
  require(xs, "percentile");
  if (!(p >= 0 && p <= 100)) throw std::invalid_argument("stats::percentile: p must be in [0, 100]");
  std::vector<double> v(xs.begin(), xs.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  // Two partial selections instead of a full sort: O(n).
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  if (hi == lo) return a;
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return a + (b - a) * (pos - static_cast<double>(lo));
}

double iqr_noise(std::span<const double> xs) {
  require(xs, "iqr_noise");
  return rel((percentile(xs, 75) - percentile(xs, 25)) / 1.349, median(xs));
}

double median_ci_noise(std::span<const double> xs) {
  require(xs, "median_ci_noise");
  const double n = static_cast<double>(xs.size());
  const double spread = 1.96 * std::sqrt(n) / 2;
  // 1-based ranks j = floor(n/2 - spread), k = ceil(n/2 + spread), clamped to [1, n]; 0-based below.
  const auto lo = static_cast<size_t>(std::max(1.0, std::floor(n / 2 - spread))) - 1;
  const auto hi = static_cast<size_t>(std::min(n, std::ceil(n / 2 + spread))) - 1;
  std::vector<double> v(xs.begin(), xs.end());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(hi), v.end());
  const double b = v[hi];
  return rel((b - a) / 2, median(xs));
}

void RunningStats::add(double x) {
  ++n_;
  sum_ += x;
  const double d = x - mean_;
  mean_ += d / static_cast<double>(n_);
  m2_ += d * (x - mean_);
}

double RunningStats::stdev() const {
  return n_ < 2 ? 0.0 : std::sqrt(std::max(m2_, 0.0) / static_cast<double>(n_ - 1));
}

double RunningStats::rel_stdev() const { return rel(stdev(), mean_); }

}  // namespace kagent::stats
