// UTF-8 decoding and the Unicode character classes the pre-tokenizer patterns need: letters (\p{L}),
// numbers (\p{N}) and white space (\s, the White_Space property), plus the finer general categories of
// o200k's pattern (Lu Ll Lt Lm Lo M). Tables come from unicode_tables.inc (Unicode 16.0).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmtrain::tokenizer::unicode {

enum CharClass : std::uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 3 };
enum Category : std::uint8_t { kNone = 0, kLu = 1, kLl = 2, kLt = 3, kLm = 4, kLo = 5, kMark = 6, kNum = 7 };

namespace detail {
extern const std::uint8_t kAsciiClass[128];
// The CharClass of every code point below U+0800, indexed directly, computed at compile time from the same
// ranges as ClassTable. The two-byte characters (Latin extended, Greek, Cyrillic, Armenian, Hebrew, Arabic...)
// are whole texts of some scripts and the scanners classify each of them: one load from 2 KB, without the
// guard of class_table()'s static, decode's branches and ClassTable's two dependent loads.
extern const std::array<std::uint8_t, 0x800> kTwoByteClass;

// stage1[cp >> 8] selects a 256-entry block of stage2; identical blocks are stored once. An entry is the
// code point's Category | kSpaceBit (White_Space) | its CharClass << kClassShift. The pre-tokenizers look up
// every non-ASCII character here (the scanners' two-byte ones in kTwoByteClass instead), so the lookup is
// inline (two loads) rather than a call.
struct ClassTable {
  static constexpr std::uint8_t kSpaceBit = 8;
  static constexpr int kClassShift = 4;
  std::array<std::uint16_t, 0x1100> stage1{};
  std::vector<std::uint8_t> stage2;
  ClassTable();
  std::uint8_t entry(std::uint32_t cp) const {
    return cp >= 0x110000 ? 0 : stage2[stage1[cp >> 8] * 256u + (cp & 0xFFu)];
  }
};

inline const ClassTable& class_table() {
  static const ClassTable table;
  return table;
}
}  // namespace detail

inline Category category(std::uint32_t cp) { return static_cast<Category>(detail::class_table().entry(cp) & 7); }

// Builds the class table now; it is otherwise built on first use.
void prepare_tables();

inline CharClass char_class(std::uint32_t cp) {
  if (cp < 128) return static_cast<CharClass>(detail::kAsciiClass[cp]);
  return static_cast<CharClass>(detail::class_table().entry(cp) >> detail::ClassTable::kClassShift);
}

// The CharClass of the two-byte character at p (lead byte C2..DF) in VALID UTF-8: char_class(decode(p)).
inline CharClass two_byte_class(const unsigned char* p) {
  return static_cast<CharClass>(detail::kTwoByteClass[(p[0] & 0x1Fu) << 6 | (p[1] & 0x3Fu)]);
}

// Decodes the code point starting at p in VALID UTF-8 and stores its byte length in *len.
inline std::uint32_t decode(const char* s, int* len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s);
  if (p[0] < 0x80) {
    *len = 1;
    return p[0];
  }
  if (p[0] < 0xE0) {
    *len = 2;
    return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
  }
  if (p[0] < 0xF0) {
    *len = 3;
    return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
  }
  *len = 4;
  return ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
}

// Byte length of the UTF-8 sequence starting with lead byte b (valid input only).
inline int sequence_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

// The byte length of the whole multi-byte character at p[0, n) (its lead byte and every continuation byte
// there), or 0: an ASCII byte, a continuation byte, or a character cut short.
inline std::size_t whole_char_length(const unsigned char* p, std::size_t n) {
  if (p[0] < 0xC0) return 0;
  const auto len = static_cast<std::size_t>(sequence_length(p[0]));
  if (len > n) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((p[k] & 0xC0) != 0x80) return 0;
  return len;
}

// A whole multi-byte character p[0, len) (len = whole_char_length > 0) as one number: its bytes, the first in
// the low byte. Two overlapping two-byte reads instead of a loop over the bytes (for len 3 the middle byte is
// read twice, onto itself): per-character keys are made for every character of a new piece.
inline std::uint32_t char_key(const unsigned char* p, std::size_t len) {
  const std::uint32_t head = p[0] | std::uint32_t{p[1]} << 8, tail = p[len - 2] | std::uint32_t{p[len - 1]} << 8;
  return head | tail << (8 * (len - 2));
}

// The code point of a char_key.
inline std::uint32_t key_code_point(std::uint32_t key) {
  const std::uint32_t b0 = key & 0xFF, b1 = (key >> 8) & 0x3F, b2 = (key >> 16) & 0x3F, b3 = key >> 24 & 0x3F;
  return b0 < 0xE0 ? (b0 & 0x1F) << 6 | b1 : b0 < 0xF0 ? (b0 & 0x0F) << 12 | b1 << 6 | b2
                                                       : (b0 & 0x07) << 18 | b1 << 12 | b2 << 6 | b3;
}

void append_utf8(std::string& out, std::uint32_t cp);

// Number of leading ASCII bytes (< 0x80) of text. Scans in 128-byte blocks whose OR the compiler vectorises
// (SSE2 in the baseline build): 3.5-20x faster than a byte loop on prose and code (perf/RESULTS.md).
std::size_t ascii_prefix(std::string_view text);

// Offset of the first byte that does not start a valid UTF-8 sequence, or text.size() if all is valid.
std::size_t first_invalid(std::string_view text);

// Replaces each maximal invalid subpart by U+FFFD (Unicode's recommended practice, used by Python's
// bytes.decode(errors="replace") and Rust's String::from_utf8_lossy).
std::string to_valid_utf8(std::string_view text);

}  // namespace llmtrain::tokenizer::unicode
