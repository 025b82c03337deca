// Logical shards: the fixed partition of each dataset that ranks own, cursors follow, and rescaling moves.
//
// A dataset's files, in sorted order, form one byte space of total_bytes. Logical shard s of L covers bytes
// [s * total / L, (s + 1) * total / L): a function of the sorted file list and sizes only, so every rank of
// every run computes the same partition without reading data or communicating. Inside its range a shard is
// cut into blocks, the unit of reading and of the first level of shuffling:
//   - JSON Lines: pieces of at most block_bytes of a file; a record belongs to the block (hence the shard)
//     where its first byte lies, wherever it ends;
//   - .jsonl.gz, .jsonl.zst, .txt: the whole file is one block, in the shard where the file starts (gzip
//     cannot be entered mid-stream; one document per .txt file).
// Rank r of W owns the shards s with s % W == r: balanced within one shard for any W <= L.
#pragma once

#include <cstdint>
#include <vector>

#include "corpus.hpp"

namespace llmtrain::data {

struct ShardBlock {
  std::uint32_t file = 0;    // index into DatasetFiles::files
  std::uint64_t begin = 0;   // byte range within the file (records starting here belong to the block)
  std::uint64_t end = 0;
};

struct ByteRange {
  std::uint64_t begin = 0, end = 0;
};

ByteRange shard_range(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard);

std::vector<ShardBlock> shard_blocks(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard,
                                     std::uint64_t block_bytes);

// Hash of the shard's range and of the (path, size, mtime) of the files it touches: drift detection.
std::uint64_t shard_fingerprint(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard);

inline bool rank_owns_shard(std::uint64_t shard, int rank, int world_size) {
  return shard % static_cast<std::uint64_t>(world_size) == static_cast<std::uint64_t>(rank);
}

}  // namespace llmtrain::data
