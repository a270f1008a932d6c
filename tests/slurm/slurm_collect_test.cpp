// scripts/slurm/collect.sbatch on a real Slurm: munged, slurmctld and slurmd (Debian's packages)
// started by the test on loopback, configured in its own temp folder. The script runs as a
// 4-task array (one shard each, compile-only collection) and submits its merge job; the merged
// collection must equal a single-process run, trajectory by trajectory. scripts/slurm/serve.sbatch
// on the same cluster starts Redis and a `kagent serve --queue` node that answers /health with
// its queue reachable, and scancel stops both. Skipped, saying why, only where Slurm (or, for
// serve.sbatch, redis-server) is not installed or its daemons cannot start here.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "collect_fixtures.h"
#include "collection_compare.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "kagent_process.h"
#include "loopback_port.h"

using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

std::string find_program(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"})
    if (::access((std::string(dir) + "/" + name).c_str(), X_OK) == 0) return std::string(dir) + "/" + name;
  return {};
}

std::string tail(const fs::path& file, size_t bytes = 1500) {
  if (!fs::exists(file)) return "(no " + file.filename().string() + ")";
  std::string s = kagent::read_file(file);
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

// A Slurm cluster of one node on loopback, everything under `dir`; torn down on destruction.
class LoopbackSlurm {
 public:
  explicit LoopbackSlurm(const fs::path& dir) : dir_(dir) {}
  ~LoopbackSlurm() {
    if (ctld_) run({"scontrol", "shutdown"}, 20);
    slurmd_.reset();
    ctld_.reset();
    munged_.reset();
  }

  // Why the cluster could not start, or empty when it runs.
  std::string start() {
    for (const char* p : {"munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "setpriv"})
      if (find_program(p).empty())
        return fmt::format("{} not found (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)", p);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::string user = ::getpwuid(::getuid())->pw_name;
    for (const char* d : {"munge", "state", "spool", "log"}) fs::create_directories(dir_ / d);
    fs::permissions(dir_ / "munge", fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    {
      std::ofstream key(dir_ / "munge" / "munge.key", std::ios::binary);
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::string bytes(1024, '\0');
      random.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      key << bytes;
    }
    fs::permissions(dir_ / "munge" / "munge.key", fs::perms::owner_read);
    const std::string sock = (dir_ / "munge" / "socket").string();
    munged_ = spawn({find_program("munged"), "-F", "--force", "--socket=" + sock,
                     "--key-file=" + (dir_ / "munge" / "munge.key").string(), "--log-file=" + (dir_ / "log" / "munged.log").string(),
                     "--pid-file=" + (dir_ / "munge" / "munged.pid").string(),
                     "--seed-file=" + (dir_ / "munge" / "munged.seed").string()},
                    "munged.out");
    if (!wait_for([&] { return fs::exists(sock); }, 20)) return "munged did not start: " + tail(dir_ / "log" / "munged.out");

    conf_ = dir_ / "slurm.conf";
    std::ofstream(conf_) << fmt::format(
        "ClusterName=kagenttest\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser={user}\nSlurmdUser={user}\n"
        "SlurmctldPort={cport}\nSlurmdPort={dport}\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\n"
        "StateSaveLocation={dir}/state\nSlurmdSpoolDir={dir}/spool\nSlurmctldPidFile={dir}/slurmctld.pid\n"
        "SlurmdPidFile={dir}/slurmd.pid\nSlurmctldLogFile={dir}/log/slurmctld.log\nSlurmdLogFile={dir}/log/slurmd.log\n"
        "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
        "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nMpiDefault=none\nReturnToService=2\n"
        "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nGresTypes=gpu\n"
        "NodeName=kagentnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=2000 State=UNKNOWN\n"
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8\n",
        fmt::arg("host", host), fmt::arg("user", user), fmt::arg("cport", free_port()), fmt::arg("dport", free_port()),
        fmt::arg("sock", sock), fmt::arg("dir", dir_.string()),
        fmt::arg("cpus", std::max(1u, std::thread::hardware_concurrency())));
    ctld_ = spawn({find_program("slurmctld"), "-D", "-c", "-f", conf_.string()}, "slurmctld.out");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    slurmd_ = spawn({find_program("slurmd"), "-D", "-N", "kagentnode", "-f", conf_.string()}, "slurmd.out");
    if (!wait_for([&] { return run({"sinfo", "-h", "-o", "%T"}, 10).output.find("idle") != std::string::npos; }, 60))
      return "slurmctld/slurmd did not come up:\n" + tail(dir_ / "log" / "slurmctld.log") + "\n" + tail(dir_ / "log" / "slurmd.log") +
             "\n" + tail(dir_ / "log" / "slurmd.out");
    return {};
  }

  kagent::RunResult run(const std::vector<std::string>& argv, int timeout_s, std::vector<std::string> env = {}) const {
    kagent::SpawnOptions o;
    o.argv = argv;
    o.argv[0] = find_program(argv[0]).empty() ? argv[0] : find_program(argv[0]);
    o.env_set = std::move(env);
    o.env_set.push_back("SLURM_CONF=" + conf_.string());
    return kagent::run_command(o, std::chrono::seconds(timeout_s));
  }

  template <class Pred>
  static bool wait_for(Pred ready, int seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return ready();
  }

 private:
  // A daemon in the foreground that dies with the test (setpriv --pdeathsig), even when the test
  // itself is killed before its destructors run.
  std::unique_ptr<kagent::Subprocess> spawn(std::vector<std::string> argv, const std::string& out) const {
    kagent::SpawnOptions o;
    o.argv = {"setpriv", "--pdeathsig", "KILL", "--"};
    o.argv.insert(o.argv.end(), argv.begin(), argv.end());
    o.output_file = (dir_ / "log" / out).string();
    o.env_set = {"SLURM_CONF=" + conf_.string()};
    return std::make_unique<kagent::Subprocess>(o);
  }

  fs::path dir_, conf_;
  std::unique_ptr<kagent::Subprocess> munged_, ctld_, slurmd_;
};

}  // namespace

TEST_CASE("collect.sbatch: a 4-shard array and its merge job equal a single-process collection") {
  TempDir dir("kagent-slurm");
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  LoopbackSlurm slurm(dir.path() / "slurm");
  if (const std::string why = slurm.start(); !why.empty()) {
    MESSAGE("SKIPPED: no Slurm here: " << why);
    return;
  }

  // Six problems so that every shard gets some (the shard is a hash of the name).
  write_tiny_suite(dir, "suite");
  dir.write("suite/level1/3_neg.py", tiny_problem("-x"));
  dir.write("suite/level1/4_square.py", tiny_problem("x * x"));
  dir.write("suite/level2/2_relu_neg.py", tiny_problem("-torch.relu(x)"));
  const std::vector<std::string> names = {"1_relu", "2_double", "3_neg", "4_square", "1_relu_double", "2_relu_neg"};
  const std::string replay = write_tiny_replay(dir, "answers.jsonl", names, 2, 2, 0);
  const std::string suite = dir.str() + "/suite";
  const std::vector<std::string> flags = {"-n", "2", "-t", "2", "--llm", "replay:" + replay, "--compile-only"};

  std::vector<std::string> single = {"collect", suite, "--out", dir.str() + "/single"};
  single.insert(single.end(), flags.begin(), flags.end());
  KagentRun ref = run_kagent(single, {}, dir.str());
  INFO(ref.err);
  REQUIRE(ref.status == 0);

  // The array, as a user submits it (this node has no GPU and few cores: --gres=none and
  // --cpus-per-task=1 replace the script's gpu:1 and 8 cores).
  const std::string out = dir.str() + "/sharded";
  std::vector<std::string> submit = {"sbatch", "--parsable", "--gres=none", "--cpus-per-task=1", "--array=0-3",
                                     "--output=" + dir.str() + "/task-%a.out", "--chdir=" + dir.str(),
                                     std::string(KAGENT_SOURCE_DIR) + "/scripts/slurm/collect.sbatch", suite, out};
  submit.insert(submit.end(), flags.begin(), flags.end());
  const auto sub = slurm.run(submit, 60,
                             {"KAGENT=" + std::string(KAGENT_BINARY_DIR) + "/kagent", "KAGENT_CACHE_DIR=" + dir.str() + "/cache",
                              "HOME=" + dir.str()});
  INFO(sub.output);
  REQUIRE(sub.exit.exited);
  REQUIRE(sub.exit.code == 0);
  // The merge job is queued by the array's first task while it runs: an empty queue means all is done.
  const bool drained = LoopbackSlurm::wait_for([&] { return slurm.run({"squeue", "-h"}, 10).output.empty(); }, 900);
  std::string logs;
  for (int i = 0; i < 4; ++i) logs += tail(dir.path() / fmt::format("task-{}.out", i), 600) + "\n";
  logs += tail(fs::path(out) / "merged.out");
  INFO(logs);
  REQUIRE(drained);
  REQUIRE(fs::exists(out + "/merged/metrics.json"));

  // Every shard ran its own part of the suite (these six names spread over all four shards).
  std::set<std::string> sharded;
  for (int i = 0; i < 4; ++i) {
    const auto m = nlohmann::json::parse(kagent::read_file(fmt::format("{}/shard-{}/manifest.json", out, i)));
    CHECK(m["shard"]["index"] == i);
    CHECK(m["shard"]["count"] == 4);
    CHECK_FALSE(m["suite"]["problems"].empty());
    for (const auto& p : m["suite"]["problems"]) CHECK(sharded.insert(p["name"].get<std::string>()).second);
  }
  CHECK(sharded == std::set<std::string>(names.begin(), names.end()));
  const CollectionDigest got = digest_collection(out + "/merged");
  const CollectionDigest want = digest_collection(dir.path() / "single");
  CHECK(got.duplicate_lines.empty());
  REQUIRE(got.trajectories.size() == names.size() * 2);
  CHECK(got.trajectories == want.trajectories);
  CHECK(got.index_lines == want.index_lines);
  CHECK(got.metrics == want.metrics);
  CHECK(has(kagent::read_file(out + "/merged.out"), "merged    4 collection(s)"));
}

namespace {

// GET http://127.0.0.1:port/health by hand (this test links no HTTP client): the body, or "".
std::string health_body(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string text;
  const std::string request = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const auto body = text.find("\r\n\r\n");
  return body == std::string::npos ? "" : text.substr(body + 4);
}

}  // namespace

TEST_CASE("serve.sbatch: Redis and a kagent serve --queue node in a Slurm job; scancel stops them") {
  TempDir dir("kagent-slurm-serve");
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  if (find_program("redis-server").empty() || find_program("redis-cli").empty()) {
    MESSAGE("SKIPPED: redis-server or redis-cli not installed (scripts/setup.sh installs redis-server)");
    return;
  }
  LoopbackSlurm slurm(dir.path() / "slurm");
  if (const std::string why = slurm.start(); !why.empty()) {
    MESSAGE("SKIPPED: no Slurm here: " << why);
    return;
  }
  write_tiny_suite(dir, "suite");
  const std::string out = dir.str() + "/served";
  const int port = free_port(), redis_port = free_port();
  const auto sub = slurm.run({"sbatch", "--parsable", "--gres=none", "--cpus-per-task=1", "--nodes=1",
                              "--output=" + dir.str() + "/serve.out", "--chdir=" + dir.str(),
                              std::string(KAGENT_SOURCE_DIR) + "/scripts/slurm/serve.sbatch", dir.str() + "/suite", out,
                              "--compile-only"},
                             60,
                             {"KAGENT=" + std::string(KAGENT_BINARY_DIR) + "/kagent", "KAGENT_CACHE_DIR=" + dir.str() + "/cache",
                              "HOME=" + dir.str(), "KAGENT_SERVE_PORT=" + std::to_string(port),
                              "KAGENT_REDIS_PORT=" + std::to_string(redis_port)});
  INFO(sub.output);
  REQUIRE(sub.exit.exited);
  REQUIRE(sub.exit.code == 0);
  std::string job = sub.output;
  while (!job.empty() && (job.back() == '\n' || job.back() == ' ')) job.pop_back();
  std::string health;
  const bool up = LoopbackSlurm::wait_for(
      [&] {
        health = health_body(port);
        return health.find("\"status\":\"ok\"") != std::string::npos;
      },
      180);
  INFO(tail(dir.path() / "serve.out"), "\n", health);
  REQUIRE(up);
  const auto h = nlohmann::json::parse(health);
  CHECK(h["queue"]["reachable"] == true);
  CHECK(h["queue"]["url"] == "redis://127.0.0.1:" + std::to_string(redis_port));
  CHECK(h["queue"]["nodes"].size() == 1);
  CHECK(kagent::read_file(out + "/urls.txt") == "http://127.0.0.1:" + std::to_string(port) + "\n");
  CHECK(fs::exists(out + "/redis/appendonlydir"));
  CHECK(slurm.run({"scancel", job}, 30).exit.code == 0);
  CHECK(LoopbackSlurm::wait_for([&] { return slurm.run({"squeue", "-h"}, 10).output.empty(); }, 120));
  CHECK(health_body(port).empty());
}
