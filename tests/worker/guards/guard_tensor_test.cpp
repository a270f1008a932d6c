// The tensor-level guard checks on CPU tensors: storage overlap (output_aliases_input), input
// writes (inputs_modified), the poison pattern (leftover_memory) and the precision rule, the
// latter on emulated GEMMs whose numbers the rule's comment quotes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "worker/guards/guard_aliasing.h"
#include "checker/compare.h"
#include "worker/guards/guard_inputs.h"
#include "worker/guards/guard_poison.h"
#include "worker/guards/guard_precision.h"

using namespace kagent;
using namespace kagent::worker;

TEST_CASE("storages overlap for views, slices and transposes of one tensor, never for copies") {
  at::manual_seed(1);
  const at::Tensor a = at::randn({4, 8});
  CHECK(storages_overlap(a, a));
  CHECK(storages_overlap(a, a.view({32})));
  CHECK(storages_overlap(a, a.slice(0, 1, 3)));
  CHECK(storages_overlap(a.t(), a));
  CHECK(storages_overlap(a.slice(0, 0, 1), a.slice(0, 2, 3)));  // one storage: shared, whatever the view shows
  CHECK_FALSE(storages_overlap(a, a.clone()));
  CHECK_FALSE(storages_overlap(a, at::randn({4, 8})));
  CHECK_FALSE(storages_overlap(a, at::Tensor()));
  CHECK_FALSE(storages_overlap(at::empty({0}), at::empty({0})));
}

TEST_CASE("output_aliases_input names the output and what it shares memory with") {
  const at::Tensor x = at::rand({16, 16}), w = at::rand({16, 16});
  const std::vector<NamedTensor> others = {{"input 0", x}, {"parameter 0", w}};
  CHECK_FALSE(check_output_aliasing({x.relu()}, others));
  const auto f = check_output_aliasing({x.relu(), w.view({256})}, others);
  REQUIRE(f);
  CHECK(f->name == "output_aliases_input");
  CHECK(f->action == "reject");
  CHECK(f->message.find("output 1 shares memory with parameter 0") != std::string::npos);
}

TEST_CASE("changed elements: bit-for-bit, an unchanged NaN is unchanged, shape or dtype changes count all") {
  at::Tensor a = at::randn({10});
  a[3] = std::numeric_limits<float>::quiet_NaN();
  at::Tensor b = a.clone();
  CHECK(changed_elements(a, b) == 0);
  b[5] = 42.0f;
  CHECK(changed_elements(a, b) == 1);
  b[3] = 1.0f;  // a NaN overwritten by a number
  CHECK(changed_elements(a, b) == 2);
  CHECK(changed_elements(a, a.view({2, 5})) == 10);
  CHECK(changed_elements(a, a.to(at::kDouble)) == 10);
  CHECK(changed_elements(at::arange(5), at::arange(5)) == 0);
}

TEST_CASE("inputs_modified reports the first written tensor by name") {
  const at::Tensor x = at::randn({8, 8});
  at::Tensor written = x.clone();
  written.mul_(2);
  CHECK_FALSE(check_unmodified({{"input 0", x}}, {{"input 0", x.clone()}}));
  const auto f = check_unmodified({{"input 0", x}, {"input 1", x}}, {{"input 0", x.clone()}, {"input 1", written}});
  REQUIRE(f);
  CHECK(f->name == "inputs_modified");
  CHECK(f->message.find("forward wrote input 1: 64 of 64 elements changed") != std::string::npos);
}

TEST_CASE("the poison pattern is all-ones bits, which arithmetic NaNs are not") {
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble}) {
    at::Tensor t = at::zeros({6}, dtype);
    const auto bits = t.element_size() == 2 ? at::kShort : t.element_size() == 4 ? at::kInt : at::kLong;
    t.view(bits).slice(0, 0, 4).fill_(-1);  // what a 0xFF memset leaves
    CHECK(poisoned_elements(t) == 4);
    CHECK(t.isnan().sum().item<int64_t>() == 4);  // and it is a NaN in every float format
    const at::Tensor computed = at::full({3}, 0.0, dtype) / at::zeros({3}, dtype);
    CHECK(computed.isnan().all().item<bool>());
    CHECK(poisoned_elements(computed) == 0);
  }
  CHECK(poisoned_elements(at::full({4}, -1, at::kInt)) == 0);  // integers: -1 is just a value
}

