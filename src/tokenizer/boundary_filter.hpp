// Which adjacent symbols of a byte-level piece can possibly merge, judged from the bytes around their
// boundary alone: (last byte of the left symbol, first byte of the right one, how the right one ends).
//
// Most pair lookups while encoding a new piece of a non-Latin script find no merge: a finished character
// next to the first byte (or two) of the following one. In a large vocabulary such pairs cost a cache miss
// each; this 32 KB bit set rules out nearly all of them (for Llama-3, one of the 384 (continuation byte, CJK
// lead byte) pairs with an unfinished right symbol has a merge). It is exact: a pair is ruled out only when
// no merge at all has the same three features, which depend on the symbols' bytes only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace llmtrain::tokenizer {

class BoundaryFilter {
 public:
  BoundaryFilter() : bits_(256 * 256 * 4 / 64, 0) {}

  // Records a merge of the byte strings `left` and `right` (both non-empty).
  void add(std::string_view left, std::string_view right) {
    const std::size_t i = index(left.back(), right.front(), tail(right.data(), right.size()));
    bits_[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  // Whether the symbols bytes[begin, mid) and bytes[mid, end) may have a merge (begin < mid < end).
  bool may_merge(const char* bytes, std::size_t mid, std::size_t end) const {
    const std::size_t i = index(bytes[mid - 1], bytes[mid], tail(bytes + mid, end - mid));
    return (bits_[i / 64] >> (i % 64)) & 1;
  }

 private:
  // How s[0, n) ends: 0 a complete UTF-8 character, 1 inside one (a lead byte still waiting for continuation
  // bytes), 2 only continuation bytes in its last four, 3 anything else (invalid UTF-8).
  static unsigned tail(const char* s, std::size_t n) {
    const std::size_t stop = n > 4 ? n - 4 : 0;
    for (std::size_t k = n; k-- > stop;) {
      const auto b = static_cast<unsigned char>(s[k]);
      if (b < 0x80) return k + 1 == n ? 0 : 3;
      if (b >= 0xC0) {
        const std::size_t need = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        return k + need == n ? 0 : k + need > n ? 1 : 3;
      }
    }
    return 2;
  }
  static std::size_t index(char last, char first, unsigned tail) {
    return (std::size_t{static_cast<unsigned char>(last)} << 10) | (std::size_t{static_cast<unsigned char>(first)} << 2) |
           tail;
  }
  std::vector<std::uint64_t> bits_;
};

}  // namespace llmtrain::tokenizer
