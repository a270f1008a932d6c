// The sandbox's pure parts: policy parsing, the seccomp program (run through a small BPF
// interpreter), the monitor's path rules, mountinfo parsing, uid maps.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <map>

#include "sandbox/cgroup_pids.h"
#include "sandbox/credentials.h"
#include "sandbox/namespaces.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_section.h"
#include "sandbox/scratch_dir.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/violation_monitor.h"
#include "sandbox/violation_verdict.h"

using namespace kagent::sandbox;

namespace {

SandboxPolicy from(std::map<std::string, std::string> env) {
  return SandboxPolicy::from_environment([&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// Classic BPF, the subset the filter uses: LD|W|ABS, JEQ/JGE/JSET with K, RET|K.
uint32_t run_bpf(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  uint32_t a = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&data);
  for (size_t pc = 0; pc < prog.size();) {
    const sock_filter& f = prog[pc];
    switch (f.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        REQUIRE(f.k + 4 <= sizeof data);
        std::memcpy(&a, bytes + f.k, 4);
        ++pc;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K: pc += 1 + (a == f.k ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JGE | BPF_K: pc += 1 + (a >= f.k ? f.jt : f.jf); break;
      case BPF_JMP | BPF_JSET | BPF_K: pc += 1 + ((a & f.k) ? f.jt : f.jf); break;
      case BPF_RET | BPF_K: return f.k;
      default: FAIL("unexpected BPF instruction " << f.code); return 0;
    }
  }
  FAIL("the program ran off its end");
  return 0;
}

seccomp_data call(long nr, std::initializer_list<uint64_t> args = {}) {
  seccomp_data d{};
#if defined(__x86_64__)
  d.arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  d.arch = AUDIT_ARCH_AARCH64;
#endif
  d.nr = static_cast<int>(nr);
  int i = 0;
  for (uint64_t a : args) d.args[i++] = a;
  return d;
}

}  // namespace

TEST_CASE("policy: defaults, environment, round trip, bad values") {
  SandboxPolicy d = from({});
  CHECK(d.enabled);
  CHECK(d.memory_bytes == uint64_t{32} << 30);
  CHECK(d.processes == 64);
  CHECK(d.file_size_bytes == uint64_t{1} << 30);
  CHECK(d.cpu_seconds_per_request == 600);
  CHECK(d.allows(mechanism::kLandlock));

  SandboxPolicy p = from({{"KAGENT_SANDBOX_MEMORY_MB", "4096"},
                          {"KAGENT_SANDBOX_PROCESSES", "10"},
                          {"KAGENT_SANDBOX_FILE_SIZE_MB", "5"},
                          {"KAGENT_SANDBOX_CPU_SECONDS", "7"},
                          {"KAGENT_SANDBOX_SCRATCH", "/tmp/x"},
                          {"KAGENT_SANDBOX_UID", "0"},
                          {"KAGENT_SANDBOX_DISABLE", "landlock,netns"}});
  CHECK(p.memory_bytes == uint64_t{4} << 30);
  CHECK(p.processes == 10);
  CHECK(p.file_size_bytes == 5u << 20);
  CHECK(p.cpu_seconds_per_request == 7);
  CHECK(p.scratch == "/tmp/x");
  CHECK(p.uid == 0u);
  CHECK_FALSE(p.allows(mechanism::kLandlock));
  CHECK_FALSE(p.allows(mechanism::kNetNs));
  CHECK(p.allows(mechanism::kSeccomp));

  std::map<std::string, std::string> env;
  for (const auto& kv : p.to_environment()) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  SandboxPolicy q = from(env);
  CHECK(q.memory_bytes == p.memory_bytes);
  CHECK(q.processes == p.processes);
  CHECK(q.file_size_bytes == p.file_size_bytes);
  CHECK(q.cpu_seconds_per_request == p.cpu_seconds_per_request);
  CHECK(q.scratch == p.scratch);
  CHECK(q.scratch_disposable == p.scratch_disposable);
  CHECK(q.uid == p.uid);
  CHECK(q.disabled == p.disabled);

  CHECK_FALSE(from({{"KAGENT_SANDBOX", "off"}}).enabled);
  CHECK_FALSE(from({{"KAGENT_SANDBOX", "off"}}).allows(mechanism::kSeccomp));
  CHECK_THROWS_WITH(from({{"KAGENT_SANDBOX_PROCESSES", "many"}}), doctest::Contains("KAGENT_SANDBOX_PROCESSES"));
  CHECK_THROWS_WITH(from({{"KAGENT_SANDBOX_DISABLE", "landlok"}}), doctest::Contains("landlok"));
  CHECK_THROWS(from({{"KAGENT_SANDBOX", "maybe"}}));
  CHECK_THROWS(from({{"KAGENT_SANDBOX_MEMORY_MB", "0"}}));
}

TEST_CASE("seccomp program: what it refuses, notifies and lets through") {
  for (bool notify : {true, false}) {
    CAPTURE(notify);
    auto prog = build_filter({notify});
    REQUIRE_FALSE(prog.empty());
    CHECK(prog.size() < 256);
    const uint32_t watched = notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW;
    const uint32_t refused_socket = notify ? SECCOMP_RET_USER_NOTIF : (SECCOMP_RET_ERRNO | EACCES);
    CHECK(run_bpf(prog, call(__NR_socket, {AF_INET, SOCK_STREAM})) == refused_socket);
    CHECK(run_bpf(prog, call(__NR_socket, {AF_INET6, SOCK_DGRAM})) == refused_socket);
    CHECK(run_bpf(prog, call(__NR_socket, {AF_PACKET, SOCK_RAW})) == refused_socket);
    CHECK(run_bpf(prog, call(__NR_socket, {AF_UNIX, SOCK_STREAM})) == SECCOMP_RET_ALLOW);
    CHECK(run_bpf(prog, call(__NR_socket, {AF_NETLINK, SOCK_RAW})) == SECCOMP_RET_ALLOW);
    // A thread, a process, a namespace.
    CHECK(run_bpf(prog, call(__NR_clone, {static_cast<uint64_t>(CLONE_VM | CLONE_THREAD | CLONE_SIGHAND)})) == SECCOMP_RET_ALLOW);
    CHECK(run_bpf(prog, call(__NR_clone, {static_cast<uint64_t>(SIGCHLD)})) == watched);
    CHECK(run_bpf(prog, call(__NR_clone, {static_cast<uint64_t>(SIGCHLD | CLONE_NEWUSER)})) == (SECCOMP_RET_ERRNO | EPERM));
    CHECK(run_bpf(prog, call(__NR_clone3)) == (SECCOMP_RET_ERRNO | ENOSYS));
    CHECK(run_bpf(prog, call(__NR_unshare, {static_cast<uint64_t>(CLONE_NEWNET)})) == (SECCOMP_RET_ERRNO | EPERM));
    CHECK(run_bpf(prog, call(__NR_mount)) == (SECCOMP_RET_ERRNO | EPERM));
    CHECK(run_bpf(prog, call(__NR_io_uring_setup)) == (SECCOMP_RET_ERRNO | EPERM));
    CHECK(run_bpf(prog, call(__NR_ptrace)) == (SECCOMP_RET_ERRNO | EPERM));
    // Opens: reading passes, writing goes to the monitor.
    CHECK(run_bpf(prog, call(__NR_openat, {static_cast<uint64_t>(AT_FDCWD), 0, O_RDONLY})) == SECCOMP_RET_ALLOW);
    CHECK(run_bpf(prog, call(__NR_openat, {static_cast<uint64_t>(AT_FDCWD), 0, O_WRONLY | O_CREAT})) == watched);
    CHECK(run_bpf(prog, call(__NR_openat, {static_cast<uint64_t>(AT_FDCWD), 0, O_RDWR})) == watched);
    CHECK(run_bpf(prog, call(__NR_openat2)) == (SECCOMP_RET_ERRNO | ENOSYS));
    // Changes of the file tree: to the monitor, which judges their paths.
    for (long nr : {long{__NR_mkdirat}, long{__NR_unlinkat}, long{__NR_renameat2}, long{__NR_linkat},
                    long{__NR_symlinkat}, long{__NR_fchmodat}, long{__NR_fchownat}, long{__NR_mknodat}})
      CHECK(run_bpf(prog, call(nr)) == watched);
    CHECK(watched_path_call(__NR_renameat2)->paths.size() == 2);
    CHECK(watched_path_call(__NR_read) == nullptr);
    // Everything else passes; another architecture's table does not.
    CHECK(run_bpf(prog, call(__NR_read)) == SECCOMP_RET_ALLOW);
    CHECK(run_bpf(prog, call(__NR_ioctl)) == SECCOMP_RET_ALLOW);
    seccomp_data foreign = call(__NR_read);
    foreign.arch = AUDIT_ARCH_I386;
    CHECK(run_bpf(prog, foreign) == (SECCOMP_RET_ERRNO | ENOSYS));
#if defined(__x86_64__)
    CHECK(run_bpf(prog, call(__NR_socket | 0x40000000, {AF_INET})) == (SECCOMP_RET_ERRNO | ENOSYS));
    CHECK(run_bpf(prog, call(__NR_fork)) == watched);
    CHECK(run_bpf(prog, call(__NR_open, {0, O_WRONLY})) == watched);
    CHECK(run_bpf(prog, call(__NR_open, {0, O_RDONLY})) == SECCOMP_RET_ALLOW);
    CHECK(run_bpf(prog, call(__NR_mkdir)) == watched);
    CHECK(run_bpf(prog, call(__NR_rename)) == watched);
    CHECK(run_bpf(prog, call(__NR_truncate)) == watched);
#endif
  }
}

TEST_CASE("monitor rules: paths are normalized and judged against the writable folders") {
  CHECK(normalize_path("/", "/a/./b/../c") == "/a/c");
  CHECK(normalize_path("/work/dir", "x/y") == "/work/dir/x/y");
  CHECK(normalize_path("/work/dir", "../../../etc/passwd") == "/etc/passwd");
  CHECK(normalize_path("/", "//a//b/") == "/a/b");
  CHECK(normalize_path("/", "/..") == "/");
  MonitorRules rules{{"/tmp/scratch-1", "/dev/shm"}, 64, ""};
  CHECK(classify_write("/tmp/scratch-1", rules) == WriteVerdict::Allowed);
  CHECK(classify_write("/tmp/scratch-1/home/.nv/x", rules) == WriteVerdict::Allowed);
  CHECK(classify_write("/tmp/scratch-10/x", rules) == WriteVerdict::Violation);
  CHECK(classify_write("/tmp/x", rules) == WriteVerdict::Violation);
  CHECK(classify_write("/root/.cache/kagent/baselines/k.json", rules) == WriteVerdict::Violation);
  CHECK(classify_write("/dev/shm/sem.x", rules) == WriteVerdict::Allowed);
  CHECK(classify_write("/dev/nvidiactl", rules) == WriteVerdict::Allowed);
  CHECK(classify_write("/proc/self/task/12/comm", rules) == WriteVerdict::Unrecorded);
  CHECK(classify_write("/sys/kernel/x", rules) == WriteVerdict::Unrecorded);
  CHECK(classify_write("/devices", rules) == WriteVerdict::Violation);
}

TEST_CASE("violations travel as JSON") {
  Violations v;
  v.network = 1;
  v.processes = 2;
  v.details = {"socket(AF_INET)"};
  v.killed = {12, 13};
  Violations back = nlohmann::json(v).get<Violations>();
  CHECK(back.network == 1);
  CHECK(back.filesystem == 0);
  CHECK(back.processes == 2);
  CHECK(back.details == v.details);
  CHECK(back.killed == v.killed);
  CHECK(back.any());
  CHECK_FALSE(Violations().any());
}

TEST_CASE("mountinfo: mount points unescaped, options kept") {
  auto mounts = parse_mountinfo(
      "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "40 25 0:35 / /mnt/with\\040space ro,relatime - tmpfs tmpfs rw\n");
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[0].mount_point == "/proc");
  CHECK(mounts[0].options == "rw,nosuid,nodev,noexec,relatime");
  CHECK(mounts[1].mount_point == "/mnt/with space");
}

TEST_CASE("uid maps: a unique uid where mapped, else nobody, else none") {
  const std::string full = "0 0 4294967295\n";
  CHECK(default_sandbox_uid(1234, full, full) == kUniqueUidBase + 1234);
  const std::string docker_remap = "0 100000 65536\n";
  CHECK(default_sandbox_uid(1234, docker_remap, docker_remap) == 65534u);
  const std::string tiny = "0 1000 1\n";
  CHECK_FALSE(default_sandbox_uid(1234, tiny, tiny).has_value());
  CHECK(id_mapped(5, "0 0 10\n"));
  CHECK_FALSE(id_mapped(10, "0 0 10\n"));
}

TEST_CASE("a violation turns any verdict into runtime_error with the sandbox's reason") {
  nlohmann::json reply = {{"ok", true},
                          {"result", {{"status", "correct"}, {"reason", ""}, {"message", "correct in 5 trials"},
                                      {"runtime_error", ""}, {"timing", {{"baseline_cache_hit", false}}}}}};
  nlohmann::json unchanged = reply;
  apply_violations(unchanged, Violations());
  CHECK(unchanged == reply);

  Violations fs;
  fs.filesystem = 1;
  fs.processes = 3;
  fs.details = {"open /etc/x for writing", "more than 64 processes"};
  apply_violations(reply, fs);
  const auto& r = reply["result"];
  CHECK(r["status"] == "runtime_error");
  CHECK(r["reason"] == kReasonFilesystem);  // files before processes
  CHECK(r["message"].get<std::string>().find("/etc/x") != std::string::npos);
  CHECK(r["runtime_error"].get<std::string>().find("correct: correct in 5 trials") != std::string::npos);
  CHECK(r.contains("timing"));

  Violations net;
  net.network = 1;
  net.filesystem = 1;
  apply_violations(reply, net);
  CHECK(reply["result"]["reason"] == kReasonNetwork);  // network first

  nlohmann::json error_reply = {{"ok", false}, {"error", {{"kind", "bad_request"}}}};
  apply_violations(error_reply, net);
  CHECK_FALSE(error_reply.contains("result"));
}

TEST_CASE("scratch parent: a folder under a private one is out of the sandbox uid's reach; /tmp instead") {
  // Made in /tmp itself, whose ancestors this test knows: searchable by others everywhere.
  REQUIRE(searchable_by_others("/tmp"));
  std::string made = "/tmp/kagent-scratch-parent-XXXXXX";
  REQUIRE(::mkdtemp(made.data()));  // 0700
  const std::string inner = made + "/tmp";
  REQUIRE(::mkdir(inner.c_str(), 0755) == 0);
  CHECK(searchable_by_others("/"));
  CHECK_FALSE(searchable_by_others(made));
  CHECK_FALSE(searchable_by_others(inner));  // open itself, behind a private parent
  CHECK_FALSE(searchable_by_others(inner + "/missing"));
  CHECK_FALSE(searchable_by_others("relative/path"));
  CHECK(default_scratch_parent(inner) == "/tmp");
  REQUIRE(::chmod(made.c_str(), 0755) == 0);
  CHECK(searchable_by_others(inner));
  CHECK(searchable_by_others(inner + "/"));
  CHECK(default_scratch_parent(inner) == inner);
  ::rmdir(inner.c_str());
  ::rmdir(made.c_str());
}

namespace sandbox = kagent::sandbox;

TEST_CASE("pids cgroup: v1's pids hierarchy found from mountinfo and /proc/self/cgroup") {
  const std::string mountinfo =
      "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
      "35 30 0:31 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,pids\n"
      "36 30 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
  std::string error;
  auto h = sandbox::find_pids_hierarchy(mountinfo, "8:pids:/user.slice\n4:memory:/x\n0::/\n", &error);
  REQUIRE(h.has_value());
  CHECK(h->parent == "/sys/fs/cgroup/pids/user.slice");
  CHECK_FALSE(h->v2);
  // A mount whose root is a group of its own (a container's view): the path is taken below it.
  const std::string container = "35 30 0:31 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
  h = sandbox::find_pids_hierarchy(container, "8:pids:/docker/abc/sub\n", &error);
  REQUIRE(h.has_value());
  CHECK(h->parent == "/sys/fs/cgroup/pids/sub");
  // No pids controller at all: none, and why.
  CHECK_FALSE(sandbox::find_pids_hierarchy("36 30 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                                           "4:memory:/x\n", &error));
  CHECK(error.find("no pids controller") != std::string::npos);
}

TEST_CASE("the result's sandbox section: a mechanism or none and why per property; the requirement") {
  const nlohmann::json report = {
      {"enabled", true},
      {"network", "netns"},
      {"filesystem", "uid"},
      {"processes", "none"},
      {"memory", "rlimit_data"},
      {"file_size", "rlimit_fsize"},
      {"cpu_time", "rlimit_cpu"},
      {"violations_reported", true},
      {"memory_watchdog", {{"limit_bytes", 1}}},
      {"layers", {{"network", {"netns", "seccomp"}}, {"filesystem", {"uid", "seccomp_notify"}}, {"processes", nlohmann::json::array()}}},
      {"notes", {"cgroup_pids: no pids controller is mounted", "rlimit_nproc: uid 0 is exempt from it", "landlock: x"}},
      {"redirected", {{"HOME", "/s/home"}}},
      {"cuda_fallback", {{"left_out", {"landlock", "mount_ns"}}}}};
  sandbox::Violations v;
  v.filesystem = 1;
  v.details = {"open /root/x for writing"};
  const nlohmann::json s = sandbox::result_section(report, v);
  CHECK(s["properties"]["network"]["mechanism"] == "netns");
  CHECK(s["properties"]["host_memory"]["mechanism"] == "watchdog");
  CHECK(s["properties"]["host_memory"]["layers"] == nlohmann::json({"watchdog", "rlimit_data"}));
  CHECK(s["properties"]["processes"]["mechanism"] == "none");
  const std::string why = s["properties"]["processes"]["why"];
  CHECK(why.find("uid 0 is exempt") != std::string::npos);
  CHECK(why.find("cgroup_pids") != std::string::npos);
  CHECK(why.find("landlock") == std::string::npos);  // another property's note
  CHECK(s["redirected"]["HOME"] == "/s/home");
  CHECK(s["violations"]["filesystem"] == 1);
  CHECK(s["left_out_for_cuda"].size() == 2);
  CHECK(sandbox::unheld_properties(s) == std::vector<std::string>{"processes"});
  CHECK(sandbox::result_section(report, std::nullopt)["violations"].is_null());

  CHECK(sandbox::required_properties(nullptr).empty());
  CHECK(sandbox::required_properties("processes, filesystem,network").size() == 3);
  CHECK_THROWS_AS(sandbox::required_properties("processes,gpu"), std::invalid_argument);
  CHECK(sandbox::unmet_requirement(s, {"network", "filesystem"}).empty());
  const std::string unmet = sandbox::unmet_requirement(s, {"processes", "network"});
  CHECK(unmet.find("processes (") != std::string::npos);
  CHECK(unmet.find("network") == std::string::npos);
}
