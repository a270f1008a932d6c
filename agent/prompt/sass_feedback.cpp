#include "prompt/sass_feedback.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include "profiler/kernel_names.h"
#include "prompt/feedback.h"

namespace kagent::prompt {

namespace {

using nlohmann::json;

constexpr size_t kNameChars = 60;

std::string name_of(const SassKernel& k) {
  return profiler::short_kernel_name(k.kernel.empty() ? k.mangled : k.kernel, kNameChars);
}

// "3x128-bit, 1x32-bit", widest first.
std::string widths(const std::map<std::string, int>& by_width) {
  std::vector<std::pair<int, int>> w;
  for (const auto& [bits, n] : by_width) w.emplace_back(std::atoi(bits.c_str()), n);
  std::sort(w.rbegin(), w.rend());
  std::string out;
  for (const auto& [bits, n] : w) out += fmt::format("{}{}x{}-bit", out.empty() ? "" : ", ", n, bits);
  return out;
}

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// One line, at most `bytes` long (cut_text's marker kept on the same line).
std::string cut_line(const std::string& line, size_t bytes) {
  std::string s = cut_text(line, 1, bytes);
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// The profile's bound call for a kernel (by mangled name), else the candidate's as a whole.
std::string bound_of(const json& profile, const SassKernel& k) {
  if (!profile.is_object()) return "";
  if (profile.contains("kernels") && profile["kernels"].is_array())
    for (const auto& row : profile["kernels"])
      if (row.value("mangled", "") == k.mangled && row.contains("bound") && row["bound"].is_object())
        return row["bound"].value("class", "");
  if (profile.contains("bound") && profile["bound"].is_object()) return profile["bound"].value("class", "");
  return "";
}

}  // namespace

std::string sass_kernel_line(const SassKernel& k) {
  std::string s = fmt::format("{} ({} registers, {} B shared, {} B local): {} instructions", name_of(k), k.registers,
                              k.shared_bytes, k.local_bytes, k.instructions);
  if (!k.global_loads.empty()) s += "; global loads " + widths(k.global_loads);
  if (!k.global_stores.empty()) s += "; global stores " + widths(k.global_stores);
  if (!k.shared_loads.empty()) s += "; shared loads " + widths(k.shared_loads);
  if (!k.shared_stores.empty()) s += "; shared stores " + widths(k.shared_stores);
  if (k.ldmatrix) s += "; " + plural(k.ldmatrix, "LDSM", "LDSM");
  if (k.async_copies) s += "; " + plural(k.async_copies, "async copy", "async copies") + " (cp.async/TMA)";
  if (k.atomics) s += "; " + plural(k.atomics, "atomic", "atomics");
  if (k.ffma || k.fmul || k.fadd) s += fmt::format("; FP32 {} FFMA, {} FMUL, {} FADD", k.ffma, k.fmul, k.fadd);
  if (k.fp16) s += fmt::format("; FP16x2 {}", k.fp16);
  if (k.fp64) s += fmt::format("; FP64 {}", k.fp64);
  if (k.tensor.empty()) {
    s += "; no tensor-core instruction";
  } else {
    std::string t;
    for (const auto& [op, n] : k.tensor) t += fmt::format("{}{} {}", t.empty() ? "" : ", ", n, op);
    s += "; tensor cores: " + t;
  }
  s += "; " + plural(k.branches, "branch", "branches");
  if (k.loops) s += " (" + plural(k.loops, "loop", "loops") + ")";
  if (k.barriers) s += "; " + plural(k.barriers, "barrier", "barriers");
  if (k.local_loads || k.local_stores)
    s += fmt::format("; local memory {} loads, {} stores ({} inside loops)", k.local_loads, k.local_stores,
                     k.local_in_loops);
  return s;
}

bool gemm_shaped(const ProblemSpec& spec) {
  static const std::regex re(
      R"((torch\.(matmul|mm|bmm|addmm|baddbmm|einsum|tensordot)\b|nn\.(Linear|Bilinear|Conv[123]d|ConvTranspose[123]d)\b|F\.(linear|conv[123]d|conv_transpose[123]d)\b|\s@\s))");
  return std::regex_search(spec.source, re);
}

std::vector<std::string> sass_findings(const EvalResult& r, const ProblemSpec* spec) {
  std::vector<std::string> out;
  if (!r.compile || !r.compile->sass || !r.compile->sass->available) return out;
  const auto& kernels = r.compile->sass->kernels;
  for (const auto& k : kernels)
    if (bound_of(r.profile, k) == "memory" && k.vector_global_accesses() == 0 && k.scalar_global_accesses() > 0)
      out.push_back(fmt::format(
          "{} is memory-bound but all its {} global loads/stores are 32-bit or narrower: use 128-bit accesses "
          "(float4 or similar on 16-byte-aligned data) to move more bytes per instruction",
          name_of(k), k.scalar_global_accesses()));
  if (spec && gemm_shaped(*spec)) {
    bool tensor = false;
    for (const auto& k : kernels) tensor = tensor || k.tensor_instructions() > 0;
    if (!tensor)
      out.push_back(
          "the problem is a matrix product or convolution, but no kernel uses tensor cores (no HMMA/IMMA/HGMMA "
          "instruction): WMMA, mma.sync or wgmma would use them (TF32 for fp32 inputs, if the tolerance allows)");
  }
  for (const auto& k : kernels)
    if (k.local_in_loops > 0)
      out.push_back(fmt::format("{} spills inside its hot loop: {} local-memory loads/stores (LDL/STL) inside loops; "
                                "reduce register pressure (fewer live values, smaller unrolling, __launch_bounds__)",
                                name_of(k), k.local_in_loops));
  return out;
}

json sass_variables(const EvalResult& r, const ProblemSpec* spec, const SassFeedbackLimits& limits) {
  if (!r.compile || !r.compile->sass) return false;
  const SassInfo& s = *r.compile->sass;
  json v = {{"arch", s.arch},
            {"missing", s.available ? "" : cut_line(s.missing_reason.empty() ? "unknown reason" : s.missing_reason,
                                                     limits.line_bytes)},
            {"kernels", json::array()},
            {"kernels_more", false},
            {"findings", json::array()}};
  if (!s.available) return v;
  for (size_t i = 0; i < s.kernels.size() && i < limits.kernels; ++i)
    v["kernels"].push_back({{"line", cut_line(sass_kernel_line(s.kernels[i]), limits.line_bytes)}});
  if (s.kernels.size() > limits.kernels) v["kernels_more"] = s.kernels.size() - limits.kernels;
  const auto findings = sass_findings(r, spec);
  for (size_t i = 0; i < findings.size() && i < limits.findings; ++i)
    v["findings"].push_back({{"text", cut_line(findings[i], limits.line_bytes)}});
  return v;
}

}  // namespace kagent::prompt
