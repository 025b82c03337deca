// The preflight checks (see preflight.hpp). Each rank collects its problems and notes; rank 0 prints them
// grouped by message, naming the ranks and hosts that hit each one, so a cluster-wide problem is one line.
#include "llmtrain/job/preflight.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/data/inspect.hpp"
#include "llmtrain/dist/gather_bytes.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "device_choice.hpp"
#include "gpu_check.hpp"
#include "dry_run_report.hpp"
#include "network_check.hpp"
#include "storage_check.hpp"

namespace llmtrain::job {
namespace {

constexpr int kConnectTimeoutMs = 5000;

// Opens and reads the first byte of every corpus file of the datasets.
void check_datasets(const std::vector<DatasetConfig>& datasets, const char* key, CheckResult& result) {
  std::size_t files = 0;
  for (std::size_t d = 0; d < datasets.size(); ++d) {
    const std::string where = cat(key, "[", d, "] ('", datasets[d].name, "')");
    std::vector<std::string> paths;
    try {
      paths = data::list_corpus_files({datasets[d].name, datasets[d].path, datasets[d].weight, datasets[d].field});
    } catch (const Error& e) {
      result.problems.push_back(cat(where, ": ", e.what()));
      continue;
    }
    for (const auto& path : paths) {
      const int fd = ::open(path.c_str(), O_RDONLY);
      char byte = 0;
      if (fd < 0 || ::read(fd, &byte, 1) < 0)
        result.problems.push_back(cat(where, ": ", path, ": cannot read: ", std::strerror(errno)));
      if (fd >= 0) ::close(fd);
    }
    files += paths.size();
  }
  if (!datasets.empty()) result.notes.push_back(cat(key, ": ", counted(datasets.size(), "dataset"), ", ", counted(files, "file"), " readable"));
}

CheckResult check_this_rank(const Config& config, const dist::Runtime& runtime) {
  CheckResult result;
  std::int64_t vocab = config.model.vocab_size;
  try {
    vocab = std::max<std::int64_t>(vocab, std::int64_t(tokenizer::Tokenizer::load(config.tokenizer.path).vocab_size()));
  } catch (const Error& e) {
    result.problems.push_back(cat("tokenizer.path: ", e.what()));
  }
  // Files and directories are per node (shared or not): one rank per node checks them.
  if (runtime.local_rank() == 0) {
    check_datasets(config.data.datasets, "data.datasets", result);
    check_datasets(config.data.eval_datasets, "data.eval_datasets", result);
    const double run_free = check_writable_dir("train.run_dir", config.train.run_dir, result);
    if (run_free >= 0)
      result.notes.push_back(cat("train.run_dir: ", config.train.run_dir, " writable, ", format_bytes(run_free), " free"));
    if (config.checkpoint.dir.empty())
      result.notes.push_back("checkpoint.dir: empty, no checkpoints are written");
    else
      check_checkpoint_dir(config, config.model.resolved(std::max<std::int64_t>(vocab, 1), config.data.seq_len),
                           CheckpointRoom::kept, result);
    check_memory_dir(config, config.model.resolved(std::max<std::int64_t>(vocab, 1), config.data.seq_len), runtime.size(),
                     runtime.local_size(), buddies_expected(runtime), result);
  }
  // train.device as the run will resolve it on this rank: "cuda" without a GPU per rank is a problem here.
  const dist::DeviceQuery seen = devices_seen(config, runtime);
  bool on_gpu = false;
  try {
    const DeviceChoice device =
        resolve_device(config.train.device, seen, device_training_available(), device_unsupported(config));
    result.notes.push_back(cat("train.device: ", device.name(), " (", device.why, ")"));
    on_gpu = device.device == Device::cuda;
  } catch (const Error& e) {
    result.problems.push_back(e.what());
  }
  check_gpus(config, seen, on_gpu, runtime, result);
  const CheckResult net = check_network(runtime, kConnectTimeoutMs);
  result.problems.insert(result.problems.end(), net.problems.begin(), net.problems.end());
  result.notes.insert(result.notes.end(), net.notes.begin(), net.notes.end());
  return result;
}

// "all ranks", or "rank r (host)" / "ranks r (host), ..." of the ranks that reported a message.
std::string who(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  if (ranks.size() == hosts.size() && hosts.size() > 1) return "all ranks";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += cat(i ? ", " : "", ranks[i], " (", hosts[std::size_t(ranks[i])], ")");
  return out;
}

}  // namespace

int run_preflight(const std::string& config_path, const std::vector<std::string>& overrides, dist::Runtime& runtime) {
  Config config;
  dist::agree(runtime, [&] { config = load_config(config_path, overrides); });
  const CheckResult result = check_this_rank(config, runtime);
  const auto hosts = dist::all_gather_bytes(runtime, runtime.hostname());
  const auto problems = gather_by_message(runtime, result.problems);
  const auto warnings = gather_by_message(runtime, result.warnings);
  const auto notes = gather_by_message(runtime, result.notes);
  if (runtime.rank() == 0) {
    std::printf("preflight of %s: %s on %s\n", config.source_file.c_str(), counted(runtime.size(), "rank").c_str(),
                counted(runtime.node_count(), "node").c_str());
    for (const auto& [message, ranks] : notes)
      std::printf("  ok: %s [%s]\n", message.c_str(), who(ranks, hosts).c_str());
    for (const auto& [message, ranks] : warnings)
      std::printf("  WARNING: %s [%s]\n", message.c_str(), who(ranks, hosts).c_str());
    for (const auto& [message, ranks] : problems)
      std::printf("  PROBLEM: %s [%s]\n", message.c_str(), who(ranks, hosts).c_str());
    if (problems.empty()) std::printf("preflight: all checks passed\n");
    else std::printf("preflight: %s; fix them before the run\n", counted(problems.size(), "problem").c_str());
    std::fflush(stdout);
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace llmtrain::job
