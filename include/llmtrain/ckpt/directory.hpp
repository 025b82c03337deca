// A directory of checkpoints: step_XXXXXXXX.h5 files (complete ones only: a .tmp file is an interrupted
// write), the LATEST file naming the newest, and the retention policy. Plain file operations, no MPI:
// the caller decides which rank acts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmtrain::ckpt {

struct Entry {
  std::int64_t step = 0;
  std::string path;
};

// dir/step_XXXXXXXX.h5 (8 digits, more when the step needs them).
std::string checkpoint_path(const std::string& dir, std::int64_t step);
// The complete checkpoints in dir, oldest first (an absent directory has none).
std::vector<Entry> list_checkpoints(const std::string& dir);
// Points LATEST at `path`'s file name: written to LATEST.tmp, synced, renamed.
void write_latest(const std::string& dir, const std::string& path);
// Deletes the checkpoints that neither the newest keep_last (0: all) nor keep_every (step multiples; 0: none)
// keep, and leftover .tmp files of steps before the newest. Returns the deleted paths.
std::vector<std::string> prune(const std::string& dir, std::int64_t keep_last, std::int64_t keep_every);

}  // namespace llmtrain::ckpt
