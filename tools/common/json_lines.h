// JSON messages over a pipe, one per line: the worker protocol's framing.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kagent {

// Writes `j` and a newline; throws std::system_error when the peer is gone.
void write_json_line(int fd, const nlohmann::json& j);

// Reads newline-framed JSON from a descriptor it does not own.
class JsonLineReader {
 public:
  explicit JsonLineReader(int fd) : fd_(fd) {}
  enum class State { Message, Timeout, Closed };
  struct Result {
    State state;
    nlohmann::json message;  // when state == Message
  };
  // Waits up to `timeout` (forever when nullopt) for one whole message; 0 looks once, not waiting.
  // A line that is not JSON throws std::runtime_error: the protocol is broken.
  Result read(std::optional<std::chrono::milliseconds> timeout);

 private:
  int fd_;
  std::string buffer_;
};

}  // namespace kagent
