#include "worker/client/lock_holders.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "common/files.h"
#include "sandbox/process_table.h"
#include "worker/client/file_users.h"

namespace kagent {

namespace fs = std::filesystem;

namespace {

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const auto info = sandbox::read_process(pid);
  return info && info->state != 'Z' && info->state != 'X';
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::vector<FileLockEntry> parse_file_locks(const std::string& text, ino_t ino) {
  // "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10953510 0 EOF", a blocked request "1: -> FLOCK ...";
  // an fdinfo line starts with "lock:\t". Matched by inode alone: on overlayfs (a container's
  // /tmp) the kernel lists the upper layer's device, which stat() of the path does not give.
  const std::string file_ino = std::to_string(static_cast<unsigned long>(ino));
  std::vector<FileLockEntry> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    size_t i = 0;
    if (i < w.size() && w[i] == "lock:") ++i;
    if (i < w.size() && !w[i].empty() && w[i].back() == ':') ++i;  // the entry's number
    FileLockEntry e;
    if (i < w.size() && w[i] == "->") {
      e.waiting = true;
      ++i;
    }
    // kind, ADVISORY|MANDATORY, READ|WRITE, pid, maj:min:ino
    if (i + 4 >= w.size()) continue;
    const std::string& where = w[i + 4];  // maj:min:ino
    const auto colon = where.rfind(':');
    if (colon == std::string::npos || where.substr(colon + 1) != file_ino) continue;
    e.exclusive = w[i + 2] == "WRITE";
    try {
      e.pid = static_cast<pid_t>(std::stol(w[i + 3]));
    } catch (const std::exception&) {
      continue;
    }
    out.push_back(e);
  }
  return out;
}

std::vector<FileLockEntry> file_locks(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return parse_file_locks(read_file_or_empty("/proc/locks"), st.st_ino);
}

std::map<pid_t, pid_t> orphan_lock_keepers(const std::string& path) {
  std::map<pid_t, pid_t> keepers;
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0) return keepers;
  std::set<pid_t> gone;  // takers that exited
  for (const auto& e : parse_file_locks(read_file_or_empty("/proc/locks"), file.st_ino))
    if (!e.waiting && !alive(e.pid)) gone.insert(e.pid);
  if (gone.empty()) return keepers;
  for (const auto& [pid, fds] : descriptors_of_file(sandbox::list_processes(), path))
    for (const auto& fd : fds)
      for (const auto& e :
           parse_file_locks(read_file_or_empty(fmt::format("/proc/{}/fdinfo/{}", pid, fd)), file.st_ino))
        if (gone.contains(e.pid)) keepers[pid] = e.pid;
  return keepers;
}

std::string describe_lock_holder(pid_t pid) {
  std::string name = first_line(read_file_or_empty(fmt::format("/proc/{}/comm", pid)));
  const auto info = sandbox::read_process(pid);
  if (!info) return fmt::format("pid {} (exited)", pid);
  std::string wchan = first_line(read_file_or_empty(fmt::format("/proc/{}/wchan", pid)));
  return fmt::format("pid {} ({}, state {}{})", pid, name.empty() ? "?" : name, info->state,
                     wchan.empty() || wchan == "0" ? "" : ", in " + wchan);
}

LockWatch::LockWatch(std::vector<std::string> paths, Options options)
    : paths_(std::move(paths)), opts_(std::move(options)) {}

LockWatch::Look LockWatch::look(double waited_s) {
  Look out;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < opts_.every) return out;
  last_ = now;
  std::error_code ec;
  const fs::path worker = opts_.worker_path.empty() ? fs::path() : fs::weakly_canonical(opts_.worker_path, ec);
  std::set<pid_t> holders;
  for (const auto& path : paths_) {
    // A lock whose taker has exited is kept by what it forked: killed when those are forks of
    // the worker (a candidate's children); else named, and the wait runs to its limit.
    for (const auto& [keeper, taker] : orphan_lock_keepers(path)) {
      const fs::path exe = fs::read_symlink(fmt::format("/proc/{}/exe", keeper), ec);
      const bool ours = !worker.empty() && !ec && exe == worker;
      const std::string who = describe_lock_holder(keeper);
      if (ours && ::kill(keeper, SIGKILL) == 0)
        out.notices.push_back(fmt::format("killed {}: it kept the GPU's timing lock that pid {} took before it "
                                          "exited (a process the worker forked and left running)",
                                          who, taker));
      else
        out.notices.push_back(fmt::format("the GPU's timing lock is kept by {}, after pid {} that took it exited",
                                          who, taker));
    }
    for (const auto& e : file_locks(path))
      if (!e.waiting && alive(e.pid)) holders.insert(e.pid);
  }
  for (auto it = holding_since_.begin(); it != holding_since_.end();)
    it = holders.contains(it->first) ? std::next(it) : holding_since_.erase(it);
  for (pid_t pid : holders) {
    const auto since = holding_since_.emplace(pid, now).first->second;
    if (now - since >= opts_.holder_limit) {
      out.give_up = fmt::format("the GPU's timing lock has been held by {} for {:.0f} s without a break (as seen "
                                "once a second), longer than any request may run",
                                describe_lock_holder(pid), std::chrono::duration<double>(now - since).count());
      return out;
    }
  }
  if (!named_ && waited_s * 1000 >= static_cast<double>(opts_.notice_after.count()) && !holders.empty()) {
    named_ = true;
    std::vector<std::string> who;
    for (pid_t pid : holders) who.push_back(describe_lock_holder(pid));
    out.notices.push_back(fmt::format("waited {:.0f} s for the GPU's timing lock, held by {}", waited_s,
                                      fmt::join(who, ", ")));
  }
  return out;
}

}  // namespace kagent
