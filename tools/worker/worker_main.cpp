// kagent-worker: owns one GPU, embeds Python, answers JSON requests on fds 3 (in) and 4 (out).
// Its stdout/stderr (and the candidate's printf) go wherever kagent points them: a log file.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "build_info.h"
#include "common/json_lines.h"
#include "worker/python_runtime.h"
#include "worker/worker_service.h"

int main() {
  constexpr int kRequestFd = 3, kReplyFd = 4;
  if (::fcntl(kRequestFd, F_GETFD) < 0 || ::fcntl(kReplyFd, F_GETFD) < 0) {
    std::fprintf(stderr, "kagent-worker: speaks JSON on fds 3 and 4 and is started by kagent, not by hand\n");
    return 2;
  }
  // Inductor's compile pool would spawn processes from inside the worker; keep it in-process.
  ::setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 0);
  const char* python_env = std::getenv("KAGENT_PYTHON");
  const std::string python = python_env ? python_env : kagent::build::kPythonExecutable;

  try {
    kagent::worker::PythonRuntime py(python);
    kagent::worker::WorkerService service(py);
    kagent::write_json_line(kReplyFd, service.handle({{"op", "hello"}}));
    kagent::JsonLineReader reader(kRequestFd);
    for (;;) {
      auto msg = reader.read(std::nullopt);
      if (msg.state != kagent::JsonLineReader::State::Message) return 0;  // kagent closed the pipe
      nlohmann::json reply = service.handle(msg.message);
      reply["id"] = msg.message.value("id", 0);
      kagent::write_json_line(kReplyFd, reply);
      std::fflush(stdout);
      if (service.must_exit()) std::_Exit(3);  // the CUDA context is gone; a fresh worker takes over
    }
  } catch (const kagent::worker::PythonError& e) {
    kagent::write_json_line(kReplyFd, {{"ok", false}, {"error", {{"kind", "worker_start"}, {"message", e.message}}}});
    return 1;
  } catch (const std::exception& e) {
    try {
      kagent::write_json_line(kReplyFd, {{"ok", false}, {"error", {{"kind", "worker_start"}, {"message", e.what()}}}});
    } catch (...) {
    }
    return 1;
  }
}
