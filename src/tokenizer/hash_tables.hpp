// Open-addressing hash tables for the two hot lookups of BPE: token pair -> merge, and byte string -> value
// (the vocabulary and the per-thread pre-token cache). std::unordered_map allocates a node per entry and
// chases pointers; these store everything in flat arrays and compare a full 64-bit hash first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace llmtrain::tokenizer {

inline std::uint64_t mix64(std::uint64_t h) {
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 32);
}

inline std::uint64_t hash_bytes(const char* p, std::size_t n) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  std::uint64_t w = 0;
  std::memcpy(&w, p, n);
  return mix64(h ^ w);
}

// (left id, right id) -> (rank, merged id). Later inserts of the same pair overwrite earlier ones.
class MergeTable {
 public:
  struct Merge {
    std::uint32_t rank;
    std::int32_t id;
  };

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    keys_.assign(cap, kEmpty);
    values_.assign(cap, Merge{0, 0});
    mask_ = cap - 1;
  }
  void insert(std::int32_t a, std::int32_t b, Merge m) {
    const std::uint64_t key = pack(a, b);
    std::size_t i = mix64(key) & mask_;
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = m;
  }
  const Merge* find(std::int32_t a, std::int32_t b) const {
    if (keys_.empty()) return nullptr;
    const std::uint64_t key = pack(a, b);
    std::size_t i = mix64(key) & mask_;
    while (true) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
      i = (i + 1) & mask_;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ull;
  static std::uint64_t pack(std::int32_t a, std::int32_t b) {
    return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
  }
  std::vector<std::uint64_t> keys_;
  std::vector<Merge> values_;
  std::size_t mask_ = 0;
};

// byte string -> 64-bit value; keys are copied into one arena. Grows by doubling; clear() keeps capacity.
class StringMap {
 public:
  const std::uint64_t* find(std::string_view key) const { return find(key, hash_bytes(key.data(), key.size())); }
  const std::uint64_t* find(std::string_view key, std::uint64_t h) const {
    if (slots_.empty()) return nullptr;
    std::size_t i = h & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.len == kEmptyLen) return nullptr;
      if (s.hash == h && s.len == key.size() && std::memcmp(arena_.data() + s.offset, key.data(), s.len) == 0)
        return &s.value;
      i = (i + 1) & mask_;
    }
  }
  // Inserts or overwrites.
  void insert(std::string_view key, std::uint64_t value) { insert(key, hash_bytes(key.data(), key.size()), value); }
  void insert(std::string_view key, std::uint64_t h, std::uint64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = h & mask_;
    while (slots_[i].len != kEmptyLen) {
      Slot& s = slots_[i];
      if (s.hash == h && s.len == key.size() && std::memcmp(arena_.data() + s.offset, key.data(), s.len) == 0) {
        s.value = value;
        return;
      }
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{h, arena_.size(), static_cast<std::uint32_t>(key.size()), value};
    arena_.append(key.data(), key.size());
    ++size_;
  }
  void clear() {
    for (Slot& s : slots_) s.len = kEmptyLen;
    arena_.clear();
    size_ = 0;
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kEmptyLen = ~0u;
  struct Slot {
    std::uint64_t hash;
    std::size_t offset;
    std::uint32_t len;
    std::uint64_t value;
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{0, 0, kEmptyLen, 0});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.len == kEmptyLen) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].len != kEmptyLen) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

}  // namespace llmtrain::tokenizer
