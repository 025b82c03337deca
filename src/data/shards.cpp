// Logical shard layout (see shards.hpp).
#include "shards.hpp"

#include <algorithm>

#include "permutation.hpp"

namespace llmtrain::data {
namespace {

// Index of the file containing dataset byte `offset`, or files.size() past the end.
std::size_t file_at(const DatasetFiles& ds, std::uint64_t offset) {
  auto it = std::upper_bound(ds.files.begin(), ds.files.end(), offset,
                             [](std::uint64_t off, const CorpusFile& f) { return off < f.start; });
  return static_cast<std::size_t>(it - ds.files.begin()) - 1;
}

// Calls visit(file index) for every splittable file whose bytes overlap the range. Files read whole take no
// room in the byte space (their `start` is that of the next splittable file), so they are passed over.
template <typename Visit>
void for_files_in(const DatasetFiles& ds, ByteRange r, Visit visit) {
  if (r.begin >= r.end) return;
  for (std::size_t i = file_at(ds, r.begin); i < ds.files.size() && ds.files[i].start < r.end; ++i)
    if (splittable(ds.files[i].format)) visit(i);
}

// Calls visit(file index) for the files read whole that go to the shard: the j-th goes to shard j % L.
template <typename Visit>
void for_whole_files_of(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard, Visit visit) {
  for (std::uint64_t j = shard; j < ds.whole_files.size(); j += logical_shards) visit(ds.whole_files[j]);
}

}  // namespace

ByteRange shard_range(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard) {
  auto at = [&](std::uint64_t s) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(ds.split_bytes) * s / logical_shards);
  };
  return {at(shard), at(shard + 1)};
}

std::vector<std::uint32_t> shard_files(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard) {
  std::vector<std::uint32_t> files;
  for_files_in(ds, shard_range(ds, logical_shards, shard),
               [&](std::size_t i) { files.push_back(static_cast<std::uint32_t>(i)); });
  for_whole_files_of(ds, logical_shards, shard, [&](std::uint32_t i) { files.push_back(i); });
  return files;
}

std::vector<ShardBlock> shard_blocks(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard,
                                     std::uint64_t block_bytes) {
  std::vector<ShardBlock> blocks;
  ByteRange r = shard_range(ds, logical_shards, shard);
  for_files_in(ds, r, [&](std::size_t i) {
    const CorpusFile& f = ds.files[i];
    std::uint64_t begin = std::max(r.begin, f.start) - f.start;
    std::uint64_t end = std::min(r.end, f.start + f.size) - f.start;
    for (std::uint64_t b = begin; b < end; b += block_bytes)
      blocks.push_back({static_cast<std::uint32_t>(i), b, std::min(end, b + block_bytes)});
  });
  for_whole_files_of(ds, logical_shards, shard, [&](std::uint32_t i) { blocks.push_back({i, 0, ds.files[i].size}); });
  return blocks;
}

std::uint64_t shard_fingerprint(const DatasetFiles& ds, std::uint64_t logical_shards, std::uint64_t shard) {
  ByteRange r = shard_range(ds, logical_shards, shard);
  std::uint64_t h = hash_values({r.begin, r.end});
  for (std::uint32_t i : shard_files(ds, logical_shards, shard)) {
    const CorpusFile& f = ds.files[i];
    h = hash_values({h, hash_bytes(f.path.data(), f.path.size()), f.size, static_cast<std::uint64_t>(f.mtime_ns)});
  }
  return h;
}

}  // namespace llmtrain::data
