// One `kagent serve` per --data folder: two servers on one folder would each append steps to
// the same episodes (two "turn 0" lines, both read back after a restart). The server holds an
// exclusive flock on DATA/serve.lock for its whole life; the kernel drops it when the process
// ends, however it ends (kill -9 included), so a stale lock never blocks a restart.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include "common/fd.h"

namespace kagent::serve {

// Thrown when another process holds the folder: what() is the one line to print.
struct DataInUse : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DataLock {
 public:
  // Takes the lock without waiting; DataInUse naming the holder (its pid and port, from the
  // lock file and DATA/server.json) when another server holds it; std::runtime_error when the
  // lock file cannot be opened.
  explicit DataLock(const std::filesystem::path& data_dir);
  DataLock(const DataLock&) = delete;
  DataLock& operator=(const DataLock&) = delete;

 private:
  Fd fd_;  // the lock lives as long as the descriptor
};

}  // namespace kagent::serve
