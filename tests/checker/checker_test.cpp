// compare_output on real CPU tensors.
#include <cmath>
#include <limits>
#include <stdexcept>

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include "checker/compare.h"
#include "checker/tolerance.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using kagent::compare_output;
using kagent::OutputCheck;
using kagent::ToleranceConfig;
using Index = std::vector<int64_t>;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

at::Tensor arange_f32(int64_t n) { return at::arange(n, at::kFloat); }
}  // namespace

TEST_CASE("per-dtype default tolerances") {
  using c10::ScalarType;
  auto t = kagent::default_tolerance(ScalarType::Float);
  CHECK(t.atol == 1e-2);
  CHECK(t.rtol == 1e-2);
  t = kagent::default_tolerance(ScalarType::Half);
  CHECK(t.atol == 1e-2);
  CHECK(t.rtol == 1e-2);
  t = kagent::default_tolerance(ScalarType::BFloat16);
  CHECK(t.atol == 2e-2);
  CHECK(t.rtol == 2e-2);
  t = kagent::default_tolerance(ScalarType::Double);
  CHECK(t.atol == 1e-5);
  CHECK(t.rtol == 1e-5);
  for (auto dt : {ScalarType::Int, ScalarType::Long, ScalarType::Byte, ScalarType::Bool}) {
    t = kagent::default_tolerance(dt);
    CHECK(t.atol == 0);
    CHECK(t.rtol == 0);
  }
}

TEST_CASE("tolerance presets: KernelBench v0.1's 1e-2 by default, the 2025 harness's 1e-4 for fp32 by name") {
  using c10::ScalarType;
  ToleranceConfig v01;
  CHECK(v01.preset == "kernelbench-v0.1");
  CHECK(resolve_tolerance(v01, ScalarType::Float).atol == 1e-2);
  ToleranceConfig now{std::nullopt, std::nullopt, "kernelbench-2025"};
  CHECK(resolve_tolerance(now, ScalarType::Float).atol == 1e-4);
  CHECK(resolve_tolerance(now, ScalarType::Float).rtol == 1e-4);
  CHECK(resolve_tolerance(now, ScalarType::Half).atol == 1e-2);
  CHECK(resolve_tolerance(now, ScalarType::BFloat16).rtol == 1e-2);
  CHECK(resolve_tolerance(now, ScalarType::Double).atol == 1e-5);
  CHECK(resolve_tolerance(now, ScalarType::Long).atol == 0);
  now.atol = 3e-3;  // an override still wins
  CHECK(resolve_tolerance(now, ScalarType::Float).atol == 3e-3);
  CHECK(resolve_tolerance(now, ScalarType::Float).rtol == 1e-4);
  // A TF32-sized error passes v0.1 and fails 2025's.
  const at::Tensor expected = at::ones({4}, at::kFloat);
  const at::Tensor got = expected * (1 + 5e-4);
  CHECK(compare_output(got, expected, 0, v01).ok);
  CHECK_FALSE(compare_output(got, expected, 0, ToleranceConfig{std::nullopt, std::nullopt, "kernelbench-2025"}).ok);
  CHECK_THROWS_AS(resolve_tolerance(ToleranceConfig{std::nullopt, std::nullopt, "v9"}, ScalarType::Float),
                  std::invalid_argument);
}

TEST_CASE("tolerance overrides apply to floating dtypes only and are validated") {
  ToleranceConfig cfg;
  cfg.atol = 0.5;
  auto t = resolve_tolerance(cfg, c10::ScalarType::Float);
  CHECK(t.atol == 0.5);
  CHECK(t.rtol == 1e-2);  // not overridden
  cfg.rtol = 0;
  t = resolve_tolerance(cfg, c10::ScalarType::BFloat16);
  CHECK(t.atol == 0.5);
  CHECK(t.rtol == 0);
  t = resolve_tolerance(cfg, c10::ScalarType::Long);
  CHECK(t.atol == 0);
  CHECK(t.rtol == 0);
  cfg.atol = -1;
  CHECK_THROWS_AS(resolve_tolerance(cfg, c10::ScalarType::Float), std::invalid_argument);
  cfg.atol = kNaN;
  CHECK_THROWS_AS(resolve_tolerance(cfg, c10::ScalarType::Float), std::invalid_argument);
}

