// Where a run's memory tier lives (checkpoint.memory_dir, ckpt/memory_tier.hpp) and the key its parts carry:
// a hash of checkpoint.dir and of the settings a resume may not change, so that parts of another run or
// configuration are ignored, and a changed train.steps or rank count still finds them.
#pragma once

#include <cstdint>
#include <string>

#include "llmtrain/config/config.hpp"

namespace llmtrain::job {

std::uint64_t memory_key(const Config& config);
// checkpoint.memory_dir, or /dev/shm/llmtrain-<key as 16 hex digits> when it is empty.
std::string memory_dir(const Config& config);

}  // namespace llmtrain::job
