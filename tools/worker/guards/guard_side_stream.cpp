#include "worker/guards/guard_side_stream.h"

#include <fmt/format.h>

#include "checker/compare.h"
#include "profiler/kernel_names.h"
#include "worker/protocol/guard_options.h"

namespace kagent::worker {

std::optional<GuardFinding> check_late_kernels(const std::vector<profiler::KernelRecord>& records, StreamEnd end,
                                               double margin_us) {
  const auto margin_ns = static_cast<uint64_t>(margin_us * 1e3);
  int late = 0;
  const profiler::KernelRecord* latest = nullptr;
  for (const auto& r : records) {
    if (r.end_ns <= end.ns + margin_ns) continue;
    ++late;
    if (!latest || r.end_ns > latest->end_ns) latest = &r;
  }
  if (!latest) return std::nullopt;
  return GuardFinding{
      guard::kSideStream, kGuardReject,
      fmt::format("{} kernel(s) still ran after forward returned: {} (CUPTI stream {}) ended {:.1f} us after {}", late,
                  profiler::short_kernel_name(latest->name, 60), latest->stream_id,
                  static_cast<double>(latest->end_ns - end.ns) * 1e-3,
                  end.gpu_marker ? "the current stream's next operation began on the GPU"
                                 : "the current stream was seen done")};
}

std::optional<GuardFinding> check_outputs_at_return(const std::vector<at::Tensor>& at_return,
                                                    const std::vector<at::Tensor>& expected, bool synced_ok,
                                                    const ToleranceConfig& tolerance) {
  if (!synced_ok) return std::nullopt;  // wrong either way: not this guard's finding
  for (size_t i = 0; i < at_return.size() && i < expected.size(); ++i) {
    const OutputCheck oc = compare_output(at_return[i], expected[i], static_cast<int>(i), tolerance);
    if (!oc.ok)
      return GuardFinding{guard::kSideStream, kGuardReject,
                          fmt::format("output {} was not ready when forward returned and the current stream was done "
                                      "({}); it matched only after a device-wide synchronisation",
                                      i, oc.message)};
  }
  return std::nullopt;
}

}  // namespace kagent::worker
