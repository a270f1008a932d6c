// Shared setup for tests against the fake server: a client config with small timeouts and
// backoffs so the whole suite stays within seconds.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "fake_llm_server.h"
#include "llm/llm_client.h"

namespace kagent::testing {

inline llm::LlmConfig server_config(const FakeLlmServer& s, const std::string& provider = "openai") {
  llm::LlmConfig c;
  c.provider = provider;
  c.base_url = s.base_url();
  c.model = "test-model";
  c.api_key = "sk-test";
  c.transport.connect_timeout_s = 1;
  c.transport.read_timeout_s = 2;
  c.retry.max_attempts = 3;
  c.retry.initial_backoff_s = 0.02;
  c.retry.jitter = 0.25;
  return c;
}

inline llm::ChatRequest hello(const std::string& system = "") {
  llm::ChatRequest r;
  r.system = system;
  r.messages.push_back({"user", "Say hello."});
  return r;
}

// A loopback port with nothing listening: bound, read, closed.
inline int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Collects a stream's events, text and reasoning apart.
struct Collected {
  std::string text, reasoning;
  int text_events = 0, restarts = 0;
  std::vector<double> text_times;  // seconds since construction
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  llm::StreamCallback callback() {
    return [this](const llm::StreamEvent& e) {
      using K = llm::StreamEvent::Kind;
      if (e.kind == K::Restart) {
        ++restarts;
        text.clear();
        reasoning.clear();
      }
      if (e.kind == K::Reasoning) reasoning += e.text;
      if (e.kind == K::Text) {
        text += e.text;
        ++text_events;
        text_times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    };
  }
};

}  // namespace kagent::testing
