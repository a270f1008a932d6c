#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace kagent::cli {

namespace {
constexpr auto kAnnounceAfter = std::chrono::seconds(1);
}

Progress::Progress(std::string command, bool enabled) : command_(std::move(command)), enabled_(enabled) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

Progress::Step::Step(const Progress& progress, std::string doing)
    : progress_(progress), started_(std::chrono::steady_clock::now()) {
  if (!progress_.enabled_) return;
  watcher_ = std::jthread([this, doing = std::move(doing)](std::stop_token stop) {
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, stop, kAnnounceAfter, [] { return false; });
    if (stop.stop_requested()) return;
    std::fprintf(stderr, "kagent %s: %s ...\n", progress_.command_.c_str(), doing.c_str());
    announced_ = true;
  });
}

Progress::Step::~Step() { stop(); }

void Progress::Step::stop() {
  if (!watcher_.joinable()) return;
  watcher_.request_stop();
  watcher_.join();
}

void Progress::Step::done(const std::string& what) {
  stop();
  if (!announced_) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  std::fprintf(stderr, "%s\n", fmt::format("kagent {}: {} in {:.1f} s", progress_.command_, what, s).c_str());
}

}  // namespace kagent::cli
