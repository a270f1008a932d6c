// Guard host_work (worker/guards/guard_host_work.h) on timing records: host work the
// `--timing-sample gpu` sample does not see is rejected; a call whose issue time is in its
// sample, or that issues no slower than the reference, is not.
#include <doctest/doctest.h>

#include "result/policy.h"
#include "worker/guards/guard_host_work.h"

using namespace kagent;

namespace {
TimingStats stats(double median_ms, double issue_ms) {
  TimingStats t;
  t.median_ms = median_ms;
  t.issue_median_ms = issue_ms;
  return t;
}
}  // namespace

TEST_CASE("host_work: a gpu sample far under the call's issue time, and the reference's, is rejected") {
  Timing t;
  t.candidate = stats(0.012, 0.850);  // 12 us on the GPU, 850 us computing on the host first
  t.eager = stats(0.300, 0.030);
  const auto f = worker::check_host_work(t);
  REQUIRE(f);
  CHECK(f->name == "host_work");
  CHECK(f->action == kGuardReject);
  CHECK(f->message.find("850.0 us on the host") != std::string::npos);
  CHECK(f->message.find("reference issues its own in 30.0 us") != std::string::npos);
  CHECK(action_under(*f, Policy::KernelBench) == kGuardReject);
  CHECK(action_under(*f, Policy::Strict) == kGuardReject);
}

TEST_CASE("host_work: not for a sample that holds the issue time, nor for a reference as slow to issue") {
  Timing steady;  // steady: the sample is at least the issue time
  steady.candidate = stats(0.850, 0.850);
  steady.eager = stats(0.300, 0.030);
  CHECK_FALSE(worker::check_host_work(steady));

  Timing python_heavy;  // a level-3 model: many launches, the reference slow to issue as well
  python_heavy.candidate = stats(0.200, 0.900);
  python_heavy.eager = stats(0.400, 0.600);
  CHECK_FALSE(worker::check_host_work(python_heavy));

  Timing small;  // a few tens of microseconds of Python before a 10 us kernel: normal
  small.candidate = stats(0.010, 0.045);
  small.eager = stats(0.008, 0.020);
  CHECK_FALSE(worker::check_host_work(small));

  Timing honest_noise;  // the H200's honest ReLU at its noisiest: 64 us to issue a 7 us kernel
  honest_noise.candidate = stats(0.0072, 0.0637);
  honest_noise.eager = stats(0.0045, 0.0162);
  CHECK_FALSE(worker::check_host_work(honest_noise));
  honest_noise.candidate = stats(0.0072, 0.130);  // and twice as slow again
  CHECK_FALSE(worker::check_host_work(honest_noise));

  Timing no_baseline;  // no eager time: its own GPU time alone decides
  no_baseline.candidate = stats(0.012, 0.850);
  CHECK(worker::check_host_work(no_baseline));
  CHECK_FALSE(worker::check_host_work(Timing{}));
}
