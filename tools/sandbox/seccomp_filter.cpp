#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace kagent::sandbox {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
constexpr bool kKnownArch = true;
constexpr uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
constexpr bool kKnownArch = true;
#else
constexpr uint32_t kArch = 0;
constexpr bool kKnownArch = false;
#endif

constexpr uint32_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                     CLONE_NEWPID | CLONE_NEWNET;
constexpr uint32_t kWriteFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

constexpr uint32_t arg_low(int i) { return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8 * i); }

// A tiny assembler: jumps name labels, resolved to forward offsets at the end.
class Assembler {
 public:
  using Label = int;
  Label label() { return next_label_++; }
  void bind(Label l) { bound_.push_back({l, code_.size()}); }
  void load(uint32_t offset) { emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), -1, -1); }
  void ret(uint32_t action) { emit(BPF_STMT(BPF_RET | BPF_K, action), -1, -1); }
  // if (A op k) goto yes else goto no; -1 means the next instruction.
  void jump(uint16_t op, uint32_t k, Label yes, Label no) {
    emit(BPF_JUMP(static_cast<uint16_t>(BPF_JMP | op | BPF_K), k, 0, 0), yes, no);
  }
  std::vector<sock_filter> finish() {
    for (size_t i = 0; i < code_.size(); ++i) {
      code_[i].jt = offset(i, targets_[i].first);
      code_[i].jf = offset(i, targets_[i].second);
    }
    return code_;
  }

 private:
  void emit(sock_filter f, Label yes, Label no) {
    code_.push_back(f);
    targets_.push_back({yes, no});
  }
  uint8_t offset(size_t from, Label l) const {
    if (l < 0) return 0;
    for (const auto& [label, at] : bound_) {
      if (label != l) continue;
      if (at <= from || at - from - 1 > 255) throw std::logic_error("seccomp filter: jump out of range");
      return static_cast<uint8_t>(at - from - 1);
    }
    throw std::logic_error("seccomp filter: unbound label");
  }
  std::vector<sock_filter> code_;
  std::vector<std::pair<Label, Label>> targets_;
  std::vector<std::pair<Label, size_t>> bound_;
  Label next_label_ = 0;
};

// System calls refused with EPERM.
const std::vector<long>& refused_calls() {
  static const std::vector<long> calls = {
    __NR_unshare, __NR_setns, __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot,
#ifdef __NR_move_mount
    __NR_move_mount, __NR_open_tree, __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
    __NR_open_by_handle_at, __NR_name_to_handle_at,
#ifdef __NR_io_uring_setup
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
#endif
    __NR_ptrace, __NR_process_vm_writev,
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
    __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_bpf, __NR_userfaultfd, __NR_acct, __NR_swapon,
    __NR_swapoff, __NR_reboot, __NR_settimeofday, __NR_clock_settime, __NR_clock_adjtime, __NR_adjtimex,
    __NR_syslog, __NR_quotactl, __NR_add_key, __NR_request_key, __NR_keyctl,
#ifdef __NR_iopl
    __NR_iopl,
#endif
#ifdef __NR_ioperm
    __NR_ioperm,
#endif
  };
  return calls;
}

}  // namespace

const std::vector<PathCall>& watched_path_calls() {
  static const std::vector<PathCall> calls = {
#ifdef __NR_mkdir
    {__NR_mkdir, "mkdir", {{0, -1}}},
#endif
    {__NR_mkdirat, "mkdir", {{1, 0}}},
#ifdef __NR_rmdir
    {__NR_rmdir, "rmdir", {{0, -1}}},
#endif
#ifdef __NR_unlink
    {__NR_unlink, "unlink", {{0, -1}}},
#endif
    {__NR_unlinkat, "unlink", {{1, 0}}},
#ifdef __NR_rename
    {__NR_rename, "rename", {{0, -1}, {1, -1}}},
#endif
#ifdef __NR_renameat
    {__NR_renameat, "rename", {{1, 0}, {3, 2}}},
#endif
    {__NR_renameat2, "rename", {{1, 0}, {3, 2}}},
#ifdef __NR_link
    {__NR_link, "link", {{1, -1}}},
#endif
    {__NR_linkat, "link", {{3, 2}}},
#ifdef __NR_symlink
    {__NR_symlink, "symlink", {{1, -1}}},
#endif
    {__NR_symlinkat, "symlink", {{2, 1}}},
#ifdef __NR_truncate
    {__NR_truncate, "truncate", {{0, -1}}},
#endif
#ifdef __NR_mknod
    {__NR_mknod, "mknod", {{0, -1}}},
#endif
    {__NR_mknodat, "mknod", {{1, 0}}},
#ifdef __NR_chmod
    {__NR_chmod, "chmod", {{0, -1}}},
#endif
    {__NR_fchmodat, "chmod", {{1, 0}}},
#ifdef __NR_fchmodat2
    {__NR_fchmodat2, "chmod", {{1, 0}}},
#endif
#ifdef __NR_chown
    {__NR_chown, "chown", {{0, -1}}},
#endif
#ifdef __NR_lchown
    {__NR_lchown, "chown", {{0, -1}}},
#endif
    {__NR_fchownat, "chown", {{1, 0}}},
  };
  return calls;
}

