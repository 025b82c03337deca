// Open-addressing hash tables for the two hot lookups of BPE: token pair -> merge, and byte string -> value
// (the vocabulary and the per-thread pre-token cache), plus the per-thread memo in front of the first.
// std::unordered_map allocates a node per entry and chases pointers; these store everything in flat arrays
// and compare a full 64-bit hash first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "huge_pages.hpp"

namespace llmtrain::tokenizer {

inline std::uint64_t mix64(std::uint64_t h) {
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 32);
}

// Every piece is hashed, so the last 1-7 bytes are read with whole-word loads: copying them into a zeroed
// word (a memcpy of variable length, compiled as a byte loop) and then loading that word stalls on store
// forwarding, which was most of the hash's time on short pieces.
// For n <= 8 the hash is one-to-one: the word read is a one-to-one function of the bytes (each way of reading
// covers every byte) and every later step (xor with a constant, multiplication by an odd constant, h ^= h >> k)
// can be undone. StringMap relies on this: keys of up to 8 bytes with equal hashes and lengths are equal.
inline std::uint64_t hash_bytes(const char* p, std::size_t n) {
  const std::size_t size = n;
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
  if (n > 0 && size >= 8) {  // the last 8 bytes, overlapping the block before
    std::memcpy(&w, p + n - 8, 8);
  } else if (n >= 4) {  // two 4-byte loads, overlapping when n < 8
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    w = std::uint64_t{hi} << 32 | lo;
  } else if (n > 0) {  // 1-3 bytes: first, middle, last
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    w = std::uint64_t{u[0]} | std::uint64_t{u[n / 2]} << 8 | std::uint64_t{u[n - 1]} << 16;
  }
  return mix64(h ^ w);
}

// A fixed-size array of N entries of a trivial type for the per-thread memos, read as all-zero (their empty
// entry) until written, and cleared lazily, chunk by chunk, at a chunk's first access. Clearing it whole at
// first use cost most of a short input's cold encode: calloc gives a fresh thread zero pages, but in the thread
// that loaded the tokenizer glibc recycles memory the load freed and clears all of it (GPT-2, 5.8 KB of Lao:
// 43 % of the instructions); fresh pages instead measured slower (a page fault per page touched). A bit per
// chunk records which are cleared; the test is one load and a branch that is nearly always taken one way.
template <class T, std::size_t N>
class LazyZeroedArray {
 public:
  LazyZeroedArray() = default;
  LazyZeroedArray(const LazyZeroedArray&) = delete;  // nor moved: the bits describe this array's memory
  LazyZeroedArray& operator=(const LazyZeroedArray&) = delete;

  T& operator[](std::size_t i) {
    const std::size_t c = i / kChunk;
    if (__builtin_expect(!((cleared_[c / 64] >> (c % 64)) & 1), 0)) clear(c);
    return data_.get()[i];
  }

 private:
  static constexpr std::size_t kChunkBytes = 1024;
  // Entries per chunk: the largest power of two whose bytes fit in kChunkBytes.
  static constexpr std::size_t kChunk = [] {
    std::size_t n = 1;
    while (2 * n * sizeof(T) <= kChunkBytes && 2 * n <= N) n *= 2;
    return n;
  }();
  static_assert(std::is_trivially_copyable_v<T> && N % kChunk == 0);
  static constexpr std::size_t kAlign = 64;
  static constexpr std::size_t kBytes = (N * sizeof(T) + kAlign - 1) / kAlign * kAlign;

  [[gnu::noinline, gnu::cold]] void clear(std::size_t c) {
    if (!data_) {
      data_.reset(static_cast<T*>(std::aligned_alloc(kAlign, kBytes)));
      if (!data_) throw std::bad_alloc();
    }
    std::memset(static_cast<void*>(data_.get() + c * kChunk), 0, kChunk * sizeof(T));
    cleared_[c / 64] |= std::uint64_t{1} << (c % 64);
  }

  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::array<std::uint64_t, (N / kChunk + 63) / 64> cleared_{};  // bit c: chunk c is cleared (none until data_)
};

// A Bloom filter of 64-bit keys (or hashes of longer ones): three bits of one 64-bit word per key, so a query
// touches one cache line; the bits come from a mix of the key independent of a hash table's own index.
class BloomFilter {
 public:
  // About `bits_per_key` bits for each of n keys (rounded up to a power of two words).
  void reset(std::size_t n, std::size_t bits_per_key) {
    std::size_t words = 1;
    while (words * 64 < n * bits_per_key) words *= 2;
    words_.assign(words, 0);
  }
  void add(std::uint64_t h) { words_[word(h)] |= bits(h); }
  // False: the key was never added.
  bool may_contain(std::uint64_t h) const {
    const std::uint64_t b = bits(h);
    return (words_[word(h)] & b) == b;
  }
  void prefetch(std::uint64_t h) const {
    if (!words_.empty()) __builtin_prefetch(&words_[word(h)]);
  }

