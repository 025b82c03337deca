// The run's directories, checked before any work (see storage_check.hpp).
#include "storage_check.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dry_run_report.hpp"
#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/ckpt/memory_tier.hpp"
#include "llmtrain/core/counted.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "memory_dir.hpp"

namespace llmtrain::job {

bool buddies_expected(const dist::Runtime& runtime) {
  return runtime.node_count() > 1 || std::getenv("LLMTRAIN_NODE_ID") != nullptr;
}

double check_writable_dir(const char* key, const std::string& dir, CheckResult& result) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    result.problems.push_back(cat(key, ": cannot create ", dir, ": ", ec.message()));
    return -1;
  }
  const std::string probe = cat(dir, "/.llmtrain-probe-", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const bool written = fd >= 0 && ::write(fd, "ok", 2) == 2 && ::fsync(fd) == 0;
  const int write_errno = errno;
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  if (!written) {
    result.problems.push_back(cat(key, ": cannot write in ", dir, ": ", std::strerror(write_errno)));
    return -1;
  }
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) {
    result.problems.push_back(cat(key, ": cannot stat the file system of ", dir, ": ", std::strerror(errno)));
    return -1;
  }
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
}

// Retention runs after a write, so keep_last + 1 checkpoints exist at once (or every checkpoint this run
// writes, when fewer or when keep_last = 0 keeps all); the size of one is what the writer checks before
// each write.
void check_checkpoint_dir(const Config& config, const ModelConfig& model, CheckpointRoom room, CheckResult& result) {
  const CheckpointConfig& c = config.checkpoint;
  const double free_bytes = check_writable_dir("checkpoint.dir", c.dir, result);
  if (free_bytes < 0) return;
  const std::int64_t written = (c.every_steps > 0 ? config.train.steps / c.every_steps : 0) + 1;
  const std::int64_t count = c.keep_last > 0 ? std::min(c.keep_last + 1, written) : written;
  const double each = static_cast<double>(ckpt::space_needed(model, c.alignment));
  const std::string need = cat(counted(count, "checkpoint"), " of this model (checkpoint.keep_last = ",
                               c.keep_last, ", this run writes ", written, ") need ", format_bytes(count * each), ", ",
                               format_bytes(each), " each");
  const std::string has = cat("checkpoint.dir: ", c.dir, " has ", format_bytes(free_bytes), " free; ");
  if (room == CheckpointRoom::one && free_bytes < each)
    result.problems.push_back(cat(has, "a checkpoint of this model needs ", format_bytes(each),
                                  " (free space, or set a checkpoint.dir on a larger file system)"));
  else if (free_bytes < count * each)
    (room == CheckpointRoom::kept ? result.problems : result.warnings)
        .push_back(cat(has, need, " (a checkpoint write that runs out of space stops the job)"));
  else
    result.notes.push_back(cat("checkpoint.dir: ", c.dir, " writable, ", format_bytes(free_bytes), " free; ", need));
}

void check_memory_dir(const Config& config, const ModelConfig& model, int world_size, int local_ranks, bool buddies,
                      CheckResult& result) {
  if (config.checkpoint.memory_every_steps <= 0 || config.checkpoint.dir.empty()) return;
  const std::string dir = memory_dir(config);
  const double free_bytes = check_writable_dir("checkpoint.memory_dir", dir, result);
  if (free_bytes < 0) return;
  const double part = ckpt::memory_part_bytes(model.parameter_count(), world_size);
  const int parts = 2 * local_ranks * (buddies ? 2 : 1);
  const std::string need = cat("2 generations of the parts of ", counted(local_ranks, "rank"),
                               buddies ? " and their buddy copies" : "",
                               " need ", format_bytes(parts * part), ", ", format_bytes(part), " each");
  if (free_bytes < parts * part)
    result.problems.push_back(cat("checkpoint.memory_dir: ", dir, " has ", format_bytes(free_bytes), " free; ", need,
                                  " (set checkpoint.memory_dir to a larger memory file system, make /dev/shm larger, "
                                  "e.g. docker --shm-size, or set checkpoint.memory_every_steps = 0)"));
  else
    result.notes.push_back(cat("checkpoint.memory_dir: ", dir, " writable, ", format_bytes(free_bytes), " free; ", need));
}

void check_run_directories(const Config& config, const ModelConfig& model, const dist::Runtime& runtime) {
  CheckResult result;
  dist::agree(runtime, [&] {
    if (runtime.local_rank() != 0) return;
    if (!config.train.run_dir.empty()) check_writable_dir("train.run_dir", config.train.run_dir, result);
    if (!config.checkpoint.dir.empty()) check_checkpoint_dir(config, model, CheckpointRoom::one, result);
    check_memory_dir(config, model, runtime.size(), runtime.local_size(), buddies_expected(runtime), result);
    if (result.problems.empty()) return;
    std::string problems;
    for (const auto& p : result.problems) problems += cat(problems.empty() ? "" : "\n", p);
    LLMTRAIN_FAIL(problems, "\n(checked before the first step; `llmtrain --preflight` checks this and more)");
  });
  for (const auto& [warning, ranks] : gather_by_message(runtime, result.warnings)) log_warn(warning);
}

}  // namespace llmtrain::job
