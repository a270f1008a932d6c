#include "cli/live_view.h"

#include <fmt/format.h>

namespace kagent::cli {

namespace {
// The cells of a turn in flight; none may outlive the run (close()).
constexpr const char* kAsking = "model..";
constexpr const char* kEvaluating = "eval..";
}  // namespace

std::string turn_cell(const traj::Turn& t) {
  if (t.error) return t.error->kind == traj::turn_error::kFormat ? "format" : t.error->kind;
  if (!t.eval) return "?";
  const EvalResult& r = *t.eval;
  switch (r.status) {
    case Status::Correct:
      if (auto s = t.speedup_eager()) return fmt::format("ok {:.2f}x", *s);
      return "ok";
    case Status::Wrong: return "wrong";
    case Status::CompileError: return "compile";
    case Status::RuntimeError: return "runtime";
    case Status::Timeout: return "timeout";
    case Status::Crash: return "crash";
    case Status::Invalid: return "invalid";
    case Status::Rejected: return "rejected";
    case Status::ProblemError: return "problem";
    case Status::InternalError: return r.reason == reason::kNoGpu ? "no gpu" : "internal";
    default: return to_string(r.status);
  }
}

LiveView::LiveView(ViewMode mode, std::ostream& out, int samples, int turns, std::string header)
    : mode_(mode), out_(out), turns_(turns), header_(std::move(header)),
      cells_(static_cast<size_t>(samples), std::vector<std::string>(static_cast<size_t>(turns))),
      notes_(static_cast<size_t>(samples)), best_(static_cast<size_t>(samples), 0) {
  std::lock_guard lock(mu_);
  if (mode_ == ViewMode::Quiet) return;
  out_ << header_ << "\n";
  if (mode_ == ViewMode::Table) draw_locked();
  out_.flush();
}

std::string LiveView::row_locked(int sample) const {
  std::string row = fmt::format("{:>6}  ", sample);
  for (const auto& c : cells_[static_cast<size_t>(sample)]) row += fmt::format("{:<11}", c.empty() ? "." : c);
  double b = best_[static_cast<size_t>(sample)];
  row += b > 0 ? fmt::format("{:>7.2f}x", b) : fmt::format("{:>8}", "-");
  if (!notes_[static_cast<size_t>(sample)].empty()) row += "  " + notes_[static_cast<size_t>(sample)];
  return row;
}

void LiveView::table_locked() {
  std::string head = fmt::format("{:>6}  ", "sample");
  for (int t = 0; t < turns_; ++t) head += fmt::format("{:<11}", fmt::format("turn {}", t + 1));
  out_ << head << fmt::format("{:>8}", "best") << "\n";
  for (size_t s = 0; s < cells_.size(); ++s) out_ << row_locked(static_cast<int>(s)) << "\n";
}

void LiveView::draw_locked() {
  // Move up over the previous drawing and clear it, then draw again (ANSI; terminals only).
  if (drawn_lines_ > 0) out_ << fmt::format("\x1b[{}A\x1b[J", drawn_lines_);
  table_locked();
  drawn_lines_ = static_cast<int>(cells_.size()) + 1;
  out_.flush();
}

void LiveView::on_event(const loop::LoopEvent& e) {
  std::lock_guard lock(mu_);
  if (e.sample < 0 || static_cast<size_t>(e.sample) >= cells_.size()) return;
  auto& row = cells_[static_cast<size_t>(e.sample)];
  const bool in_range = e.turn >= 0 && e.turn < turns_;
  switch (e.phase) {
    case loop::LoopEvent::Phase::Asking:
      if (in_range) row[static_cast<size_t>(e.turn)] = kAsking;
      break;
    case loop::LoopEvent::Phase::Evaluating:
      if (in_range) row[static_cast<size_t>(e.turn)] = kEvaluating;
      break;
    case loop::LoopEvent::Phase::Done:
      if (e.record) {
        if (in_range) row[static_cast<size_t>(e.turn)] = turn_cell(*e.record);
        if (e.record->correct())
          best_[static_cast<size_t>(e.sample)] =
              std::max(best_[static_cast<size_t>(e.sample)], e.record->speedup_eager().value_or(0));
        if (mode_ == ViewMode::Lines) {
          std::string line = fmt::format("sample {} turn {}: {}", e.sample, e.turn + 1, turn_cell(*e.record));
          if (e.record->eval && !e.record->eval->message.empty() && !e.record->correct())
            line += " - " + e.record->eval->message.substr(0, e.record->eval->message.find('\n')).substr(0, 120);
          else if (e.record->error)
            line += " - " + e.record->error->message.substr(0, 120);
          out_ << line << "\n";
        }
      }
      break;
    case loop::LoopEvent::Phase::Ended:
      if (e.trajectory)
        for (const auto& t : e.trajectory->turns) {
          if (t.index < turns_) row[static_cast<size_t>(t.index)] = turn_cell(t);
          if (t.correct())
            best_[static_cast<size_t>(e.sample)] = std::max(best_[static_cast<size_t>(e.sample)], t.speedup_eager().value_or(0));
        }
      for (auto& c : row)
        if (c == kAsking || c == kEvaluating) c = "";
      notes_[static_cast<size_t>(e.sample)] = e.note;
      if (mode_ == ViewMode::Lines) out_ << fmt::format("sample {} ended: {}\n", e.sample, e.note);
      break;
  }
  if (mode_ == ViewMode::Table) draw_locked();
  else out_.flush();
}

void LiveView::close() {
  std::lock_guard lock(mu_);
  // A turn still in flight when the run ends (the model failed for every sample, Ctrl-C) never
  // finished: the last table says so instead of showing it as running.
  bool changed = false;
  for (auto& row : cells_)
    for (auto& c : row)
      if (c == kAsking || c == kEvaluating) {
        c = "stopped";
        changed = true;
      }
  if (mode_ == ViewMode::Lines) table_locked();  // the whole table once at the end, for logs
  else if (mode_ == ViewMode::Table && changed) draw_locked();
  drawn_lines_ = 0;
  out_.flush();
}

}  // namespace kagent::cli
