#include "collect/sample_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kagent::collect {

namespace {
constexpr double kLargeOverMedian = 1.5;  // "large": over 1.5 times the median file size
constexpr double kSpreadOver = 0.85;      // the share of the order the large ones are spread over
}  // namespace

std::vector<size_t> spread_large(const std::vector<std::uintmax_t>& sizes) {
  const size_t n = sizes.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (n < 3) return order;

  std::vector<std::uintmax_t> sorted = sizes;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n / 2), sorted.end());
  const double threshold = kLargeOverMedian * static_cast<double>(sorted[n / 2]);

  std::vector<size_t> large, small;
  for (size_t i = 0; i < n; ++i) (static_cast<double>(sizes[i]) > threshold ? large : small).push_back(i);
  if (large.empty()) return order;  // (small never is: the median itself is not large)
  std::stable_sort(large.begin(), large.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });

  // The j-th large one (of k) at (j + 1) / (k + 1) of the first 85%. As k < n / 2 (no more than half
  // the sizes exceed the median), the places are more than one apart and the first is never 0.
  const size_t k = large.size();
  std::vector<bool> is_large_slot(n, false);
  for (size_t j = 0; j < k; ++j)
    is_large_slot[static_cast<size_t>(std::floor(static_cast<double>(j + 1) * kSpreadOver * static_cast<double>(n) /
                                                 static_cast<double>(k + 1)))] = true;
  size_t next_large = 0, next_small = 0;
  for (size_t pos = 0; pos < n; ++pos) order[pos] = is_large_slot[pos] ? large[next_large++] : small[next_small++];
  return order;
}

}  // namespace kagent::collect
