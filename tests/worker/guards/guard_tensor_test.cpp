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
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

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

TEST_CASE("mean relative error over the elements that are not near zero") {
  const at::Tensor truth = at::tensor({10.0, -20.0, 1e-9, INFINITY}, at::kDouble);
  // rms over the finite elements is ~12.9: 1e-9 is under a tenth of it and left out, inf too.
  const auto e = mean_relative_error(at::tensor({11.0f, -20.0f, 5.0f, 0.0f}), truth);
  REQUIRE(e);
  CHECK(*e == doctest::Approx(0.05));
  CHECK(*mean_relative_error(truth, truth) == 0.0);
  CHECK_FALSE(mean_relative_error(at::zeros({3}), at::zeros({3}, at::kDouble)));
  CHECK_FALSE(mean_relative_error(at::zeros({2}), at::zeros({3}, at::kDouble)));
}

TEST_CASE("the precision rules: explained by rounded inputs, or far above eager and the floor") {
  const GuardOptions o;
  // Honest fp32 (another summation order): near eager, nothing to explain.
  CHECK_FALSE(precision_lowered({4.1e-7, 4.0e-7, {}}, o));
  CHECK_FALSE(worth_explaining({4.1e-7, 4.0e-7, {}}, o));
  // fp16 inputs of a GEMM: 1100x eager, and a truth on rounded inputs explains it.
  CHECK(precision_lowered({4.8e-4, 4.1e-7, {{"inputs rounded to fp16/TF32", 4e-7}}}, o));
  // bf16 conv against eager's TF32 conv: only 8x, yet explained.
  const PrecisionErrors conv{3.8e-3, 4.8e-4, {{"inputs and parameters rounded to bf16", 4.5e-4}}};
  REQUIRE(worth_explaining(conv, o));
  const auto why = precision_lowered(conv, o);
  REQUIRE(why);
  CHECK(why->find("bf16") != std::string::npos);
  // The same errors without a matching hypothesis: 8x is within the ratio.
  CHECK_FALSE(precision_lowered({3.8e-3, 4.8e-4, {{"inputs rounded to bf16", 3.9e-3}}}, o));
  // Half-precision outputs or sums (no input hypothesis fits): far above eager and the floor.
  CHECK(precision_lowered({2.4e-4, 4e-7, {{"inputs rounded to fp16/TF32", 2.5e-4}}}, o));
  // Tiny errors are not judged on the ratio of two tiny numbers.
  CHECK_FALSE(precision_lowered({5e-5, 1e-7, {}}, o));
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
