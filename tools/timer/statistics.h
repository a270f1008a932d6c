// Summary statistics of timing samples. Pure C++; every function throws
// std::invalid_argument on an empty sample set (a statistic of nothing is a bug upstream).
#pragma once

#include <span>

namespace kagent::stats {

double mean(std::span<const double> xs);
double median(std::span<const double> xs);  // mean of the two middle values for even counts
double min(std::span<const double> xs);
double max(std::span<const double> xs);
// Sample standard deviation (n - 1 in the denominator); 0 for a single sample.
double stdev(std::span<const double> xs);
// stdev / mean; 0 when all samples are 0, +inf when the mean is 0 but the samples are not.
double rel_stdev(std::span<const double> xs);
// p in [0, 100], linear interpolation between closest ranks (numpy's default).
double percentile(std::span<const double> xs, double p);
// The interquartile range scaled to a normal's stdev ((p75 - p25) / 1.349), over the median:
// the relative spread of the bulk of the samples. Equals rel_stdev for normal samples, but
// rare outliers (a preempted launch, one slow sample in fifty) do not move it; a second mode
// of a quarter of the samples or more does. 0 when all samples are 0, +inf when the median
// is 0 but the quartiles differ.
double iqr_noise(std::span<const double> xs);

// How precisely the samples pin down their median: half the width of the distribution-free 95%
// confidence interval of the median (the order statistics n/2 -+ 1.96 sqrt(n)/2, 1-based,
// clamped to the samples), over the median. Assumes independent samples; needs no shape of
// their distribution, so a noisy kernel's median is known once enough samples surround it even
// where their spread stays wide. 0 when the interval's ends are equal, +inf when the median is 0
// but they are not.
double median_ci_noise(std::span<const double> xs);

// Running mean and variance (Welford), O(1) per sample, for stopping criteria that
// look at every sample after every measurement.
class RunningStats {
 public:
  void add(double x);
  long count() const { return n_; }
  double mean() const { return mean_; }
  double sum() const { return sum_; }
  double stdev() const;      // sample stdev, 0 below two samples
  double rel_stdev() const;  // as stats::rel_stdev

 private:
  long n_ = 0;
  double mean_ = 0, m2_ = 0, sum_ = 0;
};

}  // namespace kagent::stats
