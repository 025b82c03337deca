// Logical shards: the fixed partition of each dataset that ranks own, cursors follow, and rescaling moves.
//
// Both rules below are functions of the sorted file list and sizes only, so every rank of every run computes
// the same partition without reading data or communicating. Rank r of W owns the shards s with s % W == r.
//   - Splittable files (JSON Lines, token files), in sorted order, form one byte space of split_bytes. Logical
//     shard s of L covers bytes [s * split_bytes / L, (s + 1) * split_bytes / L), cut into blocks of at most
//     block_bytes of one file; a record belongs to the block (hence the shard) where its first byte lies.
//     Balanced within one shard for any W <= L.
//   - Files read whole (.jsonl.gz, .jsonl.zst, .txt: gzip cannot be entered mid-stream, a .txt is one
//     document) are one block each, and the j-th of them in sorted order goes to shard j % L. Consecutive
//     files go to consecutive shards, hence to different ranks: any W up to the number of such files gives
//     every rank a file. (Placing them by byte position put equally sized files in shards j * L / n, all on
//     rank 0 whenever W divides L / n.)
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

// The shard's range of the splittable byte space.
ByteRange shard_range(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard);

// Indices of the files the shard reads from: splittable files overlapping its range, then its whole files.
std::vector<std::uint32_t> shard_files(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard);

std::vector<ShardBlock> shard_blocks(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard,
                                     std::uint64_t block_bytes);

// Hash of the shard's range and of the (path, size, mtime) of its files (shard_files): drift detection.
std::uint64_t shard_fingerprint(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard);

inline bool rank_owns_shard(std::uint64_t shard, int rank, int world_size) {
  return shard % static_cast<std::uint64_t>(world_size) == static_cast<std::uint64_t>(rank);
}

}  // namespace llmtrain::data
