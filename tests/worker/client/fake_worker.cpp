// A stand-in for kagent-worker that misbehaves on request, so the client's crash
// classification is tested with real processes and real signals on a machine without a
// GPU (the real worker needs one to run a candidate). It speaks the same protocol:
// candidate.artifact names the fault: segv, abort, exit, hang, garbage, slow, ok.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/json_lines.h"

int main() {
  kagent::write_json_line(4, {{"ok", true}, {"result", {{"device", {{"available", true}, {"name", "fake"}}}}}});
  kagent::JsonLineReader reader(3);
  for (;;) {
    auto msg = reader.read(std::nullopt);
    if (msg.state != kagent::JsonLineReader::State::Message) return 0;
    const auto& req = msg.message;
    std::string fault = req.contains("candidate") ? req["candidate"].value("artifact", "ok") : "ok";
    std::printf("fake worker: %s\n", fault.c_str());
    std::fflush(stdout);
    if (fault == "segv") std::raise(SIGSEGV);
    if (fault == "abort") std::abort();
    if (fault == "exit") std::exit(7);
    if (fault == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (fault == "garbage") {
      ssize_t n = ::write(4, "this is not json\n", 17);
      (void)n;
      continue;
    }
    if (fault == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    nlohmann::json result = {{"status", "correct"}, {"message", "fake"}, {"format", "cuda"}};
    kagent::write_json_line(4, {{"id", req.value("id", 0)}, {"ok", true}, {"result", result}});
  }
}
