// Character classes (two-level lookup table built once from the generated ranges) and UTF-8 validation.
#include "unicode.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

namespace llmtrain::tokenizer::unicode {
namespace {

struct CodeRange {
  std::uint32_t first, last;
};
struct CategoryRange {
  std::uint32_t first, last;
  std::uint8_t category;
};
#include "unicode_tables.inc"

// White_Space property (unchanged since Unicode 6); \s of Oniguruma (PCRE2 in UCP mode lacks U+0085).
constexpr CodeRange kSpaceRanges[] = {{0x9, 0xD},       {0x20, 0x20},     {0x85, 0x85},     {0xA0, 0xA0},
                                      {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F},
                                      {0x205F, 0x205F}, {0x3000, 0x3000}};

// What char_class() answers for each category: letters, numbers (kNum), the rest (kNone, marks) other.
constexpr CharClass kCoarse[8] = {kOther, kLetter, kLetter, kLetter, kLetter, kLetter, kOther, kNumber};

// detail::kTwoByteClass: the ranges below U+0800 applied as ClassTable applies them (white space wins).
constexpr std::array<std::uint8_t, 0x800> two_byte_classes() {
  std::array<std::uint8_t, 0x800> table{};
  for (const CategoryRange& r : kCategoryRanges)
    for (std::uint32_t cp = r.first; cp <= r.last && cp < table.size(); ++cp) table[cp] = kCoarse[r.category];
  for (const CodeRange& r : kSpaceRanges)
    for (std::uint32_t cp = r.first; cp <= r.last && cp < table.size(); ++cp) table[cp] = kSpace;
  return table;
}

}  // namespace

constexpr std::array<std::uint8_t, 0x800> detail::kTwoByteClass = two_byte_classes();

detail::ClassTable::ClassTable() {
  std::vector<std::uint8_t> flat(0x110000, kNone);
  for (const CategoryRange& r : kCategoryRanges)
    for (std::uint32_t cp = r.first; cp <= r.last; ++cp) flat[cp] = r.category;
  for (const CodeRange& r : kSpaceRanges)
    for (std::uint32_t cp = r.first; cp <= r.last; ++cp) flat[cp] |= kSpaceBit;
  for (std::uint8_t& e : flat) {
    const CharClass cls = (e & kSpaceBit) ? kSpace : kCoarse[e & 7];
    e = static_cast<std::uint8_t>(e | cls << kClassShift);
  }
  for (std::size_t block = 0; block < stage1.size(); ++block) {
    const std::uint8_t* data = flat.data() + block * 256;
    std::size_t found = stage2.size() / 256;
    for (std::size_t b = 0; b < stage2.size() / 256; ++b) {
      if (std::equal(data, data + 256, stage2.data() + b * 256)) {
        found = b;
        break;
      }
    }
    if (found == stage2.size() / 256) stage2.insert(stage2.end(), data, data + 256);
    stage1[block] = static_cast<std::uint16_t>(found);
  }
}

void prepare_tables() { detail::class_table(); }

namespace {

// Length of the valid UTF-8 sequence at p[0..n), or 0 if invalid; then *bad is the maximal invalid subpart.
std::size_t valid_sequence(const unsigned char* p, std::size_t n, std::size_t* bad) {
  const unsigned char b = p[0];
  if (b < 0x80) return 1;
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    *bad = 1;
    return 0;
  }
  for (std::size_t i = 1; i <= need; ++i) {
    const unsigned char c = i < n ? p[i] : 0;
    const bool ok = i < n && c >= (i == 1 ? lo : 0x80) && c <= (i == 1 ? hi : 0xBF);
    if (!ok) {
      *bad = i;
      return 0;
    }
  }
  return need + 1;
}

}  // namespace

namespace detail {
// clang-format off
const std::uint8_t kAsciiClass[128] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
// clang-format on

}  // namespace detail

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t ascii_prefix(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    unsigned char any = 0;  // a branch-free OR of the block, which the compiler vectorises
    for (std::size_t k = 0; k < 128; ++k) any |= p[i + k];
    if (any & 0x80) break;
  }
  for (; i + 16 <= n; i += 16) {  // narrows a stopped block (and the rest) to 16 bytes before the byte loop
    unsigned char any = 0;
    for (std::size_t k = 0; k < 16; ++k) any |= p[i + k];
    if (any & 0x80) break;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

std::size_t first_invalid(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      // Short ASCII runs (spaces and punctuation between the words of other scripts) byte by byte: the block
      // scan's set-up and exits cost more than it saves on them; it takes over after 16 bytes.
      const std::size_t stop = std::min(n, i + 16);
      while (i < stop && p[i] < 0x80) ++i;
      if (i == stop) i += ascii_prefix(text.substr(i));
      continue;
    }
    // Two- and three-byte characters whose lead byte allows any continuation bytes (all but E0 and ED: most
    // of the text of other scripts) are checked here, without the call: it was a call per character.
    const unsigned char b = p[i];
    if (b >= 0xC2 && b <= 0xDF && i + 1 < n && (p[i + 1] & 0xC0) == 0x80) {
      i += 2;
      continue;
    }
    if (b >= 0xE1 && b <= 0xEF && b != 0xED && i + 2 < n && (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80) {
      i += 3;
      continue;
    }
    std::size_t bad = 0;
    const std::size_t len = valid_sequence(p + i, n - i, &bad);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

std::string to_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::string out;
  out.reserve(n + 16);
  std::size_t i = 0;
  while (i < n) {
    std::size_t bad = 0;
    const std::size_t len = valid_sequence(p + i, n - i, &bad);
    if (len > 0) {
      out.append(text.data() + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += bad;
    }
  }
  return out;
}

}  // namespace llmtrain::tokenizer::unicode
