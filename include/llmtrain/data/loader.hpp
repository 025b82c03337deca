// The data loader of one rank: raw text files -> logical shards -> mixing -> packing -> shuffle window ->
// batches of seq_len + 1 token rows, with a state that says exactly what the trainer has consumed.
//
// Guarantees (docs/data-loader.md has the algorithms and the state format):
//   - zero build overhead: start-up lists files and sizes, nothing is read before the first batch;
//   - every token of every document is delivered exactly once per epoch, across any chain of
//     save (state()) / restore() at any step, onto any number of ranks;
//   - same options and same world size: bitwise-identical batches, however often the run was resumed;
//   - the state is a small binary blob per rank whose size does not grow with the corpus.
// Its options and what it reports (provenance, statistics) are plain types of their own: options.hpp.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmtrain/core/batch.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/data/document_encoder.hpp"
#include "llmtrain/data/options.hpp"

namespace llmtrain::data {

class Loader final : public BatchSource {
 public:
  Loader(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder, int rank, int world_size);
  ~Loader() override;
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // The next batch_rows rows. Throws llmtrain::Error on bad input under the "fail" policy, and the same error
  // again at every later call.
  Batch next() override;
  // The same batch as next(), into `batch`'s storage (reused; what it held goes back to the loader).
  void next_into(Batch& batch) override;
  // Provenance of the rows of the last next(), one entry per row.
  const std::vector<RowProvenance>& last_provenance() const;

  // Everything handed out so far, as a self-describing binary blob. No communication. With prefetching it is
  // the same blob as without, after as many batches, and never waits for the background thread.
  std::string state() const;
  // Continues from the states saved by all ranks of a previous run (any world size). Call before next().
  void restore(const std::vector<std::string>& saved_states);

  LoaderStats stats() const;

  class Impl;
  class Prefetcher;

 private:
  void next_batch(Batch& batch);  // next_into() before it records a failure
  void make_here(Batch& batch);   // the synchronous path: the next batch made in the caller's thread

  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Prefetcher> prefetcher_;  // with prefetch_rows > 0, while the chooser wants the thread
  PrefetchChooser chooser_;
  bool use_thread_ = false;                 // the chooser's last answer (none before the first batch)
  std::uint64_t made_inline_ = 0;
  std::optional<Stopwatch> since_last_batch_;  // the caller's time since next() last returned
  std::exception_ptr failed_;                  // the error next() threw, thrown again by every later call
};

// Tokenizing threads for a rank that shares its node with local_ranks - 1 others: the node's cores divided
// among them, at least 1 (what data.threads = 0 means).
std::int64_t default_threads(int local_ranks);

// A readable dump of a state blob (what `llmtrain-data simulate` prints, and what a user reads when a
// resume fails).
std::string describe_state(const std::string& blob);

}  // namespace llmtrain::data
