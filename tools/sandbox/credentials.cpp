#include "sandbox/credentials.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/fd.h"

namespace kagent::sandbox {

namespace {

std::string errno_text(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

int last_capability() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int last = CAP_LAST_CAP;
  in >> last;
  return last;
}

bool keeps(const CapabilitySet& caps, int cap) {
  return std::find(caps.keep.begin(), caps.keep.end(), cap) != caps.keep.end();
}

CredentialResult drop_bounding_set(const CapabilitySet& caps) {
  for (int cap = 0; cap <= last_capability(); ++cap) {
    if (keeps(caps, cap)) continue;
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return {false, errno_text(fmt::format("dropping capability {} from the bounding set", cap))};
  }
  return {true, {}};
}

CredentialResult set_capabilities(const CapabilitySet& caps, bool ambient) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  for (int cap : caps.keep) {
    const uint32_t bit = 1u << (cap % 32);
    data[cap / 32].effective |= bit;
    data[cap / 32].permitted |= bit;
    data[cap / 32].inheritable |= bit;
  }
  if (::syscall(SYS_capset, &header, data) != 0) return {false, errno_text("capset"), {}};
  CredentialResult r{true, {}, {}};
  if (ambient) {
    // Only children (nvcc, ptxas) lose the capability without it: not worth failing for.
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    for (int cap : caps.keep)
      if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0 && r.note.empty())
        r.note = errno_text(fmt::format("children do not inherit capability {} (ambient)", cap));
  }
  return r;
}

}  // namespace

bool id_mapped(uint32_t id, const std::string& map_text) {
  std::istringstream lines(map_text);
  uint64_t inside = 0, outside = 0, count = 0;
  while (lines >> inside >> outside >> count)
    if (id >= inside && id < inside + count) return true;
  return false;
}

std::optional<uint32_t> default_sandbox_uid(pid_t pid, const std::string& uid_map, const std::string& gid_map) {
  for (uint32_t id : {kUniqueUidBase + static_cast<uint32_t>(pid), uint32_t{65534}})
    if (id_mapped(id, uid_map) && id_mapped(id, gid_map)) return id;
  return std::nullopt;
}

std::vector<gid_t> device_groups(const std::vector<std::string>& devices, std::vector<std::string>* unreachable) {
  std::vector<gid_t> groups;
  for (const auto& dev : devices) {
    struct stat st {};
    if (::stat(dev.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) continue;  // a folder of devices (nvidia-caps): its files decide
    if ((st.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH)) continue;
    if ((st.st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP)) {
      if (std::find(groups.begin(), groups.end(), st.st_gid) == groups.end()) groups.push_back(st.st_gid);
    } else if (unreachable) {
      unreachable->push_back(dev);
    }
  }
  return groups;
}

CredentialResult switch_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const CapabilitySet& caps) {
  if (auto r = drop_bounding_set(caps); !r.ok) return r;
  // Keeps the permitted set across setresuid; the effective set is rebuilt below.
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return {false, errno_text("PR_SET_KEEPCAPS")};
  if (::setgroups(groups.size(), groups.data()) != 0) return {false, errno_text("setgroups")};
  if (::setresgid(gid, gid, gid) != 0) return {false, errno_text(fmt::format("setresgid({})", gid))};
  if (::setresuid(uid, uid, uid) != 0) return {false, errno_text(fmt::format("setresuid({})", uid))};
  CredentialResult caps_set = set_capabilities(caps, true);
  if (!caps_set.ok) return caps_set;
  ::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  // setresuid cleared it; without it /proc/<pid> turns root-owned and unreadable to the monitor.
  if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return {false, errno_text("PR_SET_DUMPABLE")};
  uid_t ruid = 0, euid = 0, suid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ruid != uid || euid != uid || suid != uid)
    return {false, "the uid did not change", {}};
  return caps_set;
}

CredentialResult limit_capabilities(const CapabilitySet& caps) {
  if (auto r = drop_bounding_set(caps); !r.ok) return r;
  return set_capabilities(caps, false);
}

CredentialResult probe_switch_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const CapabilitySet& caps,
                                   const std::vector<std::string>& readable, const std::vector<std::string>& devices,
                                   const std::string& scratch) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {false, errno_text("pipe2")};
  Fd read_end(fds[0]), write_end(fds[1]);
  pid_t child = ::fork();
  if (child < 0) return {false, errno_text("fork")};
  if (child == 0) {
    read_end.reset();
    auto fail = [&](const std::string& why) {
      ssize_t n = ::write(write_end.get(), why.data(), why.size());
      (void)n;
      ::_exit(1);
    };
    if (auto r = switch_user(uid, gid, groups, caps); !r.ok) fail(r.error);
    for (const auto& p : readable)
      if (Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC)); !fd) fail(errno_text("cannot read " + p));
    for (const auto& d : devices) {
      struct stat st {};
      if (::stat(d.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
      if (Fd fd(::open(d.c_str(), O_RDWR | O_CLOEXEC)); !fd) fail(errno_text("cannot open " + d + " read-write"));
    }
    const std::string probe = scratch + "/.kagent-uid-probe";
    if (Fd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)); !fd)
      fail(errno_text("cannot write in " + scratch));
    ::unlink(probe.c_str());
    ::_exit(0);
  }
  write_end.reset();
  std::string why;
  char buf[512];
  ssize_t n = 0;
  while ((n = ::read(read_end.get(), buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) why.append(buf, static_cast<size_t>(n));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {true, {}};
  return {false, why.empty() ? "the probe child failed" : why};
}

CredentialResult give_folders(const std::vector<std::string>& paths, uid_t uid, gid_t gid) {
  for (const auto& p : paths)
    if (::lchown(p.c_str(), uid, gid) != 0) return {false, errno_text("chown " + p)};
  return {true, {}};
}

}  // namespace kagent::sandbox
