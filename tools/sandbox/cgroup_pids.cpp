#include "sandbox/cgroup_pids.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/files.h"

namespace kagent::sandbox {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

bool has_word(const std::string& list, const std::string& word, char sep) {
  for (const auto& w : split(list, sep))
    if (w == word) return true;
  return false;
}

// Whether a cgroup v2 control file's line of controllers ("cpu io pids") names `controller`.
bool lists_controller(const std::string& file, const std::string& controller) {
  const std::string text = read_file_or_empty(file);
  return has_word(text.substr(0, text.find('\n')), controller, ' ');
}

// Writes `text` to a control file; "" or why not.
std::string write_control(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return fmt::format("{}: {}", path, std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return fmt::format("writing '{}' to {}: {}", text, path, std::strerror(errno));
  return {};
}

// A group's folder from the mount point, the mount's root and the process's path in it.
std::string group_folder(const std::string& mount_point, const std::string& mount_root, std::string path) {
  if (mount_root != "/" && path.rfind(mount_root, 0) == 0) path = path.substr(mount_root.size());
  if (path.empty() || path == "/") return mount_point;
  return mount_point + (path[0] == '/' ? "" : "/") + path;
}

}  // namespace

std::optional<PidsHierarchy> find_pids_hierarchy(const std::string& mountinfo, const std::string& cgroup,
                                                 std::string* error) {
  // /proc/self/cgroup: "0::/path" (v2) and "N:ctrl,ctrl:/path" (v1).
  std::string v2_path, v1_path;
  bool have_v2 = false, have_v1 = false;
  for (const auto& line : split(cgroup, '\n')) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      v2_path = path;
      have_v2 = true;
    } else if (has_word(controllers, "pids", ',')) {
      v1_path = path;
      have_v1 = true;
    }
  }
  // mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS"
  for (const auto& line : split(mountinfo, '\n')) {
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string w; in >> w;) f.push_back(w);
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 2 >= f.size()) continue;  // FSTYPE and SOURCE at least
    const std::string& root = f[3];
    const std::string& point = f[4];
    const std::string& type = f[dash + 1];
    const std::string super = dash + 3 < f.size() ? f[dash + 3] : "";
    if (type == "cgroup2" && have_v2) {
      // v2: the group goes below the nearest group, from this process's own up to the
      // hierarchy's root, whose children can have the pids controller (cgroup v2 enables a
      // controller for a group's children only where the group itself has it and, below the
      // root, holds no processes of its own).
      const std::string mount_root = point;
      for (std::string dir = group_folder(point, root, v2_path);; dir = dir.substr(0, dir.rfind('/'))) {
        if (lists_controller(dir + "/cgroup.subtree_control", "pids") ||
            (lists_controller(dir + "/cgroup.controllers", "pids") &&
             (dir == mount_root || read_file_or_empty(dir + "/cgroup.procs").empty())))
          return PidsHierarchy{dir, true};
        if (dir.size() <= mount_root.size() || dir.rfind('/') == std::string::npos) break;
      }
    } else if (type == "cgroup" && have_v1 && has_word(super, "pids", ',')) {
      return PidsHierarchy{group_folder(point, root, v1_path), false};
    }
  }
  if (error) *error = "no pids controller is mounted for this process (cgroup v2 or v1)";
  return std::nullopt;
}

PidsCgroupResult enter_pids_cgroup(pid_t pid) {
  PidsCgroupResult r;
  auto h = find_pids_hierarchy(read_file_or_empty("/proc/self/mountinfo"), read_file_or_empty("/proc/self/cgroup"),
                               &r.error);
  if (!h) return r;
  if (h->v2) {
    // The children of the parent group get the pids controller. A parent that holds processes
    // itself refuses this (cgroup v2's "no internal processes") unless it is the root.
    if (!lists_controller(h->parent + "/cgroup.subtree_control", "pids")) {
      if (auto e = write_control(h->parent + "/cgroup.subtree_control", "+pids"); !e.empty()) {
        r.error = "cannot enable the pids controller below " + h->parent + ": " + e;
        return r;
      }
    }
  }
  // Groups of workers that are gone, left where nobody could remove them (an orchestrator
  // killed with its workers): removed now, so that they do not pile up. A group holds its
  // worker's pid in its name; one whose process lives, or that still holds one, stays.
  if (DIR* d = ::opendir(h->parent.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      pid_t owner = 0;
      if (std::sscanf(e->d_name, "kagent-worker-%d", &owner) != 1 || owner <= 0) continue;
      if (::kill(owner, 0) == 0 || errno != ESRCH) continue;
      ::rmdir(fmt::format("{}/{}", h->parent, e->d_name).c_str());  // fails, harmlessly, unless empty
    }
    ::closedir(d);
  }
  PidsCgroup g{fmt::format("{}/kagent-worker-{}", h->parent, pid), h->v2};
  if (::mkdir(g.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    r.error = fmt::format("mkdir {}: {}", g.dir, std::strerror(errno));
    return r;
  }
  if (auto e = write_control(g.dir + "/cgroup.procs", std::to_string(pid)); !e.empty()) {
    ::rmdir(g.dir.c_str());
    r.error = e;
    return r;
  }
  r.group = g;
  return r;
}

std::optional<uint64_t> limit_pids(const PidsCgroup& group, int extra, std::string* error) {
  const std::string current = read_file_or_empty(group.dir + "/pids.current");
  uint64_t now = 0;
  try {
    now = std::stoull(current);
  } catch (const std::exception&) {
    if (error) *error = "cannot read " + group.dir + "/pids.current";
    return std::nullopt;
  }
  const uint64_t limit = now + static_cast<uint64_t>(extra);
  if (auto e = write_control(group.dir + "/pids.max", std::to_string(limit)); !e.empty()) {
    if (error) *error = e;
    return std::nullopt;
  }
  return limit;
}

uint64_t pids_refusals(const PidsCgroup& group) {
  // "max N": the times a fork or clone failed at pids.max in this group (and below it).
  std::istringstream in(read_file_or_empty(group.dir + "/pids.events"));
  for (std::string key, value; in >> key >> value;)
    if (key == "max") {
      try {
        return std::stoull(value);
      } catch (const std::exception&) {
        return 0;
      }
    }
  return 0;
}

void kill_and_remove_pids_cgroup(const std::string& dir) {
  if (dir.empty()) return;
  // The whole group, whatever left its process group or session: killed, then removed once
  // the kernel has reaped them (a few tries).
  for (int i = 0; i < 50; ++i) {
    std::istringstream procs(read_file_or_empty(dir + "/cgroup.procs"));
    bool any = false;
    for (pid_t pid; procs >> pid;) any = ::kill(pid, SIGKILL) == 0 || any;
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(any ? 20 : 10));
  }
}

}  // namespace kagent::sandbox
