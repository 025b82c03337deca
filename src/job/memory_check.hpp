// The memory check before a run allocates: the dry run's per-rank estimate against the memory this rank can
// have (the host's available memory, or its cgroup's limit if lower, divided among the node's ranks). A run
// that would not fit is refused with both numbers and what to change, instead of being killed by the
// kernel mid-allocation; train.check_memory = false turns the refusal into a warning.
//
// It checks host memory: in a CUDA build the model lives in device memory, which this does not see.
#pragma once

#include <string>

#include "dry_run_report.hpp"

namespace llmtrain::job {

struct AvailableMemory {
  double bytes_per_rank = 0;
  std::string source;  // how it was found, for the message
};

// MemAvailable of /proc/meminfo text, in bytes; throws if the line is missing or malformed.
double parse_mem_available(const std::string& meminfo);

// What a rank on this host may use: min(MemAvailable, cgroup limit - cgroup usage) / local_ranks.
AvailableMemory available_memory(const std::string& host, int local_ranks);

// Throws llmtrain::Error (enforce) or logs a warning when `needed` (the estimate for the run's parameter
// store) exceeds the available memory.
void check_memory(double needed, const MemoryEstimate& estimate, const AvailableMemory& available, bool enforce);

}  // namespace llmtrain::job
