// Communication progress driven from compute.
//
// MPI over TCP advances a non-blocking collective only while some MPI call runs on the rank (measured here:
// an MPI_Iallgather overlapped 9-53 % of its time with compute when nobody polled, 98-99 % with a test every
// 1-10 ms). Compute code therefore calls poll_progress() at natural boundaries (between kernels, between
// the blocks of a gemm); it costs one clock read and calls the installed function at most once per interval. The
// job installs the collectives' progress() for the training thread with parallel.progress_us.
#pragma once

#include <cstdint>
#include <functional>

namespace llmtrain {

// Installs `poll` for the calling thread, to run at most every interval_us microseconds; interval_us <= 0
// or an empty function uninstalls. Restores the previous poller when the scope ends.
class ProgressScope {
 public:
  ProgressScope(std::function<void()> poll, std::int64_t interval_us);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  std::function<void()> previous_poll_;
  std::int64_t previous_interval_us_;
};

// Runs the calling thread's poller if one is installed and its interval has passed.
void poll_progress();

// The installed interval in microseconds (0: none). Long kernels use it to split their work into pieces
// of about this duration; the split depends on this setting only, never on measured time, so results stay
// a function of the configuration.
std::int64_t progress_interval_us();

}  // namespace llmtrain
