// The pool's workers per GPU (EvaluationSettings::workers_per_gpu): how many it makes and on
// which GPUs, the GPUs its rates are per, and how many problem opens may hold a worker at once.
// No worker is started.
#include <algorithm>
#include <vector>

#include <doctest/doctest.h>

#include "common/cpu_affinity.h"
#include "evaluation/evaluation_pool.h"

using namespace kagent;

namespace {

std::vector<int> placed(const EvaluationPool& pool) {
  std::vector<int> gpus;
  for (const auto& w : pool.counters().workers) gpus.push_back(w.gpu);
  return gpus;
}

}  // namespace

TEST_CASE("two workers per GPU, placed round by round so that work spreads over the GPUs first") {
  EvaluationSettings s;
  s.gpus = {0, 1};
  s.workers_per_gpu = 2;
  EvaluationPool pool(s);
  CHECK(pool.size() == 4);
  CHECK(pool.gpu_count() == 2);
  CHECK(placed(pool) == std::vector<int>{0, 1, 0, 1});
  CHECK(pool.opening_workers() == 2);  // one worker per GPU always free of problem opens
}

TEST_CASE("the default: one worker per 4 cores of each GPU's share, 2 to 4") {
  CHECK(default_workers_per_gpu(16, 1) == 4);
  CHECK(default_workers_per_gpu(12, 1) == 3);
  CHECK(default_workers_per_gpu(16, 2) == 2);
  CHECK(default_workers_per_gpu(2, 1) == 2);
  CHECK(default_workers_per_gpu(128, 1) == 4);
  CHECK(default_workers_per_gpu(8, 0) == 2);
}

TEST_CASE("workers_per_gpu 0: the pool's default over this process's cores and the distinct GPUs") {
  EvaluationSettings s;
  s.gpus = {0, 1, 1};
  s.workers_per_gpu = 0;
  EvaluationPool pool(s);
  const int each = default_workers_per_gpu(static_cast<int>(usable_cpu_count()), 2);
  CHECK(pool.size() == static_cast<size_t>(3 * each));  // --gpus names GPU 1 twice: twice its workers
  CHECK(pool.gpu_count() == 2);
}

TEST_CASE("one worker per GPU: opens may take every worker, as before") {
  EvaluationSettings s;
  s.gpus = {0, 1};
  EvaluationPool pool(s);
  CHECK(pool.size() == 2);
  CHECK(pool.gpu_count() == 2);
  CHECK(pool.opening_workers() == 2);
  EvaluationSettings one;
  one.workers_per_gpu = 2;  // the default GPU
  EvaluationPool lone(one);
  CHECK(lone.size() == 2);
  CHECK(lone.gpu_count() == 1);
  CHECK(placed(lone) == std::vector<int>{-1, -1});
  CHECK(lone.opening_workers() == 1);
}

TEST_CASE("a GPU named twice counts once; without a GPU one worker is enough") {
  EvaluationSettings s;
  s.gpus = {0, 0};
  s.workers_per_gpu = 2;
  EvaluationPool pool(s);
  CHECK(pool.size() == 4);
  CHECK(pool.gpu_count() == 1);
  CHECK(pool.opening_workers() == 3);
  EvaluationSettings hidden;
  hidden.hide_gpus = true;
  hidden.workers_per_gpu = 2;
  EvaluationPool compile_only(hidden);
  CHECK(compile_only.size() == 1);
}