const PathCall* watched_path_call(long nr) {
  for (const auto& c : watched_path_calls())
    if (c.nr == nr) return &c;
  return nullptr;
}

std::vector<sock_filter> build_filter(const FilterOptions& options) {
  if (!kKnownArch) return {};
  Assembler a;
  auto allow = a.label(), eperm = a.label(), enosys = a.label(), notify = a.label();
  auto socket_rule = a.label(), clone_rule = a.label(), open_arg1 = a.label(), open_arg2 = a.label();
  const uint32_t watched = options.notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;

  a.load(offsetof(seccomp_data, arch));
  a.jump(BPF_JEQ, kArch, -1, enosys);
  a.load(offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  a.jump(BPF_JGE, kX32Bit, enosys, -1);
#endif
  a.jump(BPF_JEQ, __NR_socket, socket_rule, -1);
  a.jump(BPF_JEQ, __NR_clone, clone_rule, -1);
#ifdef __NR_clone3
  a.jump(BPF_JEQ, __NR_clone3, enosys, -1);
#endif
#ifdef __NR_openat2
  a.jump(BPF_JEQ, __NR_openat2, enosys, -1);
#endif
  if (options.notify) {
#ifdef __NR_fork
    a.jump(BPF_JEQ, __NR_fork, notify, -1);
#endif
#ifdef __NR_vfork
    a.jump(BPF_JEQ, __NR_vfork, notify, -1);
#endif
#ifdef __NR_open
    a.jump(BPF_JEQ, __NR_open, open_arg1, -1);
#endif
#ifdef __NR_creat
    a.jump(BPF_JEQ, __NR_creat, notify, -1);
#endif
    a.jump(BPF_JEQ, __NR_openat, open_arg2, -1);
    for (const auto& c : watched_path_calls()) a.jump(BPF_JEQ, static_cast<uint32_t>(c.nr), notify, -1);
  }
  for (long nr : refused_calls()) a.jump(BPF_JEQ, static_cast<uint32_t>(nr), eperm, -1);
  a.ret(SECCOMP_RET_ALLOW);

  a.bind(socket_rule);  // socket(family, type, protocol)
  a.load(arg_low(0));
  a.jump(BPF_JEQ, AF_UNIX, allow, -1);
  a.jump(BPF_JEQ, AF_NETLINK, allow, -1);
  a.ret(options.notify ? SECCOMP_RET_USER_NOTIF : (SECCOMP_RET_ERRNO | EACCES));

  a.bind(clone_rule);  // clone(flags, ...)
  a.load(arg_low(0));
  a.jump(BPF_JSET, kNamespaceFlags, eperm, -1);
  a.jump(BPF_JSET, CLONE_THREAD, allow, -1);
  a.ret(watched);

  a.bind(open_arg1);  // open(path, flags, mode)
  a.load(arg_low(1));
  a.jump(BPF_JSET, kWriteFlags, notify, allow);

  a.bind(open_arg2);  // openat(dirfd, path, flags, mode)
  a.load(arg_low(2));
  a.jump(BPF_JSET, kWriteFlags, notify, allow);

  a.bind(allow);
  a.ret(SECCOMP_RET_ALLOW);
  a.bind(eperm);
  a.ret(SECCOMP_RET_ERRNO | EPERM);
  a.bind(enosys);
  a.ret(SECCOMP_RET_ERRNO | ENOSYS);
  a.bind(notify);
  a.ret(watched);
  return a.finish();
}

bool user_notification_available() {
  uint32_t action = SECCOMP_RET_USER_NOTIF;
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

InstallResult install_filter(const std::vector<sock_filter>& program, bool want_listener) {
  InstallResult r;
  if (program.empty()) {
    r.error = "no filter for this architecture";
    return r;
  }
  sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, want_listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0,
                      &prog);
  if (rc < 0) {
    r.error = fmt::format("seccomp(SECCOMP_SET_MODE_FILTER{}): {}", want_listener ? ", NEW_LISTENER" : "",
                          std::strerror(errno));
    return r;
  }
  if (want_listener) r.listener = Fd(static_cast<int>(rc));
  r.ok = true;
  return r;
}

}  // namespace kagent::sandbox
