// The plain types of the data loader: its options, and what it reports about the rows it hands out
// (provenance, statistics). Apart from the Loader (loader.hpp), so that the loader's parts include only these.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmtrain/core/batch.hpp"

namespace llmtrain::data {

struct DatasetSpec {
  std::string name;            // unique; identifies the dataset in the state across runs
  std::string path;            // a file, a directory (walked recursively) or a glob pattern
  double weight = 1.0;         // target share of tokens (normalised over all datasets)
  std::string field = "text";  // JSON Lines field holding the document text
};

enum class BadRecordPolicy { skip, fail };

// With prefetching, whether the next batches are made by the prefetch thread or in the caller's thread. The
// first batch is made in the caller's thread; after every batch the chooser is asked, with how long the caller
// worked since the batch before (its own time between two next() calls) and how long making this batch took.
// True: the thread. Empty: the loader's own rule, which runs the thread only while the caller's work is worth
// overlapping (docs/data-loader.md, "When the thread pays").
struct PrefetchTiming {
  double caller_s = 0;  // the caller's time between the previous next() returning and this one being called
  double make_s = 0;    // the time the batch took to make, in whichever thread made it
};
using PrefetchChooser = std::function<bool(const PrefetchTiming&)>;

// The chooser of `data.prefetch_thread = "always"`: the thread from the second batch on, whatever the timings.
inline bool always_prefetch_thread(const PrefetchTiming&) { return true; }

struct LoaderOptions {
  std::vector<DatasetSpec> datasets;
  std::int64_t seq_len = 4096;         // rows hold seq_len + 1 tokens
  std::uint64_t seed = 0;
  std::int64_t logical_shards = 1024;  // fixed for the run's lifetime; any world size <= this works
  std::int64_t shuffle_window = 1024;  // packed rows held per rank for the final shuffle (1 = none)
  std::int64_t batch_rows = 1;         // rows per next()
  std::int64_t block_bytes = 1 << 20;  // unit of reading and shuffling inside a shard (JSON Lines)
  std::optional<TokenId> bos_id;       // prepended to every document when set
  std::optional<TokenId> eos_id;       // appended to every document when set
  BadRecordPolicy on_bad_record = BadRecordPolicy::skip;
  double max_bad_fraction = 0.01;  // skipping turns into an error above this share of bad records
  std::int64_t prefetch_rows = 0;  // rows a background thread prepares ahead of next() (whole batches); 0: synchronous
  PrefetchChooser prefetch_chooser;  // thread or caller's thread, batch by batch (above); empty: the loader's rule
  std::int64_t threads = 1;        // tokenizing threads (1: in the loader's thread); output independent of it
  bool allow_corpus_change = false;        // resume even if the corpus or the tokenizer changed (see docs)
  // Pack from document lengths alone, for audits (`llmtrain-data simulate --metadata-only`): batches carry no
  // tokens, while provenance and state are exactly those of a normal run. Needs pre-tokenized datasets, whose
  // lengths are in their index, and threads = 1.
  bool metadata_only = false;
};

// Where one piece of a row came from (the audit trail of `llmtrain-data simulate --provenance`).
struct SpanInfo {
  std::string dataset;
  std::string file;          // path as listed from the configured path
  std::uint64_t byte_offset; // where the record starts (in decompressed bytes for .gz / .zst)
  std::uint32_t epoch;       // that dataset's epoch
  std::uint32_t token_begin; // range in the document's own encoding, without special tokens
  std::uint32_t token_end;
};

struct RowProvenance {
  std::vector<SpanInfo> spans;                                   // in row order
  std::vector<std::pair<std::int64_t, TokenId>> special;         // (position in row, id): BOS / EOS
};

struct DatasetStats {
  std::string name;
  std::uint32_t epoch = 0;         // lowest epoch this rank still has to deliver; UINT32_MAX: no document
  std::uint64_t records_read = 0;  // including bad ones
  std::uint64_t bad_records = 0;
  std::uint64_t tokens_drawn = 0;  // since the weights last changed
  std::uint64_t tokenless_documents = 0;  // drawn here that framed to zero tokens (empty text, no BOS/EOS)
  bool no_tokens = false;  // a whole epoch gave no token on this rank: skipped, its weight counts as 0
};

struct LoaderStats {
  std::vector<DatasetStats> datasets;
  std::map<std::string, std::uint64_t> bad_records_by_file;  // this process's run only, as of the batches handed out
  std::uint64_t dropped_spans = 0;  // pending pieces given up on restore (removed dataset, allowed drift)
  // With prefetching: batches handed out that the caller's thread made, the thread having nothing to overlap.
  std::uint64_t batches_made_inline = 0;
  // Bad records (and empty files) skipped by this process's run: what a tool or the trainer reports at the end.
  std::uint64_t skipped_records() const;
};

}  // namespace llmtrain::data
