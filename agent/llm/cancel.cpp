#include "llm/cancel.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

namespace kagent::llm {

bool CancelToken::sleep_for(std::chrono::duration<double> d) const {
  // Polling in short slices: a signal handler can only set an atomic, not notify a condvar.
  auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
  while (!cancelled()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= end) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(end - now, std::chrono::milliseconds(10)));
  }
  return false;
}

namespace {
// The one piece of process-wide state: a signal handler can reach nothing else.
std::atomic<CancelToken*> g_sigint_token{nullptr};
volatile std::sig_atomic_t g_sigint_seen = 0;

extern "C" void on_sigint(int) {
  g_sigint_seen = 1;
  if (CancelToken* t = g_sigint_token.load()) t->cancel();
}
}  // namespace

static_assert(sizeof(struct sigaction) <= 256, "old_action_ buffer too small");

ScopedSigintCancel::ScopedSigintCancel(CancelToken& token) {
  g_sigint_seen = 0;
  g_sigint_token.store(&token);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C gets the default action: the user insists
  sigaction(SIGINT, &sa, reinterpret_cast<struct sigaction*>(old_action_));
}

ScopedSigintCancel::~ScopedSigintCancel() {
  sigaction(SIGINT, reinterpret_cast<struct sigaction*>(old_action_), nullptr);
  g_sigint_token.store(nullptr);
}

bool ScopedSigintCancel::interrupted() const { return g_sigint_seen != 0; }

}  // namespace kagent::llm
