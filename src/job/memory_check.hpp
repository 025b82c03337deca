// The memory check before a run allocates: the dry run's per-rank estimate against the memory this rank can
// have (the host's available memory, or its cgroup's limit if lower, divided among the node's ranks). A run
// that would not fit is refused with both numbers and what to change (only the settings that would change the
// outcome: e.g. parallel.strategy = "fsdp" with the rank count at which the estimate fits), instead of being
// killed by the kernel mid-allocation; train.check_memory = false turns the refusal into a warning.
//
// A run on CUDA devices (train.device) checks the device estimate against its device's free memory instead.
#pragma once

#include <string>

#include "dry_run_report.hpp"
#include "llmtrain/dist/device_query.hpp"

namespace llmtrain::job {

struct AvailableMemory {
  double bytes_per_rank = 0;
  std::string source;     // how the host's figure was found: "61.20 GiB available (MemAvailable) on host n1"
  int local_ranks = 1;    // the ranks on this host that share it (a device's: its one rank)
  dist::TensorPlace place = dist::TensorPlace::host;  // host memory, or one rank's CUDA device
  double host_bytes() const { return bytes_per_rank * local_ranks; }
  // source and how it is shared: "..., shared by its 2 ranks" (a device's: source alone)
  std::string described() const;
};

// MemAvailable of /proc/meminfo text, in bytes; throws if the line is missing or malformed.
double parse_mem_available(const std::string& meminfo);

// What a rank on this host may use: min(MemAvailable, cgroup limit - cgroup usage) / local_ranks.
AvailableMemory available_memory(const std::string& host, int local_ranks);

// What a rank may use on its CUDA device (seen.has_device()): the free memory cudaMemGetInfo reported, the
// device named in source.
AvailableMemory device_available_memory(const dist::DeviceQuery& seen, const std::string& host);

// What the dry run prints after "available here: " when it plans for `planned_ranks` ranks while `launched_ranks`
// run it: per rank as a run would check it, or, for a planned world size, the host's memory with what each
// rank gets with one rank per node and with all of them on this host.
std::string available_here(const AvailableMemory& available, int planned_ranks, int launched_ranks);

// What would make the run fit, as "; "-separated advice: only settings whose change would alter the estimate
// or the outcome (a train.batch_size already 1 or a recompute already "blocks" is not suggested, activations
// are not suggested when the rest alone does not fit), the fsdp rank count at which the estimate fits the
// memory a rank has here, fewer ranks per node where several share it, and train.check_memory = false.
std::string memory_remedies(const Config& config, const ModelConfig& model, int world_size,
                            const AvailableMemory& available);

// Throws llmtrain::Error (train.check_memory) or logs a warning when the estimate for the configured
// parallel.strategy on `world_size` ranks, in available.place, exceeds the memory available per rank.
void check_memory(const Config& config, const ModelConfig& model, int world_size, const AvailableMemory& available);

}  // namespace llmtrain::job
