#include "common/json_lines.h"

#include "common/files.h"

#include <poll.h>

#include <algorithm>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace kagent {

void write_json_line(int fd, const nlohmann::json& j) {
  write_all(fd, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "protocol pipe");
}

JsonLineReader::Result JsonLineReader::read(std::optional<std::chrono::milliseconds> timeout) {
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout : std::chrono::steady_clock::time_point::max();
  char buf[65536];
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (line.empty()) continue;
      try {
        return {State::Message, nlohmann::json::parse(line)};
      } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error("protocol: a reply line is not JSON: " + line.substr(0, 200));
      }
    }
    int wait_ms = -1;
    if (timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      // Spent (0 ms asked, or under a millisecond left): one look without waiting, not none.
      wait_ms = static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("protocol poll failed: ") + std::strerror(errno));
    }
    if (r == 0) return {State::Timeout, {}};
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return {State::Closed, {}};
    }
    if (n == 0) return {State::Closed, {}};
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace kagent
