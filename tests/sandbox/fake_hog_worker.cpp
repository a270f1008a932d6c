// A stand-in for kagent-worker for the orchestrator-side sandbox tests: it speaks the
// protocol, and candidate.artifact says what the "candidate" does:
//   hog        grows its host memory step by step (for the memory watchdog)
//   forked_hog a forked child grows instead (the watchdog counts the worker's children)
//   baselines  answers a correct result with freshly measured (made-up) baselines
//   ok         answers a correct result
// The message of every answer echoes the options the worker received.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "common/json_lines.h"

namespace {
void grow_forever() {
  std::vector<char*> blocks;
  for (int i = 0; i < 1024; ++i) {  // up to 16 GiB, 16 MiB at a time
    char* b = static_cast<char*>(std::malloc(16 << 20));
    if (!b) break;
    std::memset(b, 1, 16 << 20);
    blocks.push_back(b);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::hours(1));
}
}  // namespace

int main() {
  nlohmann::json device = {{"available", true}, {"name", "fake GPU"}, {"torch_version", "0.0-fake"}};
  kagent::write_json_line(4, {{"ok", true}, {"result", {{"device", device}, {"sandbox", {{"enabled", false}}}}}});
  kagent::JsonLineReader reader(3);
  for (;;) {
    auto msg = reader.read(std::nullopt);
    if (msg.state != kagent::JsonLineReader::State::Message) return 0;
    const auto& req = msg.message;
    std::string what = req.contains("candidate") ? req["candidate"].value("artifact", "ok") : "ok";
    // The client sends every path absolute (request_paths.h): the word is the file's name.
    if (const auto slash = what.rfind('/'); slash != std::string::npos) what = what.substr(slash + 1);
    if (what == "hog") grow_forever();
    if (what == "forked_hog") {  // the child grows while the worker waits for it
      if (::fork() == 0) grow_forever();
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
    nlohmann::json result = {{"status", "correct"}, {"format", "cuda"}, {"message", req.value("options", nlohmann::json()).dump()}};
    if (what == "baselines") {
      nlohmann::json stats = {{"median_ms", 1.5}, {"mean_ms", 1.5}, {"iterations", 100}};
      result["timing"] = {{"candidate", stats}, {"eager", stats}, {"baseline_cache_hit", false}};
    }
    kagent::write_json_line(4, {{"id", req.value("id", 0)}, {"nonce", req.value("nonce", "")}, {"ok", true}, {"result", result}});
  }
}
