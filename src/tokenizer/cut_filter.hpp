// Where a byte-level piece can be cut without changing its BPE result.
//
// A merge (L, R) can join the symbols on both sides of a position p of a piece only if L ends with the
// bytes before p and R starts with those after p. So if no merge can, BPE never builds a symbol across p,
// and the piece's merges are those of its two parts, each made as in the part alone (the lowest-ranked pair
// of one part stays the lowest of that part whatever the other does): BPE of the piece is BPE of the parts,
// concatenated. Unspaced scripts give long pieces (a Chinese clause is one \p{L}+ run) that rarely repeat,
// while the words they are cut into do: for Llama-3 the 33,648 distinct pieces of the Han corpus are 9,702
// distinct parts, which a per-thread cache of parts then serves (EncodeScratch::parts).
//
// The filter answers for p between two whole non-ASCII characters a and b (other positions are never cut):
// safe unless some merge has L ending in the whole character a and R starting with the whole character b
// (a Bloom filter of such (a, b): a false positive only forgoes a cut), or some merge whose L does not end
// in a whole non-ASCII character or whose R does not start with one has L ending in a's last byte and R
// starting with b's first (a bit set of those byte pairs: L may then be a's continuation bytes alone, R a
// prefix of b). If L contains a's lead byte, its whole last character is a, as R's first is b.
//
// Before the pair filter, a bit set over the Basic Multilingual Plane answers for most characters of scripts
// with few merges between characters (Llama-3's Ethiopic): whether a ends no such L at all, or b starts no
// such R. The pair filter (32 KB, probed at random) costs a cache miss per new pair on a small input, and in
// such a script nearly every boundary is then cut; the bit set's words for one script are a few cache lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hash_tables.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {

class CutFilter {
 public:
  CutFilter() : byte_pairs_(256 * 256 / 64, 0), bmp_sides_(0x10000 * 2 / 64, 0) {}

  // For the model's load: every merge's operands (their bytes, both non-empty), then finish().
  void add(std::string_view left, std::string_view right) {
    const std::uint32_t a = last_char(left), b = first_char(right);
    if (a != 0 && b != 0) {
      keys_.push_back(pair_key(a, b));
      set_side(a, kEndsLeft);
      set_side(b, kStartsRight);
      return;
    }
    const std::size_t i = index(static_cast<unsigned char>(left.back()), static_cast<unsigned char>(right.front()));
    byte_pairs_[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  void finish() {
    chars_.reset(keys_.size(), 16);
    for (std::uint64_t key : keys_) chars_.add(key);
    keys_ = {};
  }

  // Whether a piece may be cut between the whole non-ASCII characters a and b (unicode::char_key), whose bytes
  // next to the cut are a_last and b_first.
  bool may_cut(std::uint32_t a, unsigned char a_last, std::uint32_t b, unsigned char b_first) const {
    const std::size_t i = index(a_last, b_first);
    if ((byte_pairs_[i / 64] >> (i % 64)) & 1) return false;
    if (!(side(a) & kEndsLeft) || !(side(b) & kStartsRight)) return true;
    return !chars_.may_contain(pair_key(a, b));
  }

 private:
  // Bits of a character in bmp_sides_: some L of chars_' pairs ends in it, some R starts with it.
  static constexpr unsigned kEndsLeft = 1, kStartsRight = 2;
  // Both bits for characters outside the BMP: the pair filter decides for them.
  unsigned side(std::uint32_t c) const {
    const std::uint32_t cp = unicode::key_code_point(c);
    if (cp >= 0x10000) return kEndsLeft | kStartsRight;
    return (bmp_sides_[cp / 32] >> (cp % 32 * 2)) & 3;
  }
  void set_side(std::uint32_t c, unsigned bit) {
    const std::uint32_t cp = unicode::key_code_point(c);
    if (cp < 0x10000) bmp_sides_[cp / 32] |= std::uint64_t{bit} << (cp % 32 * 2);
  }
  static std::size_t index(unsigned char last, unsigned char first) { return std::size_t{last} << 8 | first; }
  static std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) { return std::uint64_t{a} << 32 | b; }
  // The unicode::char_key of the whole non-ASCII character s ends with, or 0.
  static std::uint32_t last_char(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    for (std::size_t k = n; k-- > 0 && n - k <= 4;) {
      if (p[k] < 0x80) return 0;
      if (p[k] >= 0xC0) return unicode::whole_char_length(p + k, n - k) == n - k ? unicode::char_key(p + k, n - k) : 0;
    }
    return 0;
  }
  // The unicode::char_key of the whole non-ASCII character s starts with, or 0.
  static std::uint32_t first_char(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t len = unicode::whole_char_length(p, s.size());
    return len ? unicode::char_key(p, len) : 0;
  }

  std::vector<std::uint64_t> byte_pairs_;
  std::vector<std::uint64_t> bmp_sides_;  // two bits per code point below 0x10000
  std::vector<std::uint64_t> keys_;       // until finish()
  BloomFilter chars_;
};

}  // namespace llmtrain::tokenizer
