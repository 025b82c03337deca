// What a job script tells a run it relaunched after a failure (jobscripts/env/relaunch.sh): the environment
// variable LLMTRAIN_RECOVERY = "failed_at=<seconds since the epoch>,last_step=<step>", the failure's wall-clock
// time and the last step the failed run logged. The run reports the steps lost and its recovery time.
#pragma once

#include <cstdint>
#include <optional>

namespace llmtrain::job {

struct Relaunch {
  double failed_at_unix_s = 0;
  std::int64_t last_step = 0;
};

// nullopt when `value` is null or empty; throws llmtrain::Error naming LLMTRAIN_RECOVERY when malformed.
std::optional<Relaunch> parse_relaunch(const char* value);

}  // namespace llmtrain::job
