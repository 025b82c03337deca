// The JSON-lines files of a run directory (metrics.jsonl; provenance.rank<R>.jsonl has the same shape):
// one object per line, each with the optimizer "step" it belongs to. Each such file holds one run, so a
// loss plot or an audit never mixes two:
//   - a new run moves an earlier run's file aside first (set_aside);
//   - a run resumed from a checkpoint at step N keeps the lines of steps <= N and drops those its previous
//     run logged after the checkpoint (keep_steps_up_to), then appends.
#pragma once

#include <cstdint>
#include <string>

namespace llmtrain::train {

// Renames `path` (dir/name.ext) to dir/name.<UTC time it was last written, YYYYmmddTHHMMSSZ>.ext (with
// -2, -3, ... if that exists too) and returns the new path; returns "" if `path` does not exist or is empty
// (a run that failed before logging anything: it stays, to be appended to). An error (not a regular file,
// rename refused) names the path.
std::string set_aside(const std::string& path);

struct KeptLines {
  std::int64_t kept = 0, dropped = 0;  // dropped: steps after the limit, and lines that are not complete JSON
};

// Rewrites `path` (atomically: a temporary file renamed over it) with only the lines whose "step" is at
// most `step`. A missing file is left missing (0 kept, 0 dropped).
KeptLines keep_steps_up_to(const std::string& path, std::int64_t step);

}  // namespace llmtrain::train