TEST_CASE("equal tensors pass") {
  const auto e = at::randn({4, 8});
  const OutputCheck r = compare_output(e.clone(), e, 2, {});
  CHECK(r.ok);
  CHECK(r.output == 2);
  CHECK(r.reason.empty());
  CHECK(r.message.empty());
  CHECK(r.mismatched == 0);
  CHECK(r.numel == 32);
  CHECK(r.max_abs_error == 0);
  CHECK(r.max_rel_error == 0);
  CHECK(r.atol == 1e-2);
  CHECK(r.rtol == 1e-2);
  CHECK(r.samples.empty());
  CHECK(r.worst_index.size() == 2);
}

TEST_CASE("small errors within tolerance pass and are still reported") {
  const auto e = at::ones({4, 4});
  auto g = e.clone();
  g[2][3] = 1.005f;
  const OutputCheck r = compare_output(g, e, 0, {});
  CHECK(r.ok);
  CHECK(r.mismatched == 0);
  CHECK(r.max_abs_error == doctest::Approx(0.005).epsilon(1e-4));
  CHECK(r.max_rel_error == doctest::Approx(0.005).epsilon(1e-4));
  CHECK(r.worst_index == Index{2, 3});
}

TEST_CASE("values off: errors, worst index, count and samples") {
  const auto e = arange_f32(60).reshape({3, 4, 5});
  auto g = e.clone();
  g[1][2][3] = 38.0f;   // flat 33, expected 33: abs 5, rel 5/33, tol 0.34 -> fails
  g[2][0][1] = 41.5f;   // flat 41, expected 41: abs 0.5, tol 0.42 -> fails
  g[0][0][0] = 0.005f;  // expected 0: within atol; no rel error where the reference is 0
  const OutputCheck r = compare_output(g, e, 1, {});
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "value_mismatch");
  CHECK(r.mismatched == 2);
  CHECK(r.numel == 60);
  CHECK(r.max_abs_error == doctest::Approx(5.0));
  CHECK(r.max_rel_error == doctest::Approx(5.0 / 33.0));
  CHECK(r.worst_index == Index{1, 2, 3});
  REQUIRE(r.samples.size() == 2);
  CHECK(r.samples[0].index == Index{1, 2, 3});
  CHECK(r.samples[0].got == 38.0);
  CHECK(r.samples[0].expected == 33.0);
  CHECK(r.samples[1].index == Index{2, 0, 1});
  CHECK(r.samples[1].got == 41.5);
  CHECK(r.samples[1].expected == 41.0);
  CHECK(r.message.find("2 of 60 elements (3.33%) outside tolerance") != std::string::npos);
  CHECK(r.message.find("[1, 2, 3]") != std::string::npos);
  MESSAGE(r.message);
}

TEST_CASE("relative error is reported only where the reference is larger than atol") {
  // A correct conv: a tiny absolute error next to a reference of ~1e-11 must not read as 1e4.
  const auto e = at::tensor({1e-11f, 1.0f, -2.0f});
  const auto g = at::tensor({1e-7f, 1.0001f, -2.0f});
  const OutputCheck r = compare_output(g, e, 0, {});
  CHECK(r.ok);
  CHECK(r.max_abs_error == doctest::Approx(1e-4).epsilon(1e-3));
  CHECK(r.max_rel_error == doctest::Approx(1e-4).epsilon(1e-2));
}

TEST_CASE("a large output is compared in chunks: counts, worst element and samples across chunk borders") {
  const int64_t n = (int64_t{1} << 25) + 7;  // two full chunks and a bit
  const auto e = at::zeros({n}, at::kFloat);
  auto g = e.clone();
  const int64_t marks[] = {3, (int64_t{1} << 24) - 1, int64_t{1} << 24, n - 1};
  const float values[] = {0.5f, 4.0f, 2.0f, 1.0f};
  for (int i = 0; i < 4; ++i) g[marks[i]] = values[i];
  const OutputCheck r = compare_output(g, e, 0, {}, 3);
  CHECK_FALSE(r.ok);
  CHECK(r.mismatched == 4);
  CHECK(r.max_abs_error == 4.0);
  CHECK(r.worst_index == Index{(int64_t{1} << 24) - 1});
  REQUIRE(r.samples.size() == 3);
  CHECK(r.samples[0].got == 4.0);
  CHECK(r.samples[1].index == Index{int64_t{1} << 24});
  CHECK(r.samples[2].got == 1.0);
  CHECK(r.numel == n);
}

