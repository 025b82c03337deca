// Thread-local communication progress poller (see comm_progress.hpp).
#include "llmtrain/core/comm_progress.hpp"

#include <chrono>
#include <utility>

namespace llmtrain {
namespace {

struct Poller {
  std::function<void()> poll;
  std::int64_t interval_us = 0;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

thread_local Poller t_poller;

}  // namespace

ProgressScope::ProgressScope(std::function<void()> poll, std::int64_t interval_us)
    : previous_poll_(std::move(t_poller.poll)), previous_interval_us_(t_poller.interval_us) {
  const bool active = poll && interval_us > 0;
  t_poller.poll = active ? std::move(poll) : std::function<void()>{};
  t_poller.interval_us = active ? interval_us : 0;
  t_poller.last = std::chrono::steady_clock::now();
}

ProgressScope::~ProgressScope() {
  t_poller.poll = std::move(previous_poll_);
  t_poller.interval_us = previous_interval_us_;
}

void poll_progress() {
  Poller& p = t_poller;
  if (p.interval_us <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - p.last < std::chrono::microseconds(p.interval_us)) return;
  p.last = now;
  p.poll();
}

std::int64_t progress_interval_us() { return t_poller.interval_us; }

}  // namespace llmtrain
