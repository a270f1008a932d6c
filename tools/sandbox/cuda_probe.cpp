#include "sandbox/cuda_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace kagent::sandbox {

namespace m = mechanism;

namespace {

constexpr unsigned kProbeSeconds = 60;  // a probe that hangs is killed by its own alarm

// Exit status of `self --probe-cuda` under `policy`; -1 when it could not run.
int run_probe(const SandboxPolicy& policy, const std::string& self, std::string& why) {
  // The probe gets a scratch folder of its own, made and removed by its own sandbox.
  SandboxPolicy probe = policy;
  probe.scratch.clear();
  probe.scratch_disposable = false;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "KAGENT_SANDBOX", 14) != 0) env.emplace_back(*e);
  for (auto& kv : probe.to_environment()) env.push_back(std::move(kv));
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::string arg0 = self, arg1 = kCudaProbeArg;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  const pid_t pid = ::fork();  // this process is still single-threaded here
  if (pid < 0) {
    why = fmt::format("fork: {}", std::strerror(errno));
    return -1;
  }
  if (pid == 0) {
    ::alarm(kProbeSeconds);  // survives execve
    // The protocol pipes stay with the worker.
    ::close(3);
    ::close(4);
    ::execve(self.c_str(), argv, envp.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      why = fmt::format("waitpid: {}", std::strerror(errno));
      return -1;
    }
  if (WIFSIGNALED(status)) {
    why = fmt::format("the probe died of signal {}", WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

}  // namespace

bool gpu_nodes_present() {
  struct stat st {};
  return ::stat("/dev/nvidiactl", &st) == 0;
}

nlohmann::json CudaLayerChoice::report() const {
  return {{"left_out", left_out},
          {"why", device_found ? "CUDA saw no device with these layers in force on this machine"
                               : "CUDA saw no device under any configuration; the sandbox is kept whole"},
          {"failures", failures},
          {"probe_seconds", seconds}};
}

CudaLayerChoice choose_cuda_layers(const SandboxPolicy& policy, const std::string& self) {
  CudaLayerChoice choice;
  const char* checked = std::getenv(kCudaCheckedEnv);
  if (!policy.enabled || !gpu_nodes_present() || (checked && std::strcmp(checked, "1") == 0)) return choice;
  static constexpr const char* kSteps[] = {m::kLandlock, m::kMountNs, m::kUid};
  const auto start = std::chrono::steady_clock::now();
  choice.probed = true;
  SandboxPolicy trial = policy;
  std::vector<std::string> left_out;
  std::string left_out_text;
  size_t next = 0;
  for (;;) {
    std::string why;
    const int rc = run_probe(trial, self, why);
    if (rc == 0) {
      choice.left_out = left_out;
      break;
    }
    choice.failures.push_back(fmt::format("{}: {}", left_out.empty() ? "all layers" : "without " + left_out_text,
                                          rc < 0 ? why : fmt::format("no device (probe exit {})", rc)));
    // The next layer this policy would apply; none left: no configuration works.
    while (next < std::size(kSteps) && !trial.allows(kSteps[next])) ++next;
    if (next >= std::size(kSteps)) {
      choice.device_found = false;
      break;
    }
    trial.disabled.insert(kSteps[next]);
    left_out.emplace_back(kSteps[next]);
    if (!left_out_text.empty()) left_out_text += ',';
    left_out_text += kSteps[next];
    ++next;
  }
  choice.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return choice;
}

}  // namespace kagent::sandbox
