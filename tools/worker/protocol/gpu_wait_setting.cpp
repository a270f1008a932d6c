#include "worker/protocol/gpu_wait_setting.h"

#include <string_view>

namespace kagent::worker {

std::optional<GpuWait> parse_gpu_wait(const char* text) {
  if (!text || !*text) return GpuWait::Spin;
  const std::string_view t(text);
  if (t == "spin") return GpuWait::Spin;
  if (t == "yield") return GpuWait::Yield;
  if (t == "block") return GpuWait::Block;
  return std::nullopt;
}

std::string_view gpu_wait_name(GpuWait w) {
  switch (w) {
    case GpuWait::Yield:
      return "yield";
    case GpuWait::Block:
      return "block";
    case GpuWait::Spin:
      break;
  }
  return "spin";
}

}  // namespace kagent::worker