TEST_CASE("relative L2 error over the finite elements") {
  const at::Tensor truth = at::tensor({3.0, 4.0}, at::kDouble);
  CHECK(*relative_l2_error(at::tensor({3.0f, 4.5f}), truth) == doctest::Approx(0.1));
  CHECK(*relative_l2_error(truth, truth) == 0.0);
  const at::Tensor with_inf = at::tensor({3.0, 4.0, INFINITY}, at::kDouble);
  CHECK(*relative_l2_error(at::tensor({3.0f, 4.5f, INFINITY}), with_inf) == doctest::Approx(0.1));
  CHECK_FALSE(relative_l2_error(at::zeros({3}), at::zeros({3}, at::kDouble)));
  CHECK_FALSE(relative_l2_error(at::zeros({2}), at::zeros({3}, at::kDouble)));
}

TEST_CASE("the precision rule: far above eager's error and above the floor") {
  CHECK(precision_lowered(2e-3, 2.5e-7, 64, 1e-5));   // bf16 inputs
  CHECK(precision_lowered(2.8e-4, 2.5e-7, 64, 1e-5)); // TF32 / fp16 inputs
  CHECK(precision_lowered(2e-4, 0.0, 64, 1e-5));      // eager exact, candidate not
  CHECK_FALSE(precision_lowered(1.1e-6, 2.6e-7, 64, 1e-5));  // another fp32 summation order
  CHECK_FALSE(precision_lowered(8.5e-7, 8.6e-8, 64, 1e-5));  // the worst fp32 order, all-positive products (9.9x)
  CHECK_FALSE(precision_lowered(5.4e-6, 8.6e-8, 64, 1e-5));  // TF32 on all-positive products: under the floor
  CHECK_FALSE(precision_lowered(3e-5, 1e-6, 64, 1e-5));      // 30x: within the ratio
}

TEST_CASE("precision_lowered on emulated GEMMs: fp32 in another order passes, bf16 inputs are caught") {
  at::manual_seed(7);
  const int64_t M = 64, K = 517, N = 48;
  const at::Tensor x = at::rand({M, K});
  const double bound = 1.0 / std::sqrt(static_cast<double>(K));  // nn.Linear's init: zero-mean weights
  const at::Tensor w = at::rand({N, K}) * (2 * bound) - bound;
  const at::Tensor truth = at::matmul(x.to(at::kDouble), w.to(at::kDouble).t());
  const at::Tensor eager = at::matmul(x, w.t());
  at::Tensor tiled = at::zeros({M, N});
  for (int64_t k0 = 0; k0 < K; k0 += 16)  // one partial product per K tile, summed in order
    tiled += at::matmul(x.slice(1, k0, std::min(K, k0 + 16)), w.slice(1, k0, std::min(K, k0 + 16)).t());
  const at::Tensor bf16 = at::matmul(x.to(at::kBFloat16).to(at::kFloat), w.to(at::kBFloat16).to(at::kFloat).t());

  CHECK_FALSE(check_precision({tiled}, {eager}, {truth}, 64, 1e-5));
  CHECK_FALSE(check_precision({eager}, {eager}, {truth}, 64, 1e-5));
  const auto f = check_precision({bf16}, {eager}, {truth}, 64, 1e-5);
  REQUIRE(f);
  CHECK(f->name == "precision_lowered");
  CHECK(f->message.find("output 0") != std::string::npos);
  // Outputs the reference gives in float64 (or integers) are not judged.
  CHECK_FALSE(check_precision({bf16.to(at::kDouble)}, {eager.to(at::kDouble)}, {truth}, 64, 1e-5));
}

TEST_CASE("first_mismatch: output count first, then values with the evaluation's tolerance") {
  const at::Tensor y = at::randn({5});
  CHECK_FALSE(first_mismatch({y.clone()}, {y}, {}));
  const auto count = first_mismatch({y, y}, {y}, {});
  REQUIRE(count);
  CHECK(count->reason == "output_count");
  const auto values = first_mismatch({y + 1}, {y}, {});
  REQUIRE(values);
  CHECK(values->reason == "value_mismatch");
  CHECK(clone_tensors({y, at::Tensor()})[1].defined() == false);
}
