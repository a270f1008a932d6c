#include "sandbox/process_table.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace kagent::sandbox {

namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value after "Key:" in a /proc status-like file, as its first number.
std::optional<uint64_t> field_number(const std::string& text, const std::string& key) {
  auto at = text.find("\n" + key + ":");
  size_t start = at == std::string::npos ? (text.rfind(key + ":", 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (start == std::string::npos) return std::nullopt;
  size_t p = start + key.size() + 1;
  while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data() + p, text.data() + text.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ProcessInfo> read_process(pid_t pid) {
  auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  auto close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(close + 1));
  ProcessInfo info;
  info.pid = pid;
  long skip = 0;
  fields >> info.state >> info.ppid >> info.pgrp;
  for (int i = 0; i < 14 && fields; ++i) fields >> skip;  // session .. nice (fields 6 to 19)
  fields >> info.threads;
  if (!fields) return std::nullopt;
  return info;
}

std::vector<pid_t> list_processes() {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir("/proc");
  if (!dir) return pids;
  while (dirent* e = ::readdir(dir)) {
    pid_t pid = 0;
    const char* name = e->d_name;
    auto [end, ec] = std::from_chars(name, name + std::char_traits<char>::length(name), pid);
    if (ec == std::errc() && *end == '\0' && pid > 0) pids.push_back(pid);
  }
  ::closedir(dir);
  return pids;
}

std::optional<uid_t> real_uid_of(pid_t pid) {
  auto status = slurp("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  auto uid = field_number(*status, "Uid");
  if (!uid) return std::nullopt;
  return static_cast<uid_t>(*uid);
}

std::optional<uint64_t> memory_of(pid_t pid, bool proportional) {
  const std::string base = "/proc/" + std::to_string(pid);
  if (proportional)
    if (auto rollup = slurp(base + "/smaps_rollup"))
      if (auto pss_kb = field_number(*rollup, "Pss")) return *pss_kb * 1024;
  auto statm = slurp(base + "/statm");
  if (!statm) return std::nullopt;
  std::istringstream in(*statm);
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return out;
  bool have_file = false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(task_dir + "/" + e->d_name + "/children");
    if (!in) continue;
    have_file = true;
    pid_t child = 0;
    while (in >> child) out.push_back(child);
  }
  ::closedir(dir);
  if (!have_file) {
    for (pid_t p : list_processes())
      if (auto info = read_process(p); info && info->ppid == pid) out.push_back(p);
  }
  return out;
}

uint64_t tree_memory_bytes(pid_t root, bool proportional) {
  uint64_t total = 0;
  std::vector<pid_t> todo{root};
  for (size_t guard = 0; !todo.empty() && guard < 100000; ++guard) {
    pid_t pid = todo.back();
    todo.pop_back();
    total += memory_of(pid, proportional).value_or(0);
    for (pid_t child : children_of(pid)) todo.push_back(child);
  }
  return total;
}

std::optional<uint64_t> tree_memory_over(pid_t root, uint64_t limit) {
  if (tree_memory_bytes(root, false) <= limit) return std::nullopt;
  const uint64_t precise = tree_memory_bytes(root, true);
  if (precise <= limit) return std::nullopt;
  return precise;
}

std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // ppid -> pid
  for (pid_t pid : list_processes())
    if (auto info = read_process(pid); info && info->state != 'Z') children.emplace(info->ppid, pid);
  std::vector<pid_t> out, todo{root};
  while (!todo.empty()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

int count_tasks_of_uid(uid_t uid) {
  int tasks = 0;
  for (pid_t pid : list_processes()) {
    auto status = slurp("/proc/" + std::to_string(pid) + "/status");
    if (!status) continue;
    auto owner = field_number(*status, "Uid");
    if (!owner || *owner != uid) continue;
    tasks += static_cast<int>(field_number(*status, "Threads").value_or(1));
  }
  return tasks;
}

int kill_processes_of_uid(uid_t uid) {
  int killed = 0;
  if (uid == 0 || uid == ::getuid()) return 0;  // never the caller's own processes
  for (pid_t pid : list_processes()) {
    if (pid == ::getpid()) continue;
    if (real_uid_of(pid) == uid && ::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace kagent::sandbox
