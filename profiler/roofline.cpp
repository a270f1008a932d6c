#include "profiler/roofline.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kagent::profiler {

using nlohmann::json;

namespace {

double num(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

// 3 significant digits in the unit that keeps the number between 1 and 1000.
std::string si(double v, const char* unit) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

}  // namespace

FlopCounts flops_from(double fadd, double fmul, double ffma, double dadd, double dmul, double dfma, double hadd,
                      double hmul, double hfma) {
  return {fadd + fmul + 2.0 * ffma, dadd + dmul + 2.0 * dfma, hadd + hmul + 2.0 * hfma};
}

json roofline_json(const FlopCounts& f, double bytes, double duration_ns, const std::optional<RooflinePeaks>& peaks) {
  if (bytes <= 0 || duration_ns <= 0) return nullptr;
  const double intensity = f.total() / bytes;
  const double achieved = f.total() / duration_ns;  // FLOP per ns = GFLOP/s
  json j = {{"flops", f.total()},     {"fp32_flops", f.fp32}, {"fp64_flops", f.fp64}, {"fp16_flops", f.fp16},
            {"dram_bytes", bytes},    {"intensity", intensity}, {"achieved_gflops", achieved}};
  if (!peaks || peaks->dram_bytes_per_s <= 0) return j;
  const bool fp64 = f.fp64 > f.fp32;
  const double peak_flops = fp64 ? peaks->fp64_flops_per_s : peaks->fp32_flops_per_s;
  if (peak_flops <= 0) return j;
  const double peak_gflops = peak_flops * 1e-9, peak_gbps = peaks->dram_bytes_per_s * 1e-9;
  const double ridge = peak_gflops / peak_gbps;
  const double attainable = std::min(peak_gflops, intensity * peak_gbps);
  j["precision"] = fp64 ? "fp64" : "fp32";
  j["peak_gflops"] = peak_gflops;
  j["peak_gbps"] = peak_gbps;
  j["ridge"] = ridge;
  j["side"] = intensity < ridge ? "memory" : "compute";
  j["attainable_gflops"] = attainable;
  j["pct_of_attainable"] = attainable > 0 ? 100.0 * achieved / attainable : 0.0;
  j["dram_basis"] = peaks->dram_basis;
  return j;
}

std::string roofline_line(const std::string& name, const json& r) {
  if (!r.is_object()) return "";
  std::string precision = "fp32";
  if (num(r, "fp64_flops") > num(r, "fp32_flops")) precision = "fp64";
  std::string s = fmt::format("roofline {}: {} {}, {} DRAM, {:.3g} FLOP/B, {}", name, si(num(r, "flops"), "FLOP"),
                              precision, si(num(r, "dram_bytes"), "B"), num(r, "intensity"),
                              si(num(r, "achieved_gflops") * 1e9, "FLOP/s"));
  if (r.contains("side"))
    s += fmt::format(" = {:.0f}% of attainable ({} side of the ridge at {:.3g} FLOP/B)", num(r, "pct_of_attainable"),
                     r["side"].get<std::string>(), num(r, "ridge"));
  return s + "\n";
}

}  // namespace kagent::profiler
