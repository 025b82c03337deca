// available_memory() and check_memory(): see memory_check.hpp.
#include "memory_check.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"

namespace llmtrain::job {
namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

// Limits at or above this are "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr double kUnlimited = 1e18;

// Memory the cgroup still allows (v2: memory.max - memory.current; v1: limit_in_bytes - usage_in_bytes), or
// kUnlimited where there is no limit or no cgroup memory controller.
double cgroup_headroom() {
  const std::pair<const char*, const char*> files[] = {
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};
  for (const auto& [limit_file, usage_file] : files) {
    std::istringstream limit_text(read_small_file(limit_file)), usage_text(read_small_file(usage_file));
    double limit = 0, usage = 0;
    if (!(limit_text >> limit) || !(usage_text >> usage)) continue;  // absent, or "max" (v2: no limit)
    if (limit >= kUnlimited) return kUnlimited;
    return std::max(0.0, limit - usage);
  }
  return kUnlimited;
}

}  // namespace

double parse_mem_available(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    double kib = 0;
    std::string unit;
    LLMTRAIN_CHECK(fields >> kib >> unit && unit == "kB" && kib >= 0, "/proc/meminfo: malformed line '", line, "'");
    return kib * 1024;
  }
  LLMTRAIN_FAIL("/proc/meminfo: no MemAvailable line (Linux 3.14 or later has it)");
}

AvailableMemory available_memory(const std::string& host, int local_ranks) {
  const double host_available = parse_mem_available(read_small_file("/proc/meminfo"));
  const double cgroup = cgroup_headroom();
  AvailableMemory out;
  const double total = std::min(host_available, cgroup);
  out.bytes_per_rank = total / std::max(local_ranks, 1);
  out.source = cgroup < host_available ? cat(format_bytes(cgroup), " left under this job's cgroup memory limit")
                                       : cat(format_bytes(host_available), " available (MemAvailable)");
  out.source += cat(" on host ", host, ", shared by its ", local_ranks, local_ranks == 1 ? " rank" : " ranks");
  return out;
}

void check_memory(double needed, const MemoryEstimate& estimate, const AvailableMemory& available, bool enforce) {
  if (needed <= available.bytes_per_rank) return;
  const std::string message =
      cat("this run needs about ", format_bytes(needed), " per rank (estimate: weights, gradients and AdamW moments ",
          format_bytes(needed - estimate.activations), " + activations ", format_bytes(estimate.activations),
          "; llmtrain --dry-run shows it), but ", format_bytes(available.bytes_per_rank), " is available per rank (",
          available.source, "). Lower train.batch_size or data.seq_len, set train.recompute = \"blocks\", run "
          "fewer ranks per node or a smaller model, or set train.check_memory = false to start anyway");
  LLMTRAIN_CHECK(!enforce, "not enough memory: ", message);
  log_warn("memory check (train.check_memory = false): ", message);
}

}  // namespace llmtrain::job