TEST_CASE("worst index points at the worst failure, not at a larger error that is within tolerance") {
  auto e = at::tensor({1000.0f, 0.001f, 2.0f});
  auto g = at::tensor({1005.0f, 0.5f, 2.0f});  // 5 < 0.01 + 10 passes; 0.499 > 0.01 fails
  const OutputCheck r = compare_output(g, e, 0, {});
  CHECK_FALSE(r.ok);
  CHECK(r.mismatched == 1);
  CHECK(r.max_abs_error == doctest::Approx(5.0));
  CHECK(r.worst_index == Index{1});
}

TEST_CASE("samples are capped at max_samples; the count is not") {
  const auto e = at::zeros({10, 10});
  auto g = e + 1.0;
  g[7][3] = 9.0f;
  OutputCheck r = compare_output(g, e, 0, {}, 3);
  CHECK(r.mismatched == 100);
  REQUIRE(r.samples.size() == 3);
  CHECK(r.samples[0].index == Index{7, 3});
  CHECK(r.worst_index == Index{7, 3});
  r = compare_output(g, e, 0, {}, 0);
  CHECK_FALSE(r.ok);
  CHECK(r.samples.empty());
  CHECK(r.worst_index == Index{7, 3});
}

TEST_CASE("shape mismatch") {
  const OutputCheck r = compare_output(at::zeros({4, 8}), at::zeros({4, 16}), 0, {});
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "shape_mismatch");
  CHECK(r.message == "shape [4, 8] != expected [4, 16]");
  // Same numel, different shape is still a mismatch.
  CHECK(compare_output(at::zeros({8, 4}), at::zeros({4, 8}), 0, {}).reason == "shape_mismatch");
  // A 0-dim result where a 1-element vector is expected.
  const OutputCheck s = compare_output(at::scalar_tensor(1.0), at::ones({1}, at::kDouble), 0, {});
  CHECK(s.reason == "shape_mismatch");
  CHECK(s.message == "shape [] != expected [1]");
}

TEST_CASE("dtype mismatch") {
  const OutputCheck r = compare_output(at::zeros({4}, at::kHalf), at::zeros({4}, at::kFloat), 0, {});
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "dtype_mismatch");
  CHECK(r.message == "dtype torch.float16 != expected torch.float32");
}

TEST_CASE("undefined outputs") {
  CHECK(compare_output(at::Tensor(), at::zeros({2}), 0, {}).reason == "shape_mismatch");
  CHECK(compare_output(at::zeros({2}), at::Tensor(), 0, {}).reason == "shape_mismatch");
  CHECK(compare_output(at::Tensor(), at::Tensor(), 0, {}).ok);
}

TEST_CASE("NaN in the candidate fails as non_finite; NaN in both at the same place passes") {
  const auto e = at::ones({2, 3});
  auto g = e.clone();
  g[1][1] = kNaN;
  OutputCheck r = compare_output(g, e, 0, {});
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "non_finite");
  CHECK(r.mismatched == 1);
  CHECK(r.worst_index == Index{1, 1});
  REQUIRE(r.samples.size() == 1);
  CHECK(std::isnan(r.samples[0].got));
  CHECK(r.samples[0].expected == 1.0);
  CHECK(std::isfinite(r.max_abs_error));  // errors are over finite pairs (JSON-safe)
  CHECK(r.message.find("1 non-finite value where the reference is finite") != std::string::npos);

  auto e2 = e.clone();
  e2[1][1] = kNaN;
  r = compare_output(g, e2, 0, {});
  CHECK(r.ok);
  CHECK(r.mismatched == 0);

  // NaN in the reference only: the candidate differs, a plain value mismatch.
  r = compare_output(e, e2, 0, {});
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "value_mismatch");
  CHECK(r.mismatched == 1);

  // NaN at different places: both counted, the candidate's one is non_finite.
  auto g3 = e.clone();
  g3[0][0] = kNaN;
  r = compare_output(g3, e2, 0, {});
  CHECK(r.reason == "non_finite");
  CHECK(r.mismatched == 2);
}

