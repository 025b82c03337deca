// One part file of the memory tier (memory_tier.hpp): a rank's share of a snapshot in one buffer, laid out as
// it is written, so that the training loop's cost is the copy into it.
//
//   "LLMTMEM1", u64 file size, u64 header size, then the header: u64 key, step, tokens_seen, world_size,
//   rank, optimizer_step, tokenizer_fingerprint; strings (u64 length + bytes) strategy, config, loader state;
//   u64 count + rng values; u64 unit count + (lo, hi) per unit; zero padding to 8 bytes; then fp32 data
//   (parameters of every unit's [lo, hi), then m, then v), padding to 8 bytes, and a u64 checksum of all
//   that precedes it (layout.hpp's checksum over 8-byte words). Little-endian hosts only, like the loader's
//   state blobs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"

namespace llmtrain::ckpt {

struct PartHeader {
  std::uint64_t key = 0;
  Metadata metadata;  // step, tokens_seen, world_size, strategy, config, tokenizer_fingerprint
  std::int64_t rank = 0;
  std::int64_t optimizer_step = 0;
  std::string loader_state;
  std::vector<std::uint64_t> rng;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // per unit

  std::int64_t elements() const;  // per tensor kind (parameters, m or v)
};

// Lays the header out at the start of `buffer` (resized to the whole file) and returns where the fp32 data
// starts; the caller copies the data there and seal() adds the checksum.
std::size_t begin_part(const PartHeader& header, std::vector<char>& buffer);
void seal_part(std::vector<char>& buffer);

// Reads and verifies a whole part file; throws llmtrain::Error naming the file and what is wrong. Returns
// the header; `data` receives the fp32 data (parameters, m, v), unless null.
PartHeader read_part(const std::string& path, std::vector<float>* data);
// The key in a part file's header (also of a partly written .tmp file), without verifying the rest; 0 when the
// file is unreadable or no part.
std::uint64_t read_part_key(const std::string& path);

}  // namespace llmtrain::ckpt
