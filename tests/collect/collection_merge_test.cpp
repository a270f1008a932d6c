// Merging collections: shards join into one (index, trajectories, metrics), a (problem, sample)
// recorded twice is kept once, runs with different settings are refused.
#include <doctest/doctest.h>

#include "collect/collection_merge.h"
#include "collect/collection_metrics_file.h"
#include "collection_builder.h"
#include "collection_compare.h"
#include "temp_dir.h"

using namespace kagent;
using namespace kagent::collect;
using namespace kagent::collect::testing;
using kagent::testing::TempDir;

namespace {
std::vector<traj::Trajectory> two(const std::string& p, int level, double speedup) {
  return {trajectory(p, level, 0, {{Status::Correct, speedup, speedup}}), trajectory(p, level, 1, {{Status::Wrong}})};
}
}  // namespace

TEST_CASE("shards merge into the collection one process would have written") {
  TempDir dir;
  const std::vector<ProblemSpecOfTest> all = {{"a", 1, two("a", 1, 1.5), ""}, {"b", 1, two("b", 1, 0.5), ""},
                                              {"c", 2, two("c", 2, 2.5), ""}, {"d", 2, {}, "problem_load_error: x"}};
  build_collection(dir.path() / "single", all, 2, 1);
  build_collection(dir.path() / "s0", {all[0], all[2]}, 2, 1);
  // The second shard also recorded sample 0 of a (a rerun): the duplicate is dropped.
  build_collection(dir.path() / "s1", {all[1], all[3], {"a", 1, {all[0].samples[0]}, ""}}, 2, 1);
  const MergeSummary s = merge_collections(dir.path() / "merged", {dir.path() / "s0", dir.path() / "s1"});
  CHECK(s.problems == 4);
  CHECK(s.samples == 6);
  CHECK(s.duplicates_dropped == 1);
  CHECK(s.problem_errors == 1);

  write_collection_metrics(dir.path() / "single", "test");
  const auto got = kagent::testing::digest_collection(dir.path() / "merged");
  const auto want = kagent::testing::digest_collection(dir.path() / "single");
  CHECK(got.duplicate_lines.empty());
  CHECK(got.trajectories == want.trajectories);
  CHECK(got.index_lines == want.index_lines);
  CHECK(got.metrics == want.metrics);
  const auto manifest = read_manifest(dir.path() / "merged");
  CHECK(manifest["shard"].is_null());
  CHECK(manifest["merged_from"].size() == 2);
  CHECK(manifest["suite"]["problems"].size() == 4);
}

TEST_CASE("runs with different settings, and a non-empty output folder, are refused") {
  TempDir dir;
  build_collection(dir.path() / "m1", {{"a", 1, two("a", 1, 1.5), ""}}, 2, 1, "model-one");
  build_collection(dir.path() / "m2", {{"b", 1, two("b", 1, 1.5), ""}}, 2, 1, "model-two");
  try {
    merge_collections(dir.path() / "out", {dir.path() / "m1", dir.path() / "m2"});
    FAIL("merged");
  } catch (const MergeError& e) {
    CHECK(e.kind == "mixed_config");
    CHECK(std::string(e.what()).find("config.llm.model: \"model-one\" vs \"model-two\"") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir.path() / "out"));
  // Where the runs were served from and on which GPUs does not matter.
  build_collection(dir.path() / "m3", {{"c", 1, two("c", 1, 1.5), ""}}, 2, 1, "model-one");
  CHECK_NOTHROW(merge_collections(dir.path() / "out", {dir.path() / "m1", dir.path() / "m3"}));
  try {
    merge_collections(dir.path() / "out", {dir.path() / "m1"});
    FAIL("merged into a non-empty folder");
  } catch (const MergeError& e) {
    CHECK(e.kind == "out_exists");
  }
}