TEST_CASE("Inf handling") {
  auto e = at::tensor({1.0, kInf, -kInf, 2.0, 5.0});
  // Same infinities: fine.
  CHECK(compare_output(e.clone(), e, 0, {}).ok);
  // Opposite infinity where the reference is infinite: a value mismatch.
  auto g = e.clone();
  g[1] = -kInf;
  OutputCheck r = compare_output(g, e, 0, {});
  CHECK(r.reason == "value_mismatch");
  CHECK(r.mismatched == 1);
  CHECK(r.worst_index == Index{1});
  // Finite where the reference is infinite: a value mismatch (not inf <= atol + rtol * inf).
  g = e.clone();
  g[2] = 1e30;
  r = compare_output(g, e, 0, {});
  CHECK(r.reason == "value_mismatch");
  CHECK(r.mismatched == 1);
  // Inf where the reference is finite: non_finite, counted, ranked first.
  g = e.clone();
  g[3] = kInf;
  g[4] = 6.0;
  r = compare_output(g, e, 0, {});
  CHECK(r.reason == "non_finite");
  CHECK(r.mismatched == 2);
  CHECK(r.worst_index == Index{3});
  CHECK(r.max_abs_error == doctest::Approx(1.0));
  REQUIRE(r.samples.size() == 2);
  CHECK(r.samples[0].index == Index{3});
  CHECK(r.samples[1].index == Index{4});
}

TEST_CASE("float64 uses 1e-5; float32 1e-2") {
  const auto e64 = at::ones({8}, at::kDouble);
  auto g64 = e64.clone();
  g64[5] = 1.0 + 1e-4;
  CHECK(compare_output(g64, e64, 0, {}).reason == "value_mismatch");
  g64[5] = 1.0 + 1e-5;  // within 1e-5 + 1e-5 * 1
  CHECK(compare_output(g64, e64, 0, {}).ok);
  CHECK(compare_output(g64.to(at::kFloat), e64.to(at::kFloat), 0, {}).ok);
  auto g32 = e64.to(at::kFloat);
  g32[5] = 1.019f;  // within 0.01 + 0.01 * 1
  CHECK(compare_output(g32, e64.to(at::kFloat), 0, {}).ok);
  g32[5] = 1.03f;
  CHECK(compare_output(g32, e64.to(at::kFloat), 0, {}).reason == "value_mismatch");
}

TEST_CASE("half and bfloat16 defaults") {
  // 1.5% off: fails half (1e-2) but passes bfloat16 (2e-2).
  const auto e = at::full({16}, 4.0);
  const auto g = e * 1.015;
  CHECK(compare_output(g.to(at::kHalf), e.to(at::kHalf), 0, {}).reason == "value_mismatch");
  const OutputCheck r = compare_output(g.to(at::kBFloat16), e.to(at::kBFloat16), 0, {});
  CHECK(r.ok);
  CHECK(r.atol == 2e-2);
  // One bfloat16 ulp apart (0.8% at 1.0) passes.
  const auto one = at::ones({4}, at::kBFloat16);
  CHECK(compare_output(at::full({4}, 1.0078125, at::kBFloat16), one, 0, {}).ok);
}

