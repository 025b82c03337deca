// Signal handlers may only touch lock-free atomics / sig_atomic_t, so the flag is a plain atomic int
// holding the signal number (or -1 for a programmatic request).
#include "llmtrain/core/stop_signal.hpp"

#include <atomic>
#include <csignal>
#include <string>

namespace llmtrain {
namespace {

std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag must be async-signal-safe");

extern "C" void on_stop_signal(int signum) { g_stop.store(signum, std::memory_order_relaxed); }

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking reads in loader threads resume instead of failing with EINTR
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  // Ctrl-C stops gracefully too; a second Ctrl-C, which a user types when the stop takes too long, ends the
  // process at once (the handler resets to the default action once it ran). Where SIGINT was ignored when the
  // program started (a background job of a script, nohup), it stays ignored, as the shell meant.
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  if (current.sa_handler == SIG_IGN) return;
  action.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
}

bool stop_requested() { return g_stop.load(std::memory_order_relaxed) != 0; }

int stop_signal_number() {
  const int value = g_stop.load(std::memory_order_relaxed);
  return value > 0 ? value : 0;
}

std::string signal_name(int signum) {
  switch (signum) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "signal " + std::to_string(signum);
  }
}

void request_stop() {
  int none = 0;  // keep the number of a signal that already arrived
  g_stop.compare_exchange_strong(none, -1, std::memory_order_relaxed);
}

void clear_stop_request() { g_stop.store(0, std::memory_order_relaxed); }

}  // namespace llmtrain