 private:
  static std::uint64_t rehash(std::uint64_t h) { return mix64(h ^ 0x2545F4914F6CDD1Dull); }
  std::size_t word(std::uint64_t h) const { return rehash(h) & (words_.size() - 1); }
  static std::uint64_t bits(std::uint64_t h) {
    const std::uint64_t g = rehash(h);
    return (1ull << (g >> 58)) | (1ull << ((g >> 52) & 63)) | (1ull << ((g >> 46) & 63));
  }
  std::vector<std::uint64_t> words_;
};

// (left id, right id) -> (rank, merged id); rank kNoRank if the pair has no merge. Later inserts of the same
// pair overwrite earlier ones. Encoding a new piece looks up about two pairs per byte, and in a large
// vocabulary's table (16 MB for Llama-3) each lookup is a cache miss, so other things come first:
//  - pairs of ids below 256 (the bytes of byte-level models, whose first merges build characters) are read
//    from a dense 256x256 array, of which one script touches a few KB;
//  - most other lookups are for pairs WITHOUT a merge (a character and the next one's first byte): a Bloom
//    filter of 4-8 bits per merge answers most of them from a few hundred KB;
//  - the table itself keeps key and value in one 16-byte slot, so a lookup touches one cache line;
//  - in text without spaces (CJK, Thai) most lookups are of two whole characters (char_symbols.hpp), nearly
//    all without a merge, and the memo and the filter above (256 KB each) miss the L1 and L2 caches for them;
//    merges of two single-character tokens are few (4,712 of Llama-3's 280,147), so a filter of their own
//    (16 bits each, 9 KB) answers those lookups;
//  - after a merge, the new token is looked up with its neighbours, and most tokens are never the left (or
//    never the right) operand of a merge (Llama-3: 40,876 left and 33,787 right of 128,000), so two bit sets
//    over ids (16 KB each) rule those pairs out before the memo.

// A set of token ids, as bits.
class IdSet {
 public:
  void add(std::int32_t id) {
    const auto i = std::uint32_t(id);
    if (i / 64 >= bits_.size()) bits_.resize(i / 64 + 1, 0);
    bits_[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  bool contains(std::int32_t id) const {
    const auto i = std::uint32_t(id);
    return i / 64 < bits_.size() && ((bits_[i / 64] >> (i % 64)) & 1);
  }

 private:
  std::vector<std::uint64_t> bits_;
};

class MergeTable {
 public:
  struct Merge {
    std::uint32_t rank;
    std::int32_t id;
  };
  static constexpr std::uint32_t kNoRank = ~0u;

  static std::uint64_t pack(std::int32_t a, std::int32_t b) {
    return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
  }
  static bool small(std::int32_t a, std::int32_t b) { return std::uint32_t(a | b) < kSmall; }

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, Slot{kEmpty, {kNoRank, 0}});
    mask_ = cap - 1;
    filter_.reset(n, 4);
    small_.assign(kSmall * kSmall, Merge{kNoRank, 0});
  }
  // Needs reserve() first.
  void insert(std::int32_t a, std::int32_t b, Merge m) {
    if (small(a, b)) {
      small_[std::size_t(a) * kSmall + std::size_t(b)] = m;
      return;
    }
    const std::uint64_t key = pack(a, b);
    std::size_t i = mix64(key) & mask_;
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
    slots_[i] = Slot{key, m};
    filter_.add(key);
    lefts_.add(a);
    rights_.add(b);
  }
  Merge find(std::int32_t a, std::int32_t b) const {
    if (small(a, b)) return find_small(a, b);
    const std::uint64_t key = pack(a, b);
    return find_large(key, mix64(key));
  }
  Merge find_small(std::int32_t a, std::int32_t b) const {
    return small_.empty() ? Merge{kNoRank, 0} : small_[std::size_t(a) * kSmall + std::size_t(b)];
  }
  // After the inserts: which ids are tokens of one whole character (byte-level models; others need not call
  // this). Builds the filter of the merges of two such tokens.
  void index_characters(const std::vector<bool>& is_character) {
    for (std::size_t id = 0; id < is_character.size(); ++id)
      if (is_character[id]) characters_.add(static_cast<std::int32_t>(id));
    std::vector<std::uint64_t> keys;
    for (const Slot& slot : slots_)
      if (slot.key != kEmpty && characters_.contains(std::int32_t(slot.key >> 32)) &&
          characters_.contains(std::int32_t(slot.key)))
        keys.push_back(slot.key);
    character_filter_.reset(keys.size(), 16);
    for (std::uint64_t key : keys) character_filter_.add(key);
  }
  // For pairs that are not small(), key = pack(a, b): true if the pair certainly has no merge, found from
  // tables small enough to stay in the first-level caches (the operand sets, the character-pair filter).
  bool certainly_without_merge(std::int32_t a, std::int32_t b, std::uint64_t key) const {
    if (!lefts_.contains(a) || !rights_.contains(b)) return true;
    return characters_.contains(a) && characters_.contains(b) && !character_filter_.may_contain(key);
  }
  // For pairs that are not small(): key = pack(a, b), h = mix64(key).
  Merge find_large(std::uint64_t key, std::uint64_t h) const {
    if (slots_.empty()) return Merge{kNoRank, 0};
    if (!filter_.may_contain(key)) return Merge{kNoRank, 0};
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == key || slots_[i].key == kEmpty) return slots_[i].merge;
    }
  }

 private:
  static constexpr std::uint32_t kSmall = 256;
  static constexpr std::uint64_t kEmpty = ~0ull;  // pack(-1, -1): no pair of valid ids
  struct Slot {
    std::uint64_t key;
    Merge merge;  // {kNoRank, 0} in empty slots
  };
  HugeVector<Slot> slots_;
  BloomFilter filter_;
  IdSet lefts_, rights_;  // the operands of the merges in slots_
  IdSet characters_;      // single-character tokens (index_characters)
  BloomFilter character_filter_;
  std::vector<Merge> small_;
  std::size_t mask_ = 0;
};

