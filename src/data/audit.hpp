// The audit of `llmtrain-data simulate --audit`: from the provenance of every row handed out, the token share
// of each dataset, the epochs reached, and exactly-once coverage (no token of a document delivered twice in
// an epoch; in every epoch that all ranks have finished, every document delivered whole, with the same length
// as in the other finished epochs). It holds one entry per (document, epoch) of the epochs in progress (a few
// merged token ranges each); settle() checks and folds finished epochs into counts, bounding the memory.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

class CoverageAudit {
 public:
  // For a resumed run: epochs of a dataset below first_whole[d] began before the resume, so part of their
  // documents was delivered by the earlier run; they are checked for duplicates only, not for completeness.
  void resumed(std::map<std::string, std::uint32_t> first_whole) { first_whole_ = std::move(first_whole); }
  void add(const RowProvenance& row);
  // finished_epochs[d]: epochs of dataset d that every rank has finished (from LoaderStats). Checks the
  // documents of those epochs and keeps only their counts and lengths.
  void settle(const std::map<std::string, std::uint32_t>& finished_epochs);
  // Settles, writes the report to `out`, and returns the number of violations found (0: exactly once).
  std::uint64_t report(const std::map<std::string, std::uint32_t>& finished_epochs, std::ostream& out);

 private:
  using Key = std::tuple<std::string, std::string, std::uint64_t, std::uint32_t>;  // dataset, file, offset, epoch
  std::map<Key, std::vector<std::pair<std::uint32_t, std::uint32_t>>> ranges_;  // merged delivered ranges
  std::map<std::string, std::uint64_t> tokens_;  // text tokens per dataset
  std::uint64_t overlaps_ = 0, partial_ = 0, inconsistent_ = 0;
  std::map<std::string, std::map<std::uint32_t, std::uint64_t>> settled_docs_;  // dataset -> epoch -> documents
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::uint32_t> length_;  // of settled documents
  std::map<std::string, std::uint32_t> first_whole_;  // per dataset: first epoch wholly in this run
};

}  // namespace llmtrain::data
