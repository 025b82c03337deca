// Interruptible retries. The stop-signal handler only sets a flag (core/stop_signal.hpp), so a loop that keeps
// retrying without delivering anything would ignore SIGTERM / SIGUSR1 for ever: every such loop of the loader
// calls this on each retry, and a stop request then ends it with an error that says where it was.
#pragma once

#include <string_view>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/stop_signal.hpp"

namespace llmtrain::data {

inline void check_not_stopped(std::string_view retrying) {
  LLMTRAIN_CHECK(!stop_requested(), "data loader: stop requested while ", retrying);
}

}  // namespace llmtrain::data