// A direct-mapped memo of MergeTable lookups (including misses), one per thread and table: the pairs of one
// language repeat constantly (its characters, its frequent syllables), and this 256 KB array keeps them
// close to the core where the table and its filter do not fit.
class PairMemo {
 public:
  MergeTable::Merge find(const MergeTable& table, std::int32_t a, std::int32_t b) {
    if (MergeTable::small(a, b)) return table.find_small(a, b);
    const std::uint64_t key = MergeTable::pack(a, b);
    if (table.certainly_without_merge(a, b, key)) return MergeTable::Merge{MergeTable::kNoRank, 0};
    const std::uint64_t h = mix64(key);
    Entry& e = entries_[(h >> 20) & (kSize - 1)];  // other bits than the table's index, at first
    if (e.inverted_key != ~key) e = Entry{~key, table.find_large(key, h)};
    return e.merge;
  }

 private:
  static constexpr std::size_t kSize = 1 << 14;
  struct Entry {
    std::uint64_t inverted_key;  // ~pack(a, b), so that a zeroed entry holds pack(-1, -1): no valid pair
    MergeTable::Merge merge;
  };
  LazyZeroedArray<Entry, kSize> entries_;
};

// byte string -> 64-bit value; keys are copied into one arena. Grows by doubling; clear() keeps capacity.
class StringMap {
 public:
  // Keys of up to this many bytes are compared by hash and length alone (hash_bytes is one-to-one on them),
  // which spares reading the key from the arena: a cache miss for most hits of a large map.
  static constexpr std::size_t kHashIsKey = 8;

  const std::uint64_t* find(std::string_view key) const { return find(key, hash_bytes(key.data(), key.size())); }
  // h: hash_bytes of the key (here and in insert).
  const std::uint64_t* find(std::string_view key, std::uint64_t h) const {
    if (slots_.empty()) return nullptr;
    std::size_t i = h & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.len == kEmptyLen) return nullptr;
      if (s.hash == h && s.len == key.size() && same_key(s, key)) return &s.value;
      i = (i + 1) & mask_;
    }
  }
  // Starts loading the first slot find(key, h) will read.
  void prefetch(std::uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
  }
  // Inserts or overwrites.
  void insert(std::string_view key, std::uint64_t value) { insert(key, hash_bytes(key.data(), key.size()), value); }
  void insert(std::string_view key, std::uint64_t h, std::uint64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = h & mask_;
    while (slots_[i].len != kEmptyLen) {
      Slot& s = slots_[i];
      if (s.hash == h && s.len == key.size() && same_key(s, key)) {
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
  // For a slot whose hash and length equal the key's.
  bool same_key(const Slot& s, std::string_view key) const {
    return key.size() <= kHashIsKey || std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0;
  }
  void grow() {
    HugeVector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{0, 0, kEmptyLen, 0});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.len == kEmptyLen) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].len != kEmptyLen) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  HugeVector<Slot> slots_;
  std::string arena_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

}  // namespace llmtrain::tokenizer
