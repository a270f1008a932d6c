#include "evaluation/baseline_memo.h"

#include <chrono>
#include <exception>

namespace kagent {

std::optional<Timing> BaselineMemo::get(const std::string& key, const Measure& measure) {
  std::unique_lock lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    std::shared_future<std::optional<Timing>> first = it->second;
    lock.unlock();
    std::optional<Timing> t = first.get();  // rethrows the first call's exception
    if (t) {
      t->baseline_cache_hit = true;  // not measured again (and not a row of its own in the baselines table)
      t->baseline_recheck.reset();
    }
    return t;
  }
  std::promise<std::optional<Timing>> promise;
  entries_.emplace(key, promise.get_future().share());
  lock.unlock();
  const auto forget = [&] {
    const std::lock_guard again(mu_);
    entries_.erase(key);
  };
  std::optional<Timing> t;
  try {
    t = measure();
  } catch (...) {
    forget();
    promise.set_exception(std::current_exception());
    throw;
  }
  if (!t) forget();
  promise.set_value(t);
  return t;
}

std::optional<double> BaselineMemo::trusted_eager_ms(const std::string& key) const {
  const std::lock_guard lock(mu_);
  const auto it = entries_.find(key);
  if (it == entries_.end() || it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return std::nullopt;
  try {
    const std::optional<Timing>& t = it->second.get();
    if (!t || !t->eager || (t->contention && t->contention->shared)) return std::nullopt;
    return t->eager->median_ms;
  } catch (...) {
    return std::nullopt;
  }
}

void BaselineMemo::note_measured(const std::string& key, const Timing& t) {
  if (t.baseline_cache_hit || !t.eager || (t.contention && t.contention->shared)) return;
  Timing kept;  // the reference's times only: the candidate's are not the problem's
  kept.eager = t.eager;
  kept.compiled = t.compiled;
  kept.contention = t.contention;
  std::promise<std::optional<Timing>> promise;
  promise.set_value(std::move(kept));
  const std::lock_guard lock(mu_);
  entries_.try_emplace(key, promise.get_future().share());
}

}  // namespace kagent
