// The progress of `kagent collect`: problems and samples done, in flight and failed,
// evaluations per GPU-minute, model tokens per second and the time left. On a terminal a
// block of lines redrawn twice a second; piped, one line per event (a sample recorded or
// stopped, a problem done or failed) with the counters; nothing with --quiet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "cli/live_view.h"
#include "collect/collection_runner.h"
#include "evaluation/evaluation_pool.h"

namespace kagent::cli {

class CollectView {
 public:
  // `counters`: the evaluation pool's, for evaluations per GPU-minute over `gpus` workers.
  CollectView(ViewMode mode, std::ostream& out, std::string header, std::function<PoolCounters()> counters, int gpus);
  ~CollectView();
  CollectView(const CollectView&) = delete;
  CollectView& operator=(const CollectView&) = delete;

  void on_event(const collect::CollectEvent& e);  // thread-safe
  void close();                                    // the last state stays on screen

  // The counters line, e.g. "samples 12/80 (in flight 8, stopped 0) | problems 3/40 (failed 1) | ...".
  std::string status_line();

 private:
  std::string status_locked() const;
  void draw_locked();

  ViewMode mode_;
  std::ostream& out_;
  std::function<PoolCounters()> counters_;
  int gpus_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::condition_variable wake_;
  bool closed_ = false;
  int drawn_lines_ = 0;
  std::string last_;
  int problems_ = 0, problems_done_ = 0, problems_failed_ = 0;
  int failed_now_ = 0, samples_per_problem_ = 0;
  int samples_ = 0, samples_before_ = 0, samples_done_ = 0, samples_started_ = 0, samples_stopped_ = 0,
      samples_failed_ = 0;
  int64_t completion_tokens_ = 0;
  PoolCounters pool_at_start_{};
  std::jthread redraw_;
};

}  // namespace kagent::cli
