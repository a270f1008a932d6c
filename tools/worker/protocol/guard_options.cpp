#include "worker/protocol/guard_options.h"

#include <array>
#include <stdexcept>

namespace kagent::worker {

namespace {
constexpr std::array kGuardNames{
    guard::kNoKernel,        guard::kLibraryShare,        guard::kOutputAliasesInput, guard::kLeftoverMemory,
    guard::kCachedResults,   guard::kSideStream,          guard::kInputsModified,     guard::kPrecisionLowered,
    guard::kShapeGeneralization, guard::kExcessiveSpeedup, guard::kTryExceptFallback, guard::kTorchOpsInForward,
    guard::kTimingTampered,  guard::kTorchPatched,        guard::kThreads,            guard::kInconsistent,
    guard::kStatefulModule,  guard::kCudnnBenchmark,      guard::kHostWork,           guard::kUnjoinedStream,
};

bool known(const std::string& name) {
  for (const char* n : kGuardNames)
    if (name == n) return true;
  return false;
}
}  // namespace

GuardOptions guard_options_from_json(const nlohmann::json& j) {
  GuardOptions o;
  if (j.is_null()) return o;
  if (j.is_boolean()) {
    o.enabled = j.get<bool>();
    return o;
  }
  if (!j.is_object()) throw std::invalid_argument("options.guards must be a bool or an object");
  o.enabled = j.value("enabled", o.enabled);
  for (const auto& name : j.value("disable", std::vector<std::string>{})) {
    if (!known(name)) throw std::invalid_argument("options.guards.disable: unknown guard '" + name + "'");
    o.disabled.insert(name);
  }
  o.library_share_min = j.value("library_share_min", o.library_share_min);
  o.library_min_us = j.value("library_min_us", o.library_min_us);
  o.side_stream_margin_us = j.value("side_stream_margin_us", o.side_stream_margin_us);
  o.side_stream_marker_margin_us = j.value("side_stream_marker_margin_us", o.side_stream_marker_margin_us);
  o.precision_ratio = j.value("precision_ratio", o.precision_ratio);
  o.precision_floor = j.value("precision_floor", o.precision_floor);
  o.precision_excess = j.value("precision_excess", o.precision_excess);
  o.precision_explained = j.value("precision_explained", o.precision_explained);
  o.precision_max_input_bytes = j.value("precision_max_input_bytes", o.precision_max_input_bytes);
  o.speedup_flag = j.value("speedup_flag", o.speedup_flag);
  o.seed_offset = j.value("seed_offset", o.seed_offset);
  o.unjoined_stream_check = j.value("unjoined_stream_check", o.unjoined_stream_check);
  return o;
}

void to_json(nlohmann::json& j, const GuardOptions& o) {
  j = {{"enabled", o.enabled},
       {"disable", o.disabled},
       {"library_share_min", o.library_share_min},
       {"library_min_us", o.library_min_us},
       {"side_stream_margin_us", o.side_stream_margin_us},
       {"side_stream_marker_margin_us", o.side_stream_marker_margin_us},
       {"precision_ratio", o.precision_ratio},
       {"precision_floor", o.precision_floor},
       {"precision_excess", o.precision_excess},
       {"precision_explained", o.precision_explained},
       {"precision_max_input_bytes", o.precision_max_input_bytes},
       {"speedup_flag", o.speedup_flag},
       {"seed_offset", o.seed_offset},
       {"unjoined_stream_check", o.unjoined_stream_check}};
}

void from_json(const nlohmann::json& j, GuardOptions& o) { o = guard_options_from_json(j); }

}  // namespace kagent::worker
