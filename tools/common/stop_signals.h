// The signals that stop a job from outside: SIGTERM (Slurm's time limit and scancel send it to
// every process of the job step), SIGINT, SIGHUP. kagent acts on a stop itself; the processes it
// starts (workers, compilers) ignore these, so that whichever process a signal reaches first, a
// stop never becomes a candidate's verdict. kagent ends them with SIGKILL.
#pragma once

#include <signal.h>

namespace kagent {

inline constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

// SIG_IGN for each stop signal; kept across exec by what the caller starts. Only sigaction: safe
// between fork and exec.
inline void ignore_stop_signals() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : kStopSignals) ::sigaction(sig, &ignore, nullptr);
}

}  // namespace kagent