TEST_CASE("user overrides") {
  const auto e = at::zeros({3});
  const auto g = at::full({3}, 0.5f);
  CHECK_FALSE(compare_output(g, e, 0, {}).ok);
  ToleranceConfig loose;
  loose.atol = 1.0;
  OutputCheck r = compare_output(g, e, 0, loose);
  CHECK(r.ok);
  CHECK(r.atol == 1.0);
  CHECK(r.rtol == 1e-2);
  ToleranceConfig strict;
  strict.atol = 0;
  strict.rtol = 0;
  const auto x = at::full({3}, 1.5f);
  CHECK(compare_output(x.clone(), x, 0, strict).ok);
  CHECK(compare_output(x + 1e-6, x, 0, strict).reason == "value_mismatch");
  // bfloat16 override tighter than its default.
  ToleranceConfig tight;
  tight.atol = 1e-3;
  tight.rtol = 1e-3;
  const auto eb = at::ones({4}, at::kBFloat16);
  CHECK(compare_output(at::full({4}, 1.0078125, at::kBFloat16), eb, 0, tight).reason == "value_mismatch");
}

TEST_CASE("integers and bool are exact, even beyond 2^53") {
  const auto e = at::arange(10, at::kLong);
  auto g = e.clone();
  CHECK(compare_output(g, e, 0, {}).ok);
  g[4] = 5;
  OutputCheck r = compare_output(g, e, 0, {});
  CHECK(r.reason == "value_mismatch");
  CHECK(r.mismatched == 1);
  CHECK(r.max_abs_error == 1);
  CHECK(r.worst_index == Index{4});
  CHECK(r.message.find("exact match required") != std::string::npos);
  // Overrides do not loosen integer comparisons.
  ToleranceConfig loose;
  loose.atol = 10;
  CHECK_FALSE(compare_output(g, e, 0, loose).ok);

  const int64_t big = (int64_t{1} << 53) + 1;  // float64 rounds this to 2^53
  const auto eb = at::full({2}, big, at::kLong);
  CHECK(compare_output(eb - 1, eb, 0, {}).reason == "value_mismatch");

  const auto bools = at::tensor({1, 0, 1}).to(at::kBool);
  CHECK(compare_output(bools.clone(), bools, 0, {}).ok);
  CHECK(compare_output(bools.logical_not(), bools, 0, {}).mismatched == 3);
}

TEST_CASE("non-contiguous tensors: indices are logical") {
  const auto base = arange_f32(12).reshape({3, 4});
  const auto e = base.t();  // [4, 3], a transposed view
  auto g = e.contiguous();
  g[3][1] += 100.0f;
  const OutputCheck r = compare_output(g, e, 0, {});
  CHECK(r.mismatched == 1);
  CHECK(r.worst_index == Index{3, 1});
  REQUIRE(r.samples.size() == 1);
  CHECK(r.samples[0].expected == base[1][3].item<float>());
  // The candidate may be the non-contiguous one too.
  CHECK(compare_output(e, g.contiguous(), 0, {}).worst_index == Index{3, 1});
}

TEST_CASE("0-dim, empty, complex and requires_grad tensors") {
  OutputCheck r = compare_output(at::scalar_tensor(2.0f), at::scalar_tensor(1.0f), 0, {});
  CHECK(r.reason == "value_mismatch");
  CHECK(r.worst_index.empty());
  CHECK(r.max_abs_error == 1.0);

  r = compare_output(at::zeros({0, 5}), at::zeros({0, 5}), 0, {});
  CHECK(r.ok);
  CHECK(r.numel == 0);

  const auto c = at::complex(at::ones({3}), at::zeros({3}));
  CHECK(compare_output(c.clone(), c, 0, {}).ok);
  auto cg = c.clone();
  cg[1] = c10::complex<float>(1.0f, 1.0f);  // |diff| = 1
  r = compare_output(cg, c, 0, {});
  CHECK(r.reason == "value_mismatch");
  CHECK(r.max_abs_error == doctest::Approx(1.0));
  CHECK(r.worst_index == Index{1});

  const auto w = at::ones({3}).set_requires_grad(true);
  CHECK(compare_output(w * 2, w * 2, 0, {}).ok);
}

TEST_CASE("format helpers") {
  CHECK(kagent::format_shape({}) == "[]");
  CHECK(kagent::format_shape({4, 16}) == "[4, 16]");
  CHECK(kagent::format_dtype(c10::ScalarType::BFloat16) == "torch.bfloat16");
  CHECK(kagent::unravel_index(33, {3, 4, 5}) == Index{1, 2, 3});
  CHECK(kagent::unravel_index(0, {}) == Index{});
}
