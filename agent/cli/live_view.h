// The live view of `kagent solve`: a table of samples by turns that is redrawn as results
// arrive (on a terminal), or one line per turn (pipes, logs), or nothing (--quiet).
#pragma once

#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "loop/sample_loop.h"

namespace kagent::cli {

enum class ViewMode { Table, Lines, Quiet };

// A turn in a few characters: "ok 1.41x", "wrong", "compile", "format", ...
std::string turn_cell(const traj::Turn& t);

class LiveView {
 public:
  LiveView(ViewMode mode, std::ostream& out, int samples, int turns, std::string header);
  void on_event(const loop::LoopEvent& e);  // thread-safe
  void close();  // the table's last state stays on screen; turns still in flight show as "stopped"

 private:
  void table_locked();  // header and one row per sample
  void draw_locked();   // the table again, in place
  std::string row_locked(int sample) const;

  ViewMode mode_;
  std::ostream& out_;
  int turns_;
  std::string header_;
  std::vector<std::vector<std::string>> cells_;
  std::vector<std::string> notes_;
  std::vector<double> best_;
  int drawn_lines_ = 0;
  std::mutex mu_;
};

}  // namespace kagent::cli
