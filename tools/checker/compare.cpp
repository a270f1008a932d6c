#include "checker/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>
#include <cstdio>

#include <fmt/format.h>

namespace kagent {

std::string format_shape(c10::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

std::string format_dtype(c10::ScalarType dtype) {
  return "torch." + c10::getDtypeNames(dtype).first;
}

std::vector<int64_t> unravel_index(int64_t flat, c10::IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] <= 0) continue;
    idx[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return idx;
}

namespace {

// No fmt here: in torch-linked targets <fmt/format.h> resolves to torch's bundled fmt
// (another major version than the libfmt the project links), so it would not link.
std::string fmt_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string fmt_index(const std::vector<int64_t>& idx) { return format_shape(idx); }

// "12.5%", "0.0001%": the share of failing elements, small ones still visible.
std::string fmt_share(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// Elements compared per chunk: 16M, so a chunk's float64 temporaries take about 1 GB.
constexpr int64_t kCompareChunk = int64_t{1} << 24;

}  // namespace

OutputCheck compare_output(const at::Tensor& got_in, const at::Tensor& expected_in, int output_index,
                           const ToleranceConfig& tolerances, int max_samples) {
  OutputCheck r;
  r.output = output_index;

  if (!expected_in.defined() || !got_in.defined()) {
    if (expected_in.defined() == got_in.defined()) return r;  // both None
    r.ok = false;
    r.reason = reason::kShape;
    r.message = got_in.defined() ? "got a tensor of shape " + format_shape(got_in.sizes()) + ", expected None"
                                 : "got None, expected a tensor of shape " + format_shape(expected_in.sizes());
    return r;
  }
  // No autograd graph for the comparison's temporaries.
  const at::Tensor expected = expected_in.detach();
  const c10::ScalarType dtype = expected.scalar_type();
  const Tolerance tol = resolve_tolerance(tolerances, dtype);
  r.atol = tol.atol;
  r.rtol = tol.rtol;
  r.numel = expected.numel();

  if (got_in.sizes() != expected.sizes()) {
    r.ok = false;
    r.reason = reason::kShape;
    r.message = "shape " + format_shape(got_in.sizes()) + " != expected " + format_shape(expected.sizes());
    return r;
  }
  if (got_in.scalar_type() != dtype) {
    r.ok = false;
    r.reason = reason::kDtype;
    r.message = "dtype " + format_dtype(got_in.scalar_type()) + " != expected " + format_dtype(dtype);
    return r;
  }
  if (r.numel == 0) return r;

  at::Tensor got = got_in.detach();
  if (got.device() != expected.device()) got = got.to(expected.device());

  const bool is_complex = c10::isComplexType(dtype);
  const bool exact = !(c10::isFloatingType(dtype) || is_complex);
  const auto wide = is_complex ? at::kComplexDouble : at::kDouble;
  // Flat views (a copy only for a non-contiguous tensor), compared a chunk at a time: the
  // float64 temporaries of one chunk stay small however large the output (a 6.4 GB output
  // compared whole would take a dozen float64 copies of itself).
  const at::Tensor got_flat = got.reshape(-1);
  const at::Tensor exp_flat = expected.reshape(-1);
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t k = std::max(max_samples, 1);
  double max_abs = 0, max_rel = 0;
  int64_t nonfinite = 0;
  double best_score = -inf;
  int64_t best_index = 0;
  std::vector<std::pair<double, int64_t>> candidates;  // (score, flat index) of failing elements, the worst k per chunk

  for (int64_t start = 0; start < r.numel; start += kCompareChunk) {
    const int64_t len = std::min(kCompareChunk, r.numel - start);
    const at::Tensor gc = got_flat.narrow(0, start, len);
    const at::Tensor ec = exp_flat.narrow(0, start, len);
    const at::Tensor g = gc.to(wide);
    const at::Tensor e = ec.to(wide);
    const at::Tensor diff = g.sub(e).abs();  // real; NaN/inf where either side is non-finite
    const at::Tensor mag = e.abs();
    const at::Tensor g_fin = g.isfinite();
    const at::Tensor e_fin = e.isfinite();
    const at::Tensor both_fin = g_fin.logical_and(e_fin);

    at::Tensor ok_elem;
    if (exact) {
      // Native comparison: int64 values beyond 2^53 would collide in float64.
      ok_elem = gc.eq(ec);
    } else {
      // Restricted to finite pairs: inf <= atol + rtol * inf would otherwise pass.
      const at::Tensor within = both_fin.logical_and(diff.le(mag.mul(tol.rtol).add(tol.atol)));
      const at::Tensor same_nonfinite =
          both_fin.logical_not().logical_and(g.eq(e).logical_or(g.isnan().logical_and(e.isnan())));
      ok_elem = within.logical_or(same_nonfinite);
    }
    const at::Tensor bad = ok_elem.logical_not();
    const at::Tensor nonfinite_bad = bad.logical_and(g_fin.logical_not()).logical_and(e_fin);
    const at::Tensor diff_f = at::where(both_fin, diff, 0.0);
    // Relative error only where the reference is larger than atol: near zero only the absolute
    // error means anything (a correct conv's 1e-7 against a reference of 1e-11 is not "1e4").
    const at::Tensor rel_f = at::where(both_fin.logical_and(mag.gt(std::max(tol.atol, 0.0))), diff.div(mag), 0.0);
    // Ranking of elements: non-finite mismatches first, then by absolute error.
    const at::Tensor score = at::where(bad.logical_and(both_fin.logical_not()), inf, diff_f);

    // One small device->host copy per chunk for its scalar results.
    const at::Tensor stats = at::stack({diff_f.max(), rel_f.max(), bad.sum().to(at::kDouble),
                                        nonfinite_bad.sum().to(at::kDouble), score.max(), score.argmax().to(at::kDouble)})
                                 .cpu();
    const double* st = stats.const_data_ptr<double>();
    max_abs = std::max(max_abs, st[0]);
    max_rel = std::max(max_rel, st[1]);
    const auto chunk_bad = static_cast<int64_t>(st[2]);
    r.mismatched += chunk_bad;
    nonfinite += static_cast<int64_t>(st[3]);
    if (st[4] > best_score) {
      best_score = st[4];
      best_index = start + static_cast<int64_t>(st[5]);
    }
    if (chunk_bad > 0) {
      const int64_t kc = std::min(k, chunk_bad);
      auto [vals, idx] = at::where(bad, score, -inf).topk(kc);
      const at::Tensor picked = at::stack({vals, idx.to(at::kDouble)}).cpu();
      const double* pv = picked.const_data_ptr<double>();
      for (int64_t i = 0; i < kc; ++i) candidates.emplace_back(pv[i], start + static_cast<int64_t>(pv[kc + i]));
    }
  }
  r.max_abs_error = max_abs;
  r.max_rel_error = max_rel;
  r.worst_index = unravel_index(best_index, expected.sizes());
  if (r.mismatched == 0) return r;

  // The worst failing elements over all chunks, worst first; worst_index points at the worst.
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (static_cast<int64_t>(candidates.size()) > k) candidates.resize(static_cast<size_t>(k));
  std::vector<Mismatch> worst;
  for (const auto& [score, flat] : candidates) {
    const at::Tensor gv = got_flat.narrow(0, flat, 1).to(wide), ev = exp_flat.narrow(0, flat, 1).to(wide);
    const at::Tensor both = at::stack({is_complex ? gv.abs() : gv, is_complex ? ev.abs() : ev}).cpu();
    const double* v = both.const_data_ptr<double>();
    worst.push_back({unravel_index(flat, expected.sizes()), v[0], v[1]});
  }
  r.worst_index = worst[0].index;
  r.ok = false;
  const std::string where_worst = "worst at " + fmt_index(worst[0].index) + ": got " + fmt_value(worst[0].got) +
                                  ", expected " + fmt_value(worst[0].expected);
  const std::string tol_text =
      exact ? std::string("exact match required") : "atol " + fmt_value(tol.atol) + ", rtol " + fmt_value(tol.rtol);
  const std::string outside = std::to_string(r.mismatched) + " of " + std::to_string(r.numel) + " elements (" +
                              fmt_share(r.mismatched, r.numel) + ") outside tolerance (" + tol_text + "); " +
                              where_worst;
  if (nonfinite > 0) {
    r.reason = reason::kNonFinite;
    r.message = std::to_string(nonfinite) + " non-finite value" + (nonfinite == 1 ? "" : "s") +
                " where the reference is finite; " + outside;
  } else {
    r.reason = reason::kValues;
    r.message = outside + "; max abs error " + fmt_value(r.max_abs_error) + ", max rel error " +
                fmt_value(r.max_rel_error) + " (where |expected| > atol)";
  }
  if (max_samples < static_cast<int>(worst.size())) worst.resize(static_cast<size_t>(std::max(max_samples, 0)));
  r.samples = std::move(worst);
  return r;
}

std::optional<OutputCheck> output_count_mismatch(size_t got, size_t expected) {
  if (got == expected) return std::nullopt;
  OutputCheck oc;
  oc.ok = false;
  oc.reason = reason::kOutputCount;
  oc.message = fmt::format("forward returned {} output(s), expected {}", got, expected);
  return oc;
}

std::optional<OutputCheck> first_mismatch(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                                          const ToleranceConfig& tolerance) {
  if (auto count = output_count_mismatch(got.size(), expected.size())) return count;
  for (size_t i = 0; i < expected.size(); ++i) {
    OutputCheck oc = compare_output(got[i], expected[i], static_cast<int>(i), tolerance);
    if (!oc.ok) return oc;
  }
  return std::nullopt;
}

std::vector<at::Tensor> clone_tensors(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.defined() ? t.clone() : t);
  return out;
}

}  // namespace kagent
