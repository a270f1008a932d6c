// Progress lines while a command prepares a run (the worker starting Python and torch, the
// problem loading, the baselines being measured), so a first run on a new machine does not sit
// silent for minutes. A step still running after a second is announced on stderr; its end is
// then reported with its time. Quick steps (caches warm) print nothing. Only on a terminal:
// pipes and logs keep one line per failure.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

namespace kagent::cli {

class Progress {
 public:
  // `enabled`: whether to print at all (off for --quiet and --json, and when stderr is no terminal).
  Progress(std::string command, bool enabled);
  static bool stderr_is_terminal();

  // One step, announced as "kagent <command>: <doing> ..." once it has run for a second.
  class Step {
   public:
    Step(const Progress& progress, std::string doing);
    ~Step();
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    // Ends the step: "kagent <command>: <what> in 38.2 s", if it was announced.
    void done(const std::string& what);

   private:
    void stop();
    const Progress& progress_;
    std::chrono::steady_clock::time_point started_;
    std::mutex mu_;
    std::condition_variable_any wake_;
    bool announced_ = false;
    std::jthread watcher_;
  };

 private:
  std::string command_;
  bool enabled_;
};

}  // namespace kagent::cli
