// Suites: KernelBench's layout recognised (level, id), list files, filters, unique names,
// shards that partition the suite and keep every problem in its shard whatever else it holds.
#include <doctest/doctest.h>

#include <set>

#include "collect/suite.h"
#include "kernelbench_dir.h"
#include "temp_dir.h"

using namespace kagent::collect;
using kagent::testing::TempDir;

namespace {
const std::string kKernelBench = kagent::testing::kernelbench_dir();
const std::string kProblem = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
}  // namespace

TEST_CASE("KernelBench's layout: levels and ids recorded, ordered by level then id") {
  const Suite s = load_suite(kKernelBench);
  REQUIRE(s.problems.size() == 250);  // 100 + 100 + 50
  CHECK(s.problems.front().level == 1);
  CHECK(s.problems.front().problem_id == 1);
  CHECK(s.problems.front().name == "1_Square_matrix_multiplication_");
  CHECK(s.problems.back().level == 3);
  CHECK(s.problems.back().problem_id == 50);
  std::set<std::string> names;
  for (const auto& p : s.problems) {
    names.insert(p.name);
    CHECK(p.sha256.size() == 64);
  }
  CHECK(names.size() == s.problems.size());  // unique

  SuiteFilter f;
  f.levels = {1, 2};
  f.id_ranges = parse_id_ranges("1-20,57");
  const auto some = filter_problems(s.problems, f);
  CHECK(some.size() == 42);
  f = {};
  f.name_pattern = "ReLU";
  for (const auto& p : filter_problems(s.problems, f)) CHECK(p.name.find("ReLU") != std::string::npos);
  f.name_pattern = "([";
  CHECK_THROWS_AS(filter_problems(s.problems, f), std::invalid_argument);

  // A single level folder is a suite too; its level comes from the folder's name.
  const Suite l2 = load_suite(kKernelBench + "/level2");
  CHECK(l2.problems.size() == 100);
  CHECK(l2.problems[0].level == 2);
}

TEST_CASE("names repeated across levels get their level; a list file; errors") {
  TempDir dir;
  dir.write("s/level1/1_relu.py", kProblem);
  dir.write("s/level2/1_relu.py", kProblem);
  dir.write("s/level2/2_gelu.py", kProblem);
  dir.write("s/level2/__init__.py", "");
  const Suite s = load_suite(dir.path() / "s");
  REQUIRE(s.problems.size() == 3);
  CHECK(s.problems[0].name == "level1-1_relu");
  CHECK(s.problems[1].name == "level2-1_relu");
  CHECK(s.problems[2].name == "2_gelu");

  dir.write("list.txt", "# two of them\ns/level2/2_gelu.py\n\n  s/level1/1_relu.py  \n");
  const Suite l = load_suite(dir.path() / "list.txt");
  REQUIRE(l.problems.size() == 2);
  CHECK(l.problems[0].name == "1_relu");
  CHECK(l.problems[0].level == 1);

  dir.write("bad.txt", "s/level2/nope.py\n");
  try {
    load_suite(dir.path() / "bad.txt");
    FAIL("no error");
  } catch (const SuiteError& e) {
    CHECK(e.kind == "not_found");
    CHECK(std::string(e.what()).find("bad.txt:1") != std::string::npos);
  }
  std::filesystem::create_directories(dir.path() / "empty");
  try {
    load_suite(dir.path() / "empty");
    FAIL("no error");
  } catch (const SuiteError& e) {
    CHECK(e.kind == "empty");
  }
  CHECK_THROWS_AS(load_suite(dir.path() / "missing"), SuiteError);
}

TEST_CASE("shards partition the suite, deterministically, whatever else the suite holds") {
  const Suite s = load_suite(kKernelBench);
  for (int n : {1, 2, 4, 7}) {
    std::set<std::string> seen;
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const auto part = shard_problems(s.problems, i, n);
      total += part.size();
      for (const auto& p : part) {
        CHECK(seen.insert(p.name).second);  // in no other shard
        CHECK(shard_of(p.name, n) == i);
      }
      if (n == 4) CHECK(part.size() > 40);  // roughly even: 250 / 4 = 62.5
    }
    CHECK(total == s.problems.size());
  }
  // The same problem lands in the same shard when the suite is filtered differently.
  SuiteFilter l1;
  l1.levels = {1};
  for (const auto& p : shard_problems(filter_problems(s.problems, l1), 2, 4)) CHECK(shard_of(p.name, 4) == 2);
}

TEST_CASE("--shard and --ids parsing") {
  CHECK(parse_shard("0/4") == std::pair(0, 4));
  CHECK(parse_shard("3/4") == std::pair(3, 4));
  CHECK_THROWS_WITH_AS(parse_shard("3/2"), doctest::Contains("the index must be below the count"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("4/4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("1/0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("a/b"), std::invalid_argument);
  CHECK(parse_id_ranges("1-3,7") == std::vector<std::pair<int, int>>{{1, 3}, {7, 7}});
  CHECK_THROWS_AS(parse_id_ranges("3-1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_id_ranges("x"), std::invalid_argument);
}
