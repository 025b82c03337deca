// The inside of data::Loader, shared by loader.cpp (reading, mixing, packing, shuffling: the forward path),
// restore.cpp (resuming and rescaling from saved states) and, through next_row(), assemble() and
// take_progress(), the background prefetcher (prefetcher.hpp). Impl itself is single-threaded: while the
// prefetcher runs, only its producer thread calls into it; once it has stopped and its ring was handed out, the
// caller's thread again (adaptive_prefetch.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corpus.hpp"
#include "encode_pool.hpp"
#include "llmtrain/data/loader.hpp"
#include "packer.hpp"
#include "progress.hpp"
#include "records.hpp"
#include "shard_stream.hpp"
#include "state.hpp"

namespace llmtrain::data {

class Loader::Impl {
 public:
  Impl(LoaderOptions options, std::shared_ptr<const DocumentEncoder> encoder, int rank, int world_size);

  // The next row, from the shuffle window.
  PackedRow next_row();
  // A batch of rows and their provenance, into the storage `batch` and `provenance` already have. Reads only
  // the options and the file lists (any thread).
  void assemble(const std::vector<PackedRow>& rows, Batch& batch, std::vector<RowProvenance>& provenance) const;
  // Hands the storage of assembled rows back to the packer (the thread that calls next_row()).
  void recycle(std::vector<PackedRow>& rows) { packer_.recycle(rows); }
  SavedState save() const;
  Tallies tallies() const;
  const std::map<std::string, std::uint64_t>& bad_by_file() const { return bad_by_file_; }
  // From now on next_row() records how it moves the window; take_progress() hands over that record with the
  // positions and counters as of the last row (progress.hpp), and starts the next one.
  void record_progress();
  Progress take_progress();
  void stop_recording();  // the prefetcher stopped: batches are made in the caller's thread again
  void restore(const std::vector<std::string>& blobs);
  LoaderStats stats() const;
  std::int64_t batch_rows() const { return opt_.batch_rows; }
  std::int64_t prefetch_rows() const { return opt_.prefetch_rows; }
  // Documents read ahead per dataset for the tokenizing threads: enough to keep them all busy.
  static constexpr int kLookaheadPerThread = 4;

  std::vector<RowProvenance> provenance;  // of the last batch handed out (the caller's thread only)

 private:
  bool draw(DocRef& doc, FramedDocument& framed);        // mixing: next document of this rank
  // Counts a document that framed to no token; true once dataset d has yielded none over a whole epoch.
  bool tokenless(std::size_t d, std::uint32_t epoch);
  std::string no_document_reason() const;  // why draw() found nothing, per dataset
  std::string no_data_reason(std::size_t d) const;
  void load(const DocRef& doc, FramedDocument& framed);  // re-encode a known document
  void frame(FileFormat format, std::string_view text, std::vector<TokenId>& framed) const;
  // frame(), or only the framed length when metadata-only.
  void frame_or_count(FileFormat format, std::string_view text, FramedDocument& framed) const;
  bool next_document(std::size_t dataset, DocRef& doc, FramedDocument& framed, const BadRecordPolicyState& bad);
  StreamPosition position(std::size_t dataset) const;  // as of the documents drawn (not read ahead)
  StreamProgress stream_progress(std::size_t dataset);  // what position() moved since the last take_progress()
  void describe_row(const PackedRow& row, RowProvenance& p) const;  // overwrites p, reusing its strings
  // restore.cpp
  Span remap(Span saved, const std::vector<int>& dataset_map) const;  // saved dataset index -> ours, checked
  void restore_exact(const SavedState& own, const std::vector<int>& dataset_map);
  void restore_spans(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map,
                     const std::vector<bool>& drop);
  void check_renamed(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map) const;
  void check_pending_epochs(const std::vector<SavedState>& saved) const;
  void check_drift(const std::vector<SavedState>& saved, const std::vector<int>& dataset_map,
                   std::vector<bool>& drifted) const;

  LoaderOptions opt_;
  std::shared_ptr<const DocumentEncoder> encoder_;
  int rank_, world_size_;
  std::vector<DatasetFiles> files_;  // one per dataset, in options order
  std::vector<std::unique_ptr<ShardStream>> streams_;
  std::vector<std::uint64_t> tokens_since_weights_;  // mixing counters
  std::vector<bool> empty_;                          // datasets with no document on this rank
  // Documents that framed to zero tokens (empty text, no BOS/EOS): they move no mixing counter, so mixing
  // would pick their dataset again and again. Per dataset: how many were drawn, the epoch where the current
  // run of them began, and whether a whole epoch gave no token (the dataset is then skipped like an empty one).
  std::vector<std::uint64_t> tokenless_docs_;
  std::vector<std::optional<std::uint32_t>> tokenless_since_;
  std::vector<bool> no_tokens_;
  Packer packer_;
  std::vector<PackedRow> window_;
  std::uint64_t window_counter_ = 0;
  TextExtractor extractor_;
  std::map<std::string, std::uint64_t> bad_by_file_;
  std::uint64_t dropped_spans_ = 0;
  bool started_ = false;
  std::optional<Progress> progress_;  // recorded for the prefetcher
  std::uint64_t bad_reported_ = 0;    // bad records counted when bad_by_file_ was last handed over
  // threads > 1: one lookahead per dataset, tokenized by the pool (encode_pool.hpp). Made at the first draw;
  // the pool is declared last so that its workers are joined before anything they use is destroyed.
  std::vector<std::unique_ptr<Lookahead>> ahead_;
  std::unique_ptr<EncodePool> pool_;
};

}  // namespace llmtrain::data
