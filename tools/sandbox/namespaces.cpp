#include "sandbox/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/fd.h"

namespace kagent::sandbox {

namespace {

std::string errno_text(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

bool write_proc_file(const char* path, const std::string& text) {
  Fd fd(::open(path, O_WRONLY | O_CLOEXEC));
  if (!fd) return false;
  return ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool has_option(const std::string& options, const char* name) {
  std::istringstream in(options);
  std::string token;
  while (std::getline(in, token, ','))
    if (token == name) return true;
  return false;
}

// The per-mount flags a bind remount must repeat, or the kernel would clear them.
unsigned long kept_flags(const std::string& options) {
  unsigned long flags = 0;
  if (has_option(options, "nosuid")) flags |= MS_NOSUID;
  if (has_option(options, "nodev")) flags |= MS_NODEV;
  if (has_option(options, "noexec")) flags |= MS_NOEXEC;
  if (has_option(options, "noatime")) flags |= MS_NOATIME;
  if (has_option(options, "nodiratime")) flags |= MS_NODIRATIME;
  if (has_option(options, "relatime")) flags |= MS_RELATIME;
  if (has_option(options, "strictatime")) flags |= MS_STRICTATIME;
#ifdef MS_NOSYMFOLLOW
  if (has_option(options, "nosymfollow")) flags |= MS_NOSYMFOLLOW;
#endif
  return flags;
}

bool is_within(const std::string& path, const std::string& dir) {
  if (path == dir) return true;
  if (dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

bool within_any(const std::string& path, const std::vector<std::string>& dirs) {
  for (const auto& d : dirs)
    if (d != "/" && is_within(path, d)) return true;
  return false;
}

std::vector<MountEntry> read_mounts() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_mountinfo(ss.str());
}

// Mounts on the same path stack; only the last one listed (the top) is reachable.
std::map<std::string, std::string> top_mounts(const std::vector<MountEntry>& mounts) {
  std::map<std::string, std::string> top;
  for (const auto& m : mounts) top[m.mount_point] = m.options;
  return top;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(const std::string& text) {
  std::vector<MountEntry> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point, options;
    if (!(fields >> id >> parent >> dev >> root >> mount_point >> options)) continue;
    out.push_back({unescape(mount_point), options});
  }
  return out;
}

NamespaceResult enter_user_namespace() {
  NamespaceResult r;
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER) != 0) {
    r.error = errno_text("unshare(CLONE_NEWUSER)");
    return r;
  }
  // An unprivileged writer must deny setgroups before it may write gid_map.
  if (!write_proc_file("/proc/self/setgroups", "deny") ||
      !write_proc_file("/proc/self/uid_map", fmt::format("{} {} 1\n", uid, uid)) ||
      !write_proc_file("/proc/self/gid_map", fmt::format("{} {} 1\n", gid, gid))) {
    r.error = errno_text("writing the user namespace's id maps");
    return r;
  }
  r.ok = true;
  return r;
}

NamespaceResult enter_network_namespace() {
  NamespaceResult r;
  if (::unshare(CLONE_NEWNET) != 0) {
    r.error = errno_text("unshare(CLONE_NEWNET)");
    return r;
  }
  r.ok = true;
  return r;
}

NamespaceResult enter_read_only_mount_namespace(const std::vector<std::string>& writable) {
  NamespaceResult r;
  if (::unshare(CLONE_NEWNS) != 0) {
    r.error = errno_text("unshare(CLONE_NEWNS)");
    return r;
  }
  // Shared mounts would carry the changes below back into the parent namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    r.error = errno_text("making the mounts private");
    return r;
  }
  std::vector<std::string> kept;
  for (const auto& w : writable) {
    if (::access(w.c_str(), F_OK) != 0) continue;
    // A mount of its own stays writable when its parent mount turns read-only.
    if (::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      r.error = errno_text(fmt::format("bind-mounting {}", w).c_str());
      return r;
    }
    kept.push_back(w);
  }
  for (const auto& [mount_point, options] : top_mounts(read_mounts())) {
    if (within_any(mount_point, kept) || has_option(options, "ro")) continue;
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(options);
    if (::mount(nullptr, mount_point.c_str(), nullptr, flags, nullptr) != 0 && r.error.empty())
      r.error = errno_text(fmt::format("remounting {} read-only", mount_point).c_str());
  }
  for (const auto& [mount_point, options] : top_mounts(read_mounts()))
    if (!within_any(mount_point, kept) && !has_option(options, "ro")) r.left_writable.push_back(mount_point);
  r.ok = r.left_writable.empty();
  if (!r.ok && r.error.empty()) r.error = "some mounts stayed writable";
  return r;
}

}  // namespace kagent::sandbox
