// What the prefetch thread hands over with each batch besides the rows: how that batch moved the loader's
// state, so that the trainer's side keeps the state "as of the last batch taken" without asking the producer.
//
// The state a synchronous loader saves after k batches is its shuffle window, packing queue, stream cursors and
// counters. The producer runs ahead of that, so with each batch it records a Progress: the rows that entered
// the window (their spans, a few per row) and which window slot each handed-out row left from, plus the
// positions and counters as of the batch's last row. Replaying that onto a copy of the state taken when the
// producer started (apply) gives, batch by batch, exactly the state a synchronous loader would save: the
// same bytes. A Progress costs the spans of the rows made (never a copy of the window) and the cursors that
// moved during the batch (a few per row, plus every shard of a dataset whose epoch ended), not all of the
// rank's logical_shards / W per dataset. (With data.threads > 1 it holds them all: the lookahead's position
// is a whole copy already.)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmtrain/data/options.hpp"
#include "state.hpp"

namespace llmtrain::data {

// What stats() reports beyond the state: found out while reading, not saved (a resumed run finds out again).
struct Tallies {
  std::vector<bool> empty;                     // datasets with no document on this rank
  std::vector<std::uint64_t> tokenless_docs;   // documents drawn that framed to no token
  std::vector<bool> no_tokens;                 // a whole epoch gave no token
  std::uint64_t dropped_spans = 0;             // pending pieces given up on restore
};

struct Progress {
  struct Pick {
    std::uint32_t entered_before;  // rows of `entered` that were in the window when this row left it
    std::uint32_t slot;            // its index in the window (the last row moves into it)
  };
  std::vector<std::vector<Span>> entered;  // rows that entered the shuffle window, in order
  std::vector<Pick> picks;                 // rows handed out, in order
  // As of the batch's last row:
  std::uint64_t window_counter = 0;
  std::vector<StreamProgress> streams;  // per dataset: the cursors moved in the batch, and the counters
  std::vector<std::uint64_t> tokens_since_weights;
  std::vector<Span> queue;
  Tallies tallies;
  std::optional<std::map<std::string, std::uint64_t>> bad_by_file;  // only when it changed
};

// Moves `state`, `tallies` and `bad_by_file` (as of some batch) on to the end of the batch `p` was made for.
// Copies what it keeps from `p`: the prefetcher's consumer must not own what its producer allocated.
void apply(const Progress& p, SavedState& state, Tallies& tallies, std::map<std::string, std::uint64_t>& bad_by_file);

// Loader::stats() of a loader whose state is `state`.
LoaderStats stats_of(const SavedState& state, const Tallies& tallies,
                     const std::map<std::string, std::uint64_t>& bad_by_file);

}  // namespace llmtrain::data
