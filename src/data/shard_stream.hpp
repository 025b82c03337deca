// One dataset as one rank reads it: the documents of the logical shards it owns, in shuffled order.
//
// Each owned shard has a cursor (epoch, block position, document position). Positions index keyed
// permutations, so the n-th block of a shard in epoch e is blocks[P_{seed,dataset,e,shard}(n)] and the m-th
// document of that block is records[P_{...,block}(m)]: nothing but the cursor is stored. The next document
// comes from a shard chosen pseudo-randomly (keyed by a per-rank draw counter) among the owned shards at the
// lowest epoch, with probability proportional to the number of documents the shard has left (exact for its
// current block, estimated from that block's density for the blocks after it): this approximates drawing a
// uniformly random remaining document of the rank, so a document's position in the epoch depends neither on
// its file nor on its length. A rank finishes an epoch on all its shards before
// starting the next; an exhausted shard moves to the next epoch, whose order is a new permutation. The
// weights are a function of the cursors only, so a resumed run makes the same choices.
//
// Drawing costs O(log shards), not O(shards): the weights of the shards at the lowest epoch stay in a WeightTree
// between draws (weight_tree.hpp); a draw changes only the drawn shard's weight, and only an epoch change
// rebuilds the tree. The stream also remembers which cursors moved, so that the prefetcher's per-batch
// record (progress.hpp) carries those instead of all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "corpus.hpp"
#include "permutation.hpp"
#include "records.hpp"
#include "weight_tree.hpp"

namespace llmtrain::data {

// A document's stable identity: where its record starts, and in which epoch of its dataset it is read.
struct DocRef {
  std::uint32_t dataset = 0;
  std::uint32_t file = 0;
  std::uint64_t byte_offset = 0;
  std::uint32_t epoch = 0;
};

struct ShardCursor {
  std::uint32_t shard = 0;
  std::uint32_t epoch = 0;
  std::uint64_t block_pos = 0;  // blocks of the shard already finished in this epoch
  std::uint64_t doc_pos = 0;    // documents of the current block already drawn
};

struct BadRecordPolicyState {
  BadRecordPolicy policy = BadRecordPolicy::skip;
  double max_fraction = 0.01;
  std::map<std::string, std::uint64_t>* by_file = nullptr;  // where skipped records are counted
};

// What a saved state records of a stream: its cursors and counters (all a resumed stream needs).
struct StreamPosition {
  std::vector<ShardCursor> cursors;
  std::uint64_t draw_counter = 0, records_read = 0, bad_records = 0;
};

// How a stream moved since its last take_progress(): the cursors that changed, each with its index among the
// owned shards, and the counters.
struct StreamProgress {
  std::vector<std::pair<std::uint32_t, ShardCursor>> cursors;
  std::uint64_t draw_counter = 0, records_read = 0, bad_records = 0;
};

class ShardStream {
 public:
  ShardStream(const DatasetFiles& files, std::uint32_t dataset_index, std::uint64_t seed,
              std::uint64_t logical_shards, std::uint64_t block_bytes, int rank, int world_size);

  // The next document of this dataset on this rank; nullopt if the rank's shards hold no valid document.
  // The text stays valid until the next call.
  struct Drawn {
    DocRef ref;
    std::string_view text;  // for token files: the document's tokens as int32 bytes
    FileFormat format;
  };
  std::optional<Drawn> next(TextExtractor& extractor, const BadRecordPolicyState& bad);

  std::vector<ShardCursor> cursors() const;
  StreamPosition position() const { return {cursors(), draw_counter, records_read, bad_records}; }
  // The cursors moved since the last call (or since construction), and the counters; O(cursors moved).
  StreamProgress take_progress();
  void set_cursor(const ShardCursor& cursor);  // for an owned shard, from a saved state
  std::uint32_t min_epoch() const;             // lowest epoch among owned shards

  std::uint64_t draw_counter = 0;  // drives the shard interleaving
  std::uint64_t records_read = 0;
  std::uint64_t bad_records = 0;
  std::string last_bad;  // "file: byte N: why" of the latest bad record this process met, for messages

 private:
  struct Shard {
    ShardCursor cursor;
    bool blocks_listed = false;
    std::vector<ShardBlock> blocks;
    std::uint64_t total_bytes = 0;   // of all blocks
    std::uint64_t done_bytes = 0;    // of the blocks finished in this epoch
    bool done_known = false;         // done_bytes matches the cursor
    bool block_open = false;
    std::uint64_t block_index = 0;  // of the open block in `blocks`
    double weight = -1;             // cached weight(); negative: to compute (the cursor moved)
    bool moved = false;             // the cursor changed since the last take_progress()
    LoadedBlock block;
  };
  void mark_moved(Shard& shard);
  // Puts the weights of the shards at the lowest epoch in the tree (in shard order, as weight() reads blocks).
  void build_tree(const BadRecordPolicyState& bad);
  // Opens the shard's current block, moving past finished blocks; false when the shard's epoch is done.
  bool open_current(Shard& shard, const BadRecordPolicyState& bad);
  // Estimated documents left in the shard's epoch: a function of the cursor and the files only.
  double weight(Shard& shard, const BadRecordPolicyState& bad);
  void next_epoch(Shard& shard);
  // Moves the shard's cursor to its next valid document; false if the shard's epoch is exhausted.
  bool advance(Shard& shard, TextExtractor& extractor, const BadRecordPolicyState& bad, Drawn& out);
  void count_bad(const std::string& file, std::uint64_t offset, const std::string& why,
                 const BadRecordPolicyState& bad);
  void size_changed(const CorpusFile& file, const std::string& what, const BadRecordPolicyState& bad);
  std::uint64_t key(std::uint32_t epoch, std::uint32_t shard) const;

  const DatasetFiles& files_;
  std::uint32_t index_;
  std::uint64_t seed_, name_hash_, logical_shards_, block_bytes_;
  int rank_;
  std::vector<Shard> shards_;  // owned shards in increasing order
  // The draw's tree: valid while `active_` shards are at epoch `epoch_` (the lowest); the others weigh 0 in it.
  WeightTree tree_;
  bool tree_valid_ = false;
  std::uint32_t epoch_ = 0;
  std::size_t active_ = 0;
  std::size_t stale_ = SIZE_MAX;  // the shard drawn last: its weight is computed at the next draw
  std::vector<std::uint32_t> moved_;  // indices of the shards whose `moved` is set
  std::set<std::string> warned_size_change_;  // files already reported as changed in size
};

}  // namespace llmtrain::data
