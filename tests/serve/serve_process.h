// A real `kagent serve` on loopback (compile-only, or evaluating on the GPU for the load
// benchmark's GPU run) for the tests and the load benchmark: started
// in its own process group on a free port (read back from DATA/server.json), waited for until
// /health answers 200, killed with its workers at the end (or on demand, with SIGKILL).
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "kagent_process.h"

namespace kagent::testing {

class ServeProcess {
 public:
  // `cwd` holds the captured output; `data` the server's folder; `extra` more flags; `on_gpu`:
  // real evaluation instead of compile-only.
  ServeProcess(const std::string& cwd, const std::string& data, const std::string& suite, const std::string& token,
               const std::vector<std::string>& extra = {}, const std::vector<std::string>& env = {}, bool on_gpu = false)
      : data_(data) {
    std::filesystem::remove(std::filesystem::path(data) / "server.json");
    std::vector<std::string> args = {"serve", "--data", data, "--problems", suite, "--port", "0"};
    if (!on_gpu) args.push_back("--compile-only");
    if (!token.empty()) args.insert(args.end(), {"--token", token});
    args.insert(args.end(), extra.begin(), extra.end());
    proc_ = spawn_kagent(args, env, cwd);
  }
  ~ServeProcess() { kill(SIGTERM); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // Waits for the port and a 200 from /health (the workers started); false after `limit`.
  // `port_only`: returns as soon as the port is known (the workers may still be starting).
  bool wait_ready(std::chrono::seconds limit = std::chrono::seconds(240), bool port_only = false) {
    const auto end = std::chrono::steady_clock::now() + limit;
    const auto file = std::filesystem::path(data_) / "server.json";
    while (std::chrono::steady_clock::now() < end) {
      if (port_ == 0 && std::filesystem::exists(file)) {
        const auto j = nlohmann::json::parse(kagent::read_file(file), nullptr, false);
        if (!j.is_discarded()) port_ = j.value("port", 0);
      }
      if (port_ != 0 && port_only) return true;
      if (port_ != 0) {
        httplib::Client c("127.0.0.1", port_);
        auto r = c.Get("/health");
        if (r && r->status == 200) return true;
      }
      int ws = 0;
      if (::waitpid(proc_.pid, &ws, WNOHANG) == proc_.pid) {
        alive_ = false;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  int port() const { return port_; }
  pid_t pid() const { return proc_.pid; }
  std::unique_ptr<httplib::Client> client(const std::string& token = {}) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(600, 0);
    if (!token.empty()) c->set_bearer_token_auth(token.c_str());
    return c;
  }
  std::string stderr_text() const { return kagent::read_file(proc_.err); }

  // Signals the whole group (server and workers) and reaps the server.
  void kill(int sig) {
    if (!alive_) return;
    ::kill(-proc_.pid, sig);
    int ws = 0;
    ::waitpid(proc_.pid, &ws, 0);
    alive_ = false;
  }

  // Signals the server process alone (as Slurm or a user's kill does; its group's compilers and
  // workers keep their own signals).
  void signal(int sig) const { ::kill(proc_.pid, sig); }

  // The server's exit status once it ends within `limit` (128+N for a signal), else nullopt.
  std::optional<int> wait_exit(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (alive_) {
      int ws = 0;
      if (::waitpid(proc_.pid, &ws, WNOHANG) == proc_.pid) {
        alive_ = false;
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
      }
      if (std::chrono::steady_clock::now() > end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  std::string data_;
  KagentProcess proc_;
  int port_ = 0;
  bool alive_ = true;
};

inline nlohmann::json body_of(const httplib::Result& r) {
  if (!r) return nullptr;
  return nlohmann::json::parse(r->body, nullptr, false);
}

}  // namespace kagent::testing
