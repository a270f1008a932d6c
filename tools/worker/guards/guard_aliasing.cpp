#include "worker/guards/guard_aliasing.h"

#include <cstdint>

#include <fmt/format.h>

#include "worker/protocol/guard_options.h"

namespace kagent::worker {

namespace {
struct ByteRange {
  uintptr_t begin = 0, end = 0;
};

std::optional<ByteRange> storage_range(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return std::nullopt;
  const auto& storage = t.storage();
  const auto begin = reinterpret_cast<uintptr_t>(storage.data());
  if (begin == 0 || storage.nbytes() == 0) return std::nullopt;
  return ByteRange{begin, begin + storage.nbytes()};
}
}  // namespace

bool storages_overlap(const at::Tensor& a, const at::Tensor& b) {
  const auto ra = storage_range(a), rb = storage_range(b);
  if (!ra || !rb || a.device() != b.device()) return false;
  return ra->begin < rb->end && rb->begin < ra->end;
}

std::optional<GuardFinding> check_output_aliasing(const std::vector<at::Tensor>& outputs,
                                                  const std::vector<NamedTensor>& others) {
  for (size_t i = 0; i < outputs.size(); ++i)
    for (const auto& other : others)
      if (storages_overlap(outputs[i], other.tensor))
        return GuardFinding{guard::kOutputAliasesInput, kGuardReject,
                            fmt::format("output {} shares memory with {}: forward returned (a view of) it instead of "
                                        "a tensor of its own",
                                        i, other.name)};
  return std::nullopt;
}

}  // namespace kagent::worker
