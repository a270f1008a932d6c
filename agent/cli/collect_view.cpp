#include "cli/collect_view.h"

#include <fmt/format.h>

#include "cli/errors.h"

namespace kagent::cli {

namespace {

std::string duration(double s) {
  if (s < 0) return "-";
  const auto t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t / 60) % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

CollectView::CollectView(ViewMode mode, std::ostream& out, std::string header, std::function<PoolCounters()> counters,
                         int gpus)
    : mode_(mode), out_(out), counters_(std::move(counters)), gpus_(std::max(1, gpus)) {
  if (counters_) pool_at_start_ = counters_();
  if (mode_ == ViewMode::Quiet) return;
  out_ << header << "\n";
  out_.flush();
  if (mode_ == ViewMode::Table)
    redraw_ = std::jthread([this] {
      std::unique_lock lock(mu_);
      while (!closed_) {
        draw_locked();
        wake_.wait_for(lock, std::chrono::milliseconds(500));
      }
    });
}

CollectView::~CollectView() { close(); }

void CollectView::close() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  wake_.notify_all();
  if (redraw_.joinable()) redraw_.join();
  std::lock_guard lock(mu_);
  if (mode_ == ViewMode::Table) draw_locked();
}

std::string CollectView::status_line() {
  std::lock_guard lock(mu_);
  return status_locked();
}

std::string CollectView::status_locked() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const PoolCounters now = counters_ ? counters_() : PoolCounters{};
  const double evals = static_cast<double>(now.evaluations - pool_at_start_.evaluations);
  const double per_gpu_minute = elapsed > 0 ? evals / (gpus_ * elapsed / 60.0) : 0;
  const int in_flight = samples_started_ - samples_done_ - samples_stopped_ - samples_failed_;
  const int left = samples_ - samples_before_ - samples_done_;
  const double rate = elapsed > 0 ? samples_done_ / elapsed : 0;
  return fmt::format(
      "samples {}/{} (in flight {}, stopped {}{}) | problems {}/{} (failed {}) | {:.0f} evals, {:.1f}/GPU-min | "
      "{:.0f} tok/s | {} elapsed, {} left",
      samples_before_ + samples_done_, samples_, in_flight, samples_stopped_,
      samples_failed_ ? fmt::format(", failed {}", samples_failed_) : std::string(), problems_done_, problems_, problems_failed_,
      evals, per_gpu_minute, elapsed > 0 ? static_cast<double>(completion_tokens_) / elapsed : 0.0, duration(elapsed),
      left <= 0 ? std::string("0s") : rate > 0 ? fmt::format("~{}", duration(left / rate)) : std::string("-"));
}

void CollectView::draw_locked() {
  if (drawn_lines_ > 0) out_ << fmt::format("\x1b[{}A\x1b[J", drawn_lines_);
  out_ << status_locked() << "\n";
  drawn_lines_ = 1;
  if (!last_.empty()) {
    out_ << "last    " << last_ << "\n";
    drawn_lines_ = 2;
  }
  out_.flush();
}

void CollectView::on_event(const collect::CollectEvent& e) {
  using Kind = collect::CollectEvent::Kind;
  std::lock_guard lock(mu_);
  std::string line;
  switch (e.kind) {
    case Kind::Plan:
      problems_ = e.problems;
      samples_ = e.samples;
      samples_per_problem_ = e.samples_per_problem;
      samples_before_ = e.samples_done_before;
      problems_done_ = e.problems_done_before;
      problems_failed_ = e.problems_failed_before + failed_now_;
      return;
    case Kind::ProblemFailed:
      ++problems_failed_;
      ++failed_now_;
      samples_ -= samples_per_problem_;  // its samples never run
      line = fmt::format("{}: cannot run: {}", e.problem, plain_message(e.note));
      break;
    case Kind::SampleStarted: ++samples_started_; return;
    case Kind::Turn:
      if (e.turn) completion_tokens_ += e.turn->tokens.completion;
      return;
    case Kind::SampleRecorded: {
      ++samples_done_;
      std::string best = "no correct turn";
      if (e.trajectory) {
        for (const auto& t : e.trajectory->turns)
          if (e.trajectory->best_turn && t.index == *e.trajectory->best_turn) best = "best " + turn_cell(t);
        if (!e.trajectory->best_turn && !e.trajectory->turns.empty()) best = "last " + turn_cell(e.trajectory->turns.back());
      }
      line = fmt::format("{} sample {}: {} turn(s), {}", e.problem, e.sample,
                         e.trajectory ? e.trajectory->turns.size() : 0, best);
      break;
    }
    case Kind::SampleStopped:
      ++samples_stopped_;
      line = fmt::format("{} sample {} stopped: {}", e.problem, e.sample, e.note);
      break;
    case Kind::SampleFailed:
      ++samples_failed_;
      line = fmt::format("{} sample {} failed: {}", e.problem, e.sample, plain_message(e.note));  // an exception's text
      break;
    case Kind::ProblemDone:
      ++problems_done_;
      return;
  }
  last_ = line;
  if (mode_ == ViewMode::Lines) {
    out_ << line << "  [" << status_locked() << "]\n";
    out_.flush();
  } else if (mode_ == ViewMode::Table && (e.kind == Kind::ProblemFailed || e.kind == Kind::SampleFailed)) {
    // Failures stay on screen above the redrawn block.
    if (drawn_lines_ > 0) out_ << fmt::format("\x1b[{}A\x1b[J", drawn_lines_);
    out_ << line << "\n";
    drawn_lines_ = 0;
    draw_locked();
  }
}

}  // namespace kagent::cli
