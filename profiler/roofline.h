// FLOPs, DRAM bytes, arithmetic intensity and a kernel's place against the GPU's roofline,
// as Nsight Compute's roofline section computes them: FLOPs = add + mul + 2 * fma of the
// thread-level FP instruction counters per precision (CUDA cores; tensor-core work is not
// counted), bytes = DRAM read + write, peaks = per-cycle peaks times the clocks of the run.
// Pure (library kagent_profile_text): the builder feeds it summed counters.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent::profiler {

struct FlopCounts {
  double fp32 = 0, fp64 = 0, fp16 = 0;
  double total() const { return fp32 + fp64 + fp16; }
};

// FLOPs from instruction counts: add + mul + 2 * fma.
FlopCounts flops_from(double fadd, double fmul, double ffma, double dadd, double dmul, double dfma, double hadd,
                      double hmul, double hfma);

struct RooflinePeaks {
  double fp32_flops_per_s = 0;  // 2 * ffma peak per cycle * SM clock
  double fp64_flops_per_s = 0;
  double dram_bytes_per_s = 0;  // DRAM bytes peak per cycle * DRAM clock
  std::string dram_basis;       // "counters" or "measured copy bandwidth"
};

// The roofline JSON of one kernel (or a sum of kernels): null without FLOP counters or bytes.
//   {flops, fp32_flops, fp64_flops, fp16_flops, dram_bytes, intensity (FLOP/byte), achieved_gflops,
//    precision ("fp32" | "fp64": the larger share, whose peak is the roof), peak_gflops, peak_gbps,
//    ridge (FLOP/byte where the roofs meet), side ("memory" left of the ridge, "compute" right),
//    attainable_gflops (min(peak, intensity * bandwidth)), pct_of_attainable, dram_basis}
// Without peaks only the counts, intensity and achieved rate are given.
nlohmann::json roofline_json(const FlopCounts& flops, double dram_bytes, double duration_ns,
                             const std::optional<RooflinePeaks>& peaks);

// One line of the profile text: "roofline <name>: 1.07 GFLOP fp32, 268 MB DRAM, 4.0 FLOP/B,
// 420 GFLOP/s = 83% of attainable (memory side of the ridge at 14.6 FLOP/B)".
std::string roofline_line(const std::string& name, const nlohmann::json& roofline);

}  // namespace kagent::profiler
