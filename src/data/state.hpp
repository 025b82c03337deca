// The saved state of one rank's loader, and its binary encoding.
//
// Layout (little-endian): magic "LLMTDATA", u32 format version, then tagged sections (u32 tag, u64 byte
// length, payload) so a reader can skip sections it does not know, and a final u64 hash of everything before
// it. Sections: HEAD (run options), DSET (one per dataset: name, weight, mixing counter, shard cursors and
// fingerprints), ROWS (the shuffle window, as spans), QUEU (pieces waiting to be packed). Nothing in it scales
// with the corpus: its size is set by logical_shards / world_size, the datasets, and the window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "packer.hpp"
#include "shard_stream.hpp"

namespace llmtrain::data {

struct SavedDataset {
  std::string name;
  double weight = 0;
  std::uint64_t file_count = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t tokens_since_weights = 0;  // mixing counter since the weights last changed
  std::uint64_t draw_counter = 0;
  std::uint64_t records_read = 0;
  std::uint64_t bad_records = 0;
  std::vector<ShardCursor> cursors;         // owned shards
  std::vector<std::uint64_t> fingerprints;  // shard_fingerprint of each, same order
};

struct SavedState {
  std::uint32_t rank = 0, world_size = 1;
  std::uint64_t seq_len = 0, seed = 0, logical_shards = 0, shuffle_window = 0, block_bytes = 0;
  std::uint64_t encoder_fingerprint = 0;
  std::int64_t bos = -1, eos = -1;  // -1: none
  std::uint64_t window_counter = 0;
  std::vector<SavedDataset> datasets;
  std::vector<std::vector<Span>> window;  // spans' dataset indices refer to `datasets`
  std::vector<Span> queue;
};

// 2: files read whole go to logical shard j % L (shards.hpp) instead of the shard of their first byte, so the
// shards (and their fingerprints) of version 1 mean other files.
// 3: the shuffle window emits rows while it fills (min(window, 2 (rows emitted + 1)) rows before each one), so
// a version 2 window continues in another order.
// 4: no REDY section (rows a prefetch thread had prepared but not handed out): a state is what was consumed,
// the same bytes with and without prefetching. A version 3 state without such rows reads as version 4.
constexpr std::uint32_t kStateVersion = 4;

std::string encode_state(const SavedState& state);
// Throws llmtrain::Error on a malformed blob or one whose fields fail validate_state.
SavedState decode_state(const std::string& blob);
// Every field in its range and consistent with the others (ownership of the cursors, pieces inside the datasets'
// file lists, rows of seq_len + 1 tokens); throws an llmtrain::Error naming the first one that is not.
void validate_state(const SavedState& state);
std::string describe(const SavedState& state);

}  // namespace llmtrain::data
