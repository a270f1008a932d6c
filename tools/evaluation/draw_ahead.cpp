#include "evaluation/draw_ahead.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/json_lines.h"
#include "common/subprocess.h"
#include "sandbox/cuda_probe.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/scratch_dir.h"

namespace kagent {

namespace fs = std::filesystem;

std::optional<int> parse_draw_processes(const char* text) {
  if (!text || !*text) return kDefaultDrawProcesses;
  if (std::strspn(text, "0123456789") != std::strlen(text) || std::strlen(text) > 2) return std::nullopt;
  const int n = std::atoi(text);
  return n <= 16 ? std::optional<int>(n) : std::nullopt;
}

int draw_processes() { return parse_draw_processes(std::getenv(kDrawAheadEnv)).value_or(kDefaultDrawProcesses); }

uint64_t default_draw_budget_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const uint64_t ram = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  return std::clamp<uint64_t>(ram / 8, uint64_t{1} << 30, uint64_t{16} << 30);
}

DrawAhead::DrawAhead(DrawAheadOptions options) : options_(std::move(options)) {
  if (!options_.budget_bytes) options_.budget_bytes = default_draw_budget_bytes();
  // Where a worker's scratch folder would go: the sandbox's uid reaches it there.
  const fs::path parent = sandbox::default_scratch_parent(fs::temp_directory_path().string());
  for (int i = 0; i < options_.processes; ++i) {
    std::string pattern = (parent / "kagent-draws-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      fmt::print(stderr, "kagent: a draw process is off: cannot make a folder in {}: {}\n", parent.string(),
                 std::strerror(errno));
      continue;
    }
    auto& d = *drawers_.emplace_back(std::make_unique<Drawer>());
    d.folder = pattern;
    folders_ += (folders_.empty() ? "" : ":") + d.folder;
  }
  for (auto& d : drawers_) d->thread = std::thread([this, &d = *d] { run(d); });
}

DrawAhead::~DrawAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& d : drawers_) {
    // A write to a drawer that stopped reading would block its thread: the drawer goes first.
    if (const pid_t pid = d->pid.load(); pid > 0) ::kill(-pid, SIGKILL);
    if (d->thread.joinable()) d->thread.join();
    sandbox::remove_tree(d->folder);
  }
}

void DrawAhead::want(const std::string& problem) {
  if (drawers_.empty()) return;
  std::lock_guard lock(mu_);
  InFlight& f = in_flight_[problem];
  if (f.evaluations++ > 0) return;
  ++counters_.asked;
  std::optional<size_t> best;  // the live process with the fewest draws outstanding
  for (size_t i = 0; i < drawers_.size(); ++i)
    if (!drawers_[i]->gone && (!best || drawers_[i]->outstanding < drawers_[*best]->outstanding)) best = i;
  if (!best) return;  // none left: the workers draw
  f.drawer = *best;
  ++drawers_[*best]->outstanding;
  drawers_[*best]->outbox.push_back({{"op", "draw"}, {"path", problem}, {"seed", options_.seed}, {"trials", options_.trials}});
  wake_.notify_all();
}

void DrawAhead::done(const std::string& problem) {
  if (drawers_.empty()) return;
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(problem);
  if (it == in_flight_.end() || --it->second.evaluations > 0) return;
  if (Drawer& d = *drawers_[it->second.drawer]; !d.gone) d.outbox.push_back({{"op", "drop"}, {"path", problem}});
  in_flight_.erase(it);
  wake_.notify_all();
}

DrawAhead::Ticket::Ticket(DrawAhead* draw, std::string problem) : draw_(draw), problem_(std::move(problem)) {
  if (draw_) draw_->want(problem_);
}

DrawAhead::Ticket::~Ticket() {
  if (draw_) draw_->done(problem_);
}

DrawAheadCounters DrawAhead::counters() const {
  std::lock_guard lock(mu_);
  DrawAheadCounters c = counters_;
  c.running = static_cast<int>(std::count_if(drawers_.begin(), drawers_.end(), [](const auto& d) { return d->running; }));
  return c;
}

