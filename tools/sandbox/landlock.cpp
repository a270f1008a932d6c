#include "sandbox/landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/fd.h"

// Rights newer than some distributions' kernel headers: the values are fixed kernel ABI.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace kagent::sandbox {

namespace {

// struct landlock_ruleset_attr as of ABI 6; older kernels are passed a shorter prefix.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI 4
  uint64_t scoped = 0;              // ABI 6
};

int create_ruleset(const RulesetAttr* attr, size_t size, uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, attr, size, flags));
}
int add_path_rule(int ruleset, const landlock_path_beneath_attr& rule) {
  return static_cast<int>(::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0));
}
int restrict_self(int ruleset) { return static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset, 0)); }

// Every filesystem right the kernel of this ABI knows.
uint64_t fs_rights(int abi) {
  uint64_t r = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
               LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return r;
}

// Rights that make sense on a file (the kernel rejects directory rights on one).
uint64_t file_rights(uint64_t rights) {
  return rights & (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                   LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV);
}

}  // namespace

int landlock_abi(std::string* why_not) {
  int abi = create_ruleset(nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi > 0) return abi;
  if (why_not) {
    *why_not = errno == ENOSYS       ? "not in this kernel (ENOSYS)"
               : errno == EOPNOTSUPP ? "built in but disabled at boot (EOPNOTSUPP)"
                                     : fmt::format("unavailable: {}", std::strerror(errno));
  }
  return 0;
}

LandlockResult apply_landlock(const LandlockRules& rules) {
  LandlockResult r;
  r.abi = landlock_abi(&r.error);
  if (r.abi == 0) return r;

  RulesetAttr attr;
  attr.handled_access_fs = fs_rights(r.abi);
  size_t size = sizeof(uint64_t);
  if (r.abi >= 4) {
    size = 2 * sizeof(uint64_t);
    // Handled with no rule: every TCP bind and connect is refused.
    if (rules.restrict_tcp) attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  }
  if (r.abi >= 6) {
    size = sizeof(RulesetAttr);
    if (rules.restrict_scope) attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
  }
  Fd ruleset(create_ruleset(&attr, size, 0));
  if (!ruleset) {
    r.error = fmt::format("landlock_create_ruleset: {}", std::strerror(errno));
    return r;
  }

  auto add = [&](const std::string& path, uint64_t rights) -> bool {
    Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) {
      r.missing.push_back(path);
      return true;  // nothing there to allow
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      r.error = fmt::format("stat {}: {}", path, std::strerror(errno));
      return false;
    }
    landlock_path_beneath_attr rule{};
    rule.allowed_access = S_ISDIR(st.st_mode) ? rights : file_rights(rights);
    rule.parent_fd = fd.get();
    if (add_path_rule(ruleset.get(), rule) != 0) {
      r.error = fmt::format("landlock_add_rule {}: {}", path, std::strerror(errno));
      return false;
    }
    return true;
  };

  // No device nodes made in writable folders: one would lead around the device rules.
  const uint64_t all = fs_rights(r.abi) & ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK);
  const uint64_t read_exec = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  uint64_t device = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  if (r.abi >= 3) device |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (r.abi >= 5) device |= LANDLOCK_ACCESS_FS_IOCTL_DEV;  // CUDA drives the GPU through ioctls

  if (!add("/", read_exec)) return r;
  for (const auto& dir : rules.writable_dirs)
    if (!add(dir, all)) return r;
  for (const auto& dev : rules.devices)
    if (!add(dev, device)) return r;

  if (restrict_self(ruleset.get()) != 0) {
    r.error = fmt::format("landlock_restrict_self: {}", std::strerror(errno));
    return r;
  }
  r.ok = true;
  r.error.clear();
  r.tcp_restricted = attr.handled_access_net != 0;
  r.scoped = attr.scoped != 0;
  return r;
}

std::vector<std::string> nvidia_device_paths() {
  // opendir rather than std::filesystem: inside kagent-worker libtorch's copy of it wins.
  std::vector<std::string> out;
  DIR* dir = ::opendir("/dev");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir))
    if (std::strncmp(e->d_name, "nvidia", 6) == 0) out.push_back(std::string("/dev/") + e->d_name);
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kagent::sandbox
