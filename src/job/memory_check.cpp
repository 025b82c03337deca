// available_memory() and check_memory(): see memory_check.hpp.
#include "memory_check.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "llmtrain/core/counted.hpp"
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
  out.local_ranks = std::max(local_ranks, 1);
  out.bytes_per_rank = std::min(host_available, cgroup) / out.local_ranks;
  out.source = cgroup < host_available ? cat(format_bytes(cgroup), " left under this job's cgroup memory limit")
                                       : cat(format_bytes(host_available), " available (MemAvailable)");
  out.source += cat(" on host ", host);
  return out;
}

std::string AvailableMemory::described() const {
  if (place == dist::TensorPlace::device) return source;
  return cat(source, ", shared by its ", counted(local_ranks, "rank"));
}

AvailableMemory device_available_memory(const dist::DeviceQuery& seen, const std::string& host) {
  LLMTRAIN_CHECK(seen.has_device(), "device_available_memory: this rank has no CUDA device");
  AvailableMemory out;
  out.place = dist::TensorPlace::device;
  out.bytes_per_rank = double(seen.free_bytes);
  out.source = cat(format_bytes(double(seen.free_bytes)), " free of ", format_bytes(double(seen.total_bytes)),
                   " on CUDA device ", seen.device, " (", seen.name, ") of host ", host);
  return out;
}

std::string available_here(const AvailableMemory& available, int planned_ranks, int launched_ranks) {
  if (planned_ranks == launched_ranks)
    return cat(format_bytes(available.bytes_per_rank), " per rank (", available.described(), ")");
  const double host = available.host_bytes();
  return cat(available.source, ": ", format_bytes(host), " per rank with one of the ", counted(planned_ranks, "rank"),
             " per node like this one, ", format_bytes(host / planned_ranks), " with all of them on it");
}

namespace {

// The fewest ranks, at least `from`, on which parallel.strategy = "fsdp" needs at most `budget` per rank by the
// dry-run estimate, with that estimate; 0 when no count up to 2^20 does (the window and activations alone
// exceed it). The estimate falls as the ranks grow (state / ranks), so a doubling then a bisection finds it.
std::pair<int, double> fsdp_ranks_that_fit(const Config& config, const ModelConfig& model, int from, double budget,
                                           dist::TensorPlace place) {
  const auto needs = [&](int ranks) { return estimate_memory(config, model, ranks, place).total("fsdp"); };
  constexpr int kMostRanks = 1 << 20;
  int high = std::max(from, 1);
  while (needs(high) > budget) {
    if (high >= kMostRanks) return {0, 0.0};
    high = std::min(2 * high, kMostRanks);
  }
  int low = std::max(from, high / 2);  // low fails unless it is `from` itself
  if (needs(low) <= budget) return {low, needs(low)};
  while (high - low > 1) {
    const int middle = low + (high - low) / 2;
    (needs(middle) <= budget ? high : low) = middle;
  }
  return {high, needs(high)};
}

}  // namespace

std::string memory_remedies(const Config& config, const ModelConfig& model, int world_size,
                            const AvailableMemory& available) {
  const std::string& strategy = config.parallel.strategy;
  const MemoryEstimate estimate = estimate_memory(config, model, world_size, available.place);
  const double budget = available.bytes_per_rank, needed = estimate.total(strategy);
  std::vector<std::string> advice;
  // Activations scale with the tokens of a micro-batch; worth lowering only if the rest fits.
  const double rest = needed - estimate.activations;
  if (rest < budget && estimate.activations > 0) {
    const double room = (budget - rest) / estimate.activations;  // the fraction of today's activations that fits
    const std::int64_t batch = config.train.batch_size, seq_len = config.data.seq_len;
    if (batch > 1 && std::int64_t(room * double(batch)) >= 1)
      advice.push_back(cat("lower train.batch_size from ", batch, " to ", std::int64_t(room * double(batch)),
                           " or less (raise train.grad_accum to keep the batch)"));
    if (config.train.recompute != "blocks") {
      Config recompute = config;
      recompute.train.recompute = "blocks";
      advice.push_back(cat("set train.recompute = \"blocks\" (about ",
                           format_bytes(estimate_memory(recompute, model, world_size, available.place).total(strategy)),
                           " per rank)"));
    }
    if (std::int64_t(room * double(seq_len)) >= 1)
      advice.push_back(cat("lower data.seq_len from ", seq_len, " to ", std::int64_t(room * double(seq_len)),
                           " or less"));
  }
  // Sharding: the fewest ranks (placed like these) on which fsdp fits.
  const auto [ranks, fsdp_needs] = fsdp_ranks_that_fit(config, model, strategy == "fsdp" ? world_size + 1 : world_size,
                                                       budget, available.place);
  if (ranks > 0) {
    const std::string where = cat("about ", format_bytes(fsdp_needs), " per rank by the estimate",
                                  available.local_ranks > 1 ? cat(", with ", available.local_ranks, " per node as here")
                                                            : std::string(),
                                  "; llmtrain --dry-run --world-size ", ranks, " shows it");
    if (strategy == "fsdp") advice.push_back(cat("run on ", ranks, " ranks or more (", where, ")"));
    else if (ranks == world_size) advice.push_back(cat("set parallel.strategy = \"fsdp\" (", where, ")"));
    else advice.push_back(cat("set parallel.strategy = \"fsdp\" and run on ", ranks, " ranks or more (", where, ")"));
  }
  if (available.local_ranks > 1)
    advice.push_back(cat("run fewer ranks per node (", available.local_ranks, " share this host's ",
                         format_bytes(available.host_bytes()), ")"));
  advice.push_back("train a smaller model");
  std::string out;
  for (const std::string& a : advice) out += a + "; ";
  return out + "or set train.check_memory = false to start anyway";
}

void check_memory(const Config& config, const ModelConfig& model, int world_size, const AvailableMemory& available) {
  const MemoryEstimate estimate = estimate_memory(config, model, world_size, available.place);
  const double needed = estimate.total(config.parallel.strategy);
  if (needed <= available.bytes_per_rank) return;
  const char* what = available.place == dist::TensorPlace::device ? "device memory" : "memory";
  const std::string message =
      cat("this run needs about ", format_bytes(needed), " per rank (estimate for parallel.strategy = \"",
          config.parallel.strategy, "\" on ", counted(world_size, "rank"), ": weights, gradients and AdamW moments ",
          format_bytes(needed - estimate.activations), " + activations ", format_bytes(estimate.activations),
          "; llmtrain --dry-run shows it), but ", format_bytes(available.bytes_per_rank), " is available per rank (",
          available.described(), "). To fit: ", memory_remedies(config, model, world_size, available));
  LLMTRAIN_CHECK(!config.train.check_memory, "not enough ", what, ": ", message);
  log_warn(what, " check (train.check_memory = false): ", message);
}

}  // namespace llmtrain::job
