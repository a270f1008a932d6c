// What /metrics reports, in Prometheus' text format: requests by route and status, evaluation
// latency histograms (steps, stateless evaluations), evaluations per second since start, GPU
// busy seconds per worker, how each GPU's timing lock was held (exclusive, shared, free), admitted
// evaluations against the queue bound, episodes open.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "evaluation/evaluation_pool.h"

namespace kagent::serve {

struct QueueState {
  size_t admitted = 0, limit = 0;   // evaluations in the server against the bound
  size_t async_queued = 0;          // async jobs not yet started
  size_t episodes_open = 0;
  size_t workers = 0;
  bool ready = false;
};

class ServerMetrics {
 public:
  static constexpr std::array<double, 13> kBuckets = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

  void count_request(const std::string& route, int status);
  // `kind`: "step" | "evaluate" | "reward"
  void observe(const std::string& kind, double seconds);
  std::string prometheus(const PoolCounters& pool, const QueueState& queue) const;

 private:
  struct Histogram {
    std::array<int64_t, kBuckets.size()> counts{};
    int64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace kagent::serve
