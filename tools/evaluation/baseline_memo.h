// A problem's baselines measured once per process. Requests for a problem whose baselines are
// being measured wait for that measurement instead of timing the reference again on another
// worker (a collection opens many samples, and problems whose files are identical, at once: 127
// measurements for 99 distinct problems over the 149 real answers before this). And an
// evaluation on another worker is told the eager time this process measured with the GPU to
// itself: the cached entry it reads then needs no re-check (worker/service/baselines.cpp); the
// re-check is for entries of an earlier run, measured under contention or doctored.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "result/eval_result.h"

namespace kagent {

class BaselineMemo {
 public:
  using Measure = std::function<std::optional<Timing>()>;

  // The baselines for `key` (the problem's baseline cache key: its file, the device, the
  // options): measured by `measure` on the first call, the first call's result on the others
  // (waiting for it while it runs; marked as a cache hit). A failed measurement (nullopt or an
  // exception) is not kept: the next call measures again.
  std::optional<Timing> get(const std::string& key, const Measure& measure);

  // The eager median this process measured for `key` with the GPU to itself, if any.
  std::optional<double> trusted_eager_ms(const std::string& key) const;

  // Baselines an evaluation measured in its own exclusive hold (its `baselines` phase, where
  // nothing measured them first: a collection whose prompts carry no times): kept as if `get`
  // had measured them, so that the evaluations on other workers are told the eager time and do
  // not re-check it. Only a measurement (not a cache hit), with an eager time, not taken beside
  // another process; a key already held (measured, or being measured) is left as it is.
  void note_measured(const std::string& key, const Timing& t);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_future<std::optional<Timing>>> entries_;
};

}  // namespace kagent
