// spread_large: the large problems of a suite spread over its first 85%, the others in suite order.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "collect/sample_order.h"
#include "collect/suite.h"
#include "kernelbench_dir.h"

using namespace kagent::collect;

namespace {
bool is_permutation_of_n(const std::vector<size_t>& order) {
  std::vector<size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != i) return false;
  return true;
}
}  // namespace

TEST_CASE("sizes alike, or too few to tell: suite order") {
  CHECK(spread_large({}) == std::vector<size_t>{});
  CHECK(spread_large({5, 500}) == std::vector<size_t>{0, 1});
  CHECK(spread_large({100, 120, 90, 140, 110}) == std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(spread_large({0, 0, 0, 0}) == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("one large among ten: after the first, not at the end") {
  const auto order = spread_large({10, 10, 10, 10, 10, 10, 10, 10, 10, 100});
  REQUIRE(is_permutation_of_n(order));
  CHECK(order == std::vector<size_t>{0, 1, 2, 3, 9, 4, 5, 6, 7, 8});  // floor(1/2 * 0.85 * 10) = 4
}

TEST_CASE("KernelBench's 250: level 3's models spread over the first 85%, largest first, the rest in suite order") {
  const Suite s = load_suite(kagent::testing::kernelbench_dir());
  REQUIRE(s.problems.size() == 250);
  std::vector<std::uintmax_t> sizes;
  for (const auto& p : s.problems) sizes.push_back(std::filesystem::file_size(p.path));
  const auto order = spread_large(sizes);
  REQUIRE(is_permutation_of_n(order));

  std::vector<std::uintmax_t> sorted = sizes;
  std::sort(sorted.begin(), sorted.end());
  const std::uintmax_t median = sorted[sizes.size() / 2];
  std::vector<size_t> large_at, small_order, large_order;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    if (2 * sizes[order[pos]] > 3 * median) {
      large_at.push_back(pos);
      large_order.push_back(order[pos]);
    } else {
      small_order.push_back(order[pos]);
    }
  }
  REQUIRE(large_at.size() >= 20);
  int level3 = 0;
  for (const size_t i : large_order) level3 += s.problems[i].level == 3;
  CHECK(level3 >= 40);  // level 3's models are nearly all large (45 of 50; 31 level-1 files with long docstrings too)
  CHECK(large_at.front() > 0);
  CHECK(large_at.back() < order.size() * 85 / 100);
  for (size_t j = 1; j < large_at.size(); ++j) {
    CHECK(large_at[j] - large_at[j - 1] <= 1 + order.size() * 85 / 100 / large_at.size());  // evenly spaced
    CHECK(sizes[large_order[j - 1]] >= sizes[large_order[j]]);
  }
  CHECK(std::is_sorted(small_order.begin(), small_order.end()));
}