void DrawAhead::run(Drawer& d) {
  // The workers' sandbox, with the folder as the scratch folder: the drawer's only writable
  // place. No GPU: the drawer never touches one.
  SpawnOptions so;
  const uint64_t budget = options_.budget_bytes / std::max<size_t>(drawers_.size(), 1);
  so.argv = {options_.worker_path, "--draw-ahead", d.folder, std::to_string(budget)};
  so.protocol_pipes = true;
  so.output_file = (fs::path(d.folder) / "drawer.log").string();
  so.die_with_parent = true;  // this thread lives as long as the pool (and the sandbox's monitor watches us too)
  so.env_set = options_.env;
  so.env_set.insert(so.env_set.end(), {"CUDA_VISIBLE_DEVICES=", std::string(sandbox::kCudaCheckedEnv) + "=1"});
  std::optional<Subprocess> proc;
  try {
    sandbox::SandboxPolicy policy = sandbox::SandboxPolicy::from_environment();
    policy.scratch = d.folder;
    policy.scratch_disposable = false;  // ours to remove: the workers may still read it
    policy.orchestrator_pid = ::getpid();
    for (auto& kv : policy.to_environment()) so.env_set.push_back(std::move(kv));
    proc.emplace(so);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kagent: a draw process is off: {}\n", e.what());
    std::lock_guard lock(mu_);
    d.gone = true;
    return;
  }
  d.pid = proc->pid();
  JsonLineReader reader(proc->reply_fd());
  auto progress = std::chrono::steady_clock::now();  // its last answer, or the last room it was given
  const auto stuck_locked = [&] {
    return d.outstanding > 0 && !d.waiting_for_room && std::chrono::steady_clock::now() - progress > options_.stuck_after;
  };
  for (;;) {
    std::vector<nlohmann::json> lines;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stop_ || !d.outbox.empty(); });
      if (stop_) break;
      lines.swap(d.outbox);
      if (d.outstanding == 0) progress = std::chrono::steady_clock::now();  // idle is not stuck
      for (const auto& line : lines)
        if (line["op"] == "drop") {  // room given: a drawer that waited for it is no longer stuck
          d.waiting_for_room = false;
          progress = std::chrono::steady_clock::now();
        }
    }
    try {
      // A line goes out only when its pipe has room, and the replies are read meanwhile: with
      // both pipes full (hundreds of small problems named at once, each answered at once) a
      // blocking write here and the drawer's blocking reply would wait for each other.
      for (size_t sent = 0; sent < lines.size();) {
        pollfd out{proc->request_fd(), POLLOUT, 0};
        if (::poll(&out, 1, 100) < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
        if (out.revents & (POLLERR | POLLHUP)) throw std::runtime_error("the draw process closed its requests");
        if (out.revents & POLLOUT) write_json_line(proc->request_fd(), lines[sent++]);
        if (!read_replies(d, reader, progress)) break;
        std::lock_guard lock(mu_);
        if (stop_ || stuck_locked()) break;  // what is left unsent goes with it
      }
      read_replies(d, reader, progress);
    } catch (const std::exception& e) {  // its pipe broke: it ended, or broke the protocol
      std::lock_guard lock(mu_);
      if (!stop_) counters_.ended = e.what();
      if (!stop_ && d.running)
        fmt::print(stderr, "kagent: a draw process stopped ({}); the workers draw for themselves\n", e.what());
      break;
    }
    {
      std::lock_guard lock(mu_);
      if (stop_) break;
      if (stuck_locked()) {
        counters_.ended = fmt::format("killed: no draw answered in {} s", options_.stuck_after.count() / 1000);
        fmt::print(stderr, "kagent: a draw process answered nothing in {} s (a problem's get_inputs() that does not "
                   "return?): killed; the workers draw for themselves\n", options_.stuck_after.count() / 1000);
        d.running = false;
        d.gone = true;
        proc->kill();
        return;
      }
    }
    if (auto exit = proc->poll()) {
      std::lock_guard lock(mu_);
      // One that ends before it is ready met what the workers meet too (a sandbox requirement
      // the machine cannot hold, a broken Python), which they report: only the counters say it.
      if (!stop_) counters_.ended = fmt::format("{} ({})", exit->describe(), d.running ? "while drawing" : "at its start");
      if (!stop_ && d.running)
        fmt::print(stderr, "kagent: a draw process ended ({}); the workers draw for themselves\n", exit->describe());
      break;
    }
  }
  std::lock_guard lock(mu_);
  d.running = false;
  d.gone = true;  // never chosen again
}

bool DrawAhead::read_replies(Drawer& d, JsonLineReader& reader, std::chrono::steady_clock::time_point& progress) {
  for (;;) {
    auto r = reader.read(std::chrono::milliseconds(0));
    if (r.state == JsonLineReader::State::Closed) return false;
    if (r.state != JsonLineReader::State::Message) return true;
    std::lock_guard lock(mu_);
    progress = std::chrono::steady_clock::now();
    if (r.message.contains("ready")) {
      d.running = true;
    } else if (r.message.contains("waiting")) {
      d.waiting_for_room = true;
    } else {
      --d.outstanding;
      if (r.message.contains("kept")) {
        ++counters_.kept;
      } else if (r.message.contains("drawn")) {
        ++counters_.drawn;
        counters_.seconds += r.message.value("seconds", 0.0);
        counters_.bytes += r.message.value("bytes", int64_t{0});
      } else {
        ++counters_.skipped;
      }
    }
  }
}

}  // namespace kagent
