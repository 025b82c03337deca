// The audit path of the loader: W rank-loaders in one process, N steps of B rows each, with the provenance of
// every row written as JSON lines and every rank's state saved or loaded as one file per rank. Used by
// `llmtrain-data simulate` and by the tests that check the guarantees from outside.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "llmtrain/data/document_encoder.hpp"
#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

struct SimulateOptions {
  int world_size = 1;
  std::int64_t steps = 1;
  std::int64_t batch_rows = 1;
  std::string load_state_dir;   // empty: start fresh
  std::string save_state_dir;   // empty: do not save
  std::string provenance_path;  // empty: no provenance file
  // Report dataset shares, epochs and exactly-once coverage. After --load-state, epochs that began before the
  // resume are checked for duplicates only; the later ones fully.
  bool audit = false;
  bool metadata_only = false;   // spans from document lengths, no token copied (LoaderOptions::metadata_only)
  // Rows each rank's loader prepares in a background thread (LoaderOptions::prefetch_rows; 0: synchronous), so
  // that the audit, the provenance and the saved states go through the prefetch hand-off.
  std::int64_t prefetch_rows = 0;
};

// Runs the simulation; writes a short per-rank summary (and the audit) to `log`. Returns the number of audit
// violations (0 without --audit).
std::uint64_t simulate(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder,
                       const SimulateOptions& sim, std::ostream& log);

// One JSON line of provenance: {"step":s,"rank":r,"row":i,"spans":[[dataset,file,byte_offset,epoch,
// token_begin,token_end],...],"special":[[position,token_id],...]}
std::string provenance_json(std::int64_t step, int rank, std::int64_t row, const RowProvenance& p);

// The state files of a directory (rank-00000.state, ...), in rank order; one state file; and writing them.
// Every failure (a directory or a missing, unreadable or non-regular file, a full disk) is an llmtrain::Error
// naming the path.
std::vector<std::string> load_state_dir(const std::string& dir);
std::string read_state_file(const std::string& path);
void save_state_file(const std::string& dir, int rank, const std::string& blob);

}  // namespace llmtrain::data
