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
std::atomic<CancelToken*> g_signal_token{nullptr};
std::atomic<CancelToken*> g_signal_only_token{nullptr};
volatile std::sig_atomic_t g_signal_seen = 0;

extern "C" void on_stop_signal(int) {
  g_signal_seen = 1;
  if (CancelToken* t = g_signal_token.load()) t->cancel();
  if (CancelToken* t = g_signal_only_token.load()) t->cancel();
}
}  // namespace

static_assert(sizeof(struct sigaction) <= 256, "old action buffer too small");

ScopedSignalCancel::ScopedSignalCancel(CancelToken& token, CancelToken* signalled) {
  g_signal_seen = 0;
  g_signal_token.store(&token);
  g_signal_only_token.store(signalled);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C (or SIGTERM) gets the default action: the sender insists
  sigaction(SIGINT, &sa, reinterpret_cast<struct sigaction*>(old_int_));
  sigaction(SIGTERM, &sa, reinterpret_cast<struct sigaction*>(old_term_));
}

ScopedSignalCancel::~ScopedSignalCancel() {
  sigaction(SIGINT, reinterpret_cast<struct sigaction*>(old_int_), nullptr);
  sigaction(SIGTERM, reinterpret_cast<struct sigaction*>(old_term_), nullptr);
  g_signal_token.store(nullptr);
  g_signal_only_token.store(nullptr);
}

bool ScopedSignalCancel::interrupted() const { return g_signal_seen != 0; }

}  // namespace kagent::llm
