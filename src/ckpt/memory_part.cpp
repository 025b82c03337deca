// Part files of the memory tier: layout, checksum, reading (see memory_part.hpp).
#include "memory_part.hpp"

#include <cstring>
#include <fstream>

#include "layout.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {
namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'T', 'M', 'E', 'M', '1'};

std::size_t padded(std::size_t n) { return (n + 7) / 8 * 8; }

void put(std::vector<char>& out, std::uint64_t v) {
  const char* p = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), p, p + 8);
}
void put(std::vector<char>& out, const std::string& s) {
  put(out, std::uint64_t(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

// Reads from a whole file's bytes, every read bounds-checked.
struct Cursor {
  const std::vector<char>& bytes;
  const std::string& path;
  std::size_t at = 0;
  void need(std::uint64_t n) const {
    LLMTRAIN_CHECK(n <= bytes.size() - at, path, ": truncated memory snapshot part (", bytes.size(), " bytes)");
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    at += 8;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s(bytes.data() + at, n);
    at += n;
    return s;
  }
};

std::uint64_t checksum_words(const char* data, std::size_t bytes) {
  return checksum(data, ElementType::u64, 0, bytes / 8);
}

}  // namespace

std::int64_t PartHeader::elements() const {
  std::int64_t n = 0;
  for (const auto& [lo, hi] : ranges) n += hi - lo;
  return n;
}

std::size_t begin_part(const PartHeader& h, std::vector<char>& buffer) {
  std::vector<char> head;
  put(head, h.key);
  put(head, std::uint64_t(h.metadata.step));
  put(head, std::uint64_t(h.metadata.tokens_seen));
  put(head, std::uint64_t(h.metadata.world_size));
  put(head, std::uint64_t(h.rank));
  put(head, std::uint64_t(h.optimizer_step));
  put(head, h.metadata.tokenizer_fingerprint);
  put(head, h.metadata.strategy);
  put(head, h.metadata.config);
  put(head, h.loader_state);
  put(head, std::uint64_t(h.rng.size()));
  for (const std::uint64_t v : h.rng) put(head, v);
  put(head, std::uint64_t(h.ranges.size()));
  for (const auto& [lo, hi] : h.ranges) put(head, std::uint64_t(lo)), put(head, std::uint64_t(hi));
  head.resize(padded(head.size()), 0);
  const std::size_t data_at = 24 + head.size();
  const std::size_t total = padded(data_at + 3 * std::size_t(h.elements()) * sizeof(float)) + 8;
  buffer.resize(total);
  std::memcpy(buffer.data(), kMagic, 8);
  const std::uint64_t sizes[2] = {total, head.size()};
  std::memcpy(buffer.data() + 8, sizes, 16);
  std::memcpy(buffer.data() + 24, head.data(), head.size());
  std::memset(buffer.data() + total - 16, 0, 8);  // the padding (the data is copied over the rest) is checksummed
  return data_at;
}

void seal_part(std::vector<char>& buffer) {
  const std::uint64_t sum = checksum_words(buffer.data(), buffer.size() - 8);
  std::memcpy(buffer.data() + buffer.size() - 8, &sum, 8);
}

std::uint64_t read_part_key(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[32];
  if (!in.read(head, sizeof head) || std::memcmp(head, kMagic, 8) != 0) return 0;
  std::uint64_t key;
  std::memcpy(&key, head + 24, 8);
  return key;
}

PartHeader read_part(const std::string& path, std::vector<float>* data) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  LLMTRAIN_CHECK(in, path, ": cannot open the memory snapshot part");
  std::vector<char> bytes(std::size_t(in.tellg()));
  in.seekg(0);
  LLMTRAIN_CHECK(in.read(bytes.data(), std::streamsize(bytes.size())), path, ": cannot read the memory snapshot part");
  LLMTRAIN_CHECK(bytes.size() >= 32 && bytes.size() % 8 == 0 && std::memcmp(bytes.data(), kMagic, 8) == 0, path,
                 ": not a memory snapshot part");
  Cursor c{bytes, path, 8};
  const std::uint64_t total = c.u64(), head = c.u64();
  LLMTRAIN_CHECK(total == bytes.size(), path, ": truncated memory snapshot part (", bytes.size(), " of ", total, " bytes)");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + total - 8, 8);
  LLMTRAIN_CHECK(stored == checksum_words(bytes.data(), total - 8), path, ": checksum mismatch (the part is damaged)");
  PartHeader h;
  h.key = c.u64();
  h.metadata.step = std::int64_t(c.u64());
  h.metadata.tokens_seen = std::int64_t(c.u64());
  h.metadata.world_size = std::int64_t(c.u64());
  h.rank = std::int64_t(c.u64());
  h.optimizer_step = std::int64_t(c.u64());
  h.metadata.tokenizer_fingerprint = c.u64();
  h.metadata.strategy = c.str();
  h.metadata.config = c.str();
  h.loader_state = c.str();
  const std::uint64_t rng_count = c.u64();
  c.need(rng_count * 8);
  h.rng.resize(std::size_t(rng_count));
  for (auto& v : h.rng) v = c.u64();
  const std::uint64_t units = c.u64();
  c.need(units * 16);
  for (std::uint64_t u = 0; u < units; ++u) {
    const auto lo = std::int64_t(c.u64()), hi = std::int64_t(c.u64());
    LLMTRAIN_CHECK(0 <= lo && lo <= hi, path, ": bad range of unit ", u);
    h.ranges.push_back({lo, hi});
  }
  const std::size_t data_at = 24 + head;
  LLMTRAIN_CHECK(padded(data_at + 3 * std::size_t(h.elements()) * sizeof(float)) + 8 == total, path,
                 ": inconsistent memory snapshot part (size ", total, ")");
  if (data) {
    data->resize(3 * std::size_t(h.elements()));
    std::memcpy(data->data(), bytes.data() + data_at, data->size() * sizeof(float));
  }
  return h;
}

}  // namespace llmtrain::ckpt
