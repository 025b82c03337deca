// The block-wise ASCII scan of UTF-8 validation (unicode::ascii_prefix, unicode::first_invalid): the scan
// returns what a plain byte loop finds at every alignment and block position (the first 128-byte block, the
// 16-byte narrowing, the byte tail), and first_invalid stops exactly at the first invalid sequence, on random
// bytes and on the whole differential corpus (also with invalid bytes planted in it).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "test_data.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

std::size_t byte_loop_prefix(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size() && static_cast<unsigned char>(t[i]) < 0x80) ++i;
  return i;
}

TEST(AsciiScan, FindsTheFirstNonAsciiByteAtEveryPosition) {
  std::mt19937 rng(15);
  std::string buffer(600 + 64, ' ');
  for (char& c : buffer) c = static_cast<char>(rng() % 0x80);
  for (std::size_t offset = 0; offset < 64; offset += 7) {  // alignments
    for (std::size_t n : {0, 1, 15, 16, 17, 127, 128, 129, 143, 144, 255, 256, 300, 600}) {
      const std::string_view text(buffer.data() + offset, n);
      ASSERT_EQ(unicode::ascii_prefix(text), n) << "all ASCII, n " << n << " offset " << offset;
      for (std::size_t at = 0; at < n; at += (at < 260 ? 1 : 37)) {  // every position of two blocks, then a sample
        const char saved = buffer[offset + at];
        buffer[offset + at] = static_cast<char>(0x80 + rng() % 0x80);
        ASSERT_EQ(unicode::ascii_prefix(text), at) << "n " << n << " offset " << offset;
        ASSERT_EQ(byte_loop_prefix(text), at);
        buffer[offset + at] = saved;
      }
    }
  }
}

// first_invalid's answer k is right when text[0, k) is valid UTF-8 (to_valid_utf8 keeps it) and, if k is
// inside the text, an invalid sequence starts at k (to_valid_utf8 replaces it by U+FFFD).
void expect_first_invalid_exact(const std::string& text) {
  const std::size_t k = unicode::first_invalid(text);
  ASSERT_LE(k, text.size());
  const std::string valid = text.substr(0, k);
  ASSERT_EQ(unicode::to_valid_utf8(valid), valid) << "invalid byte before offset " << k;
  if (k < text.size()) {
    ASSERT_EQ(unicode::to_valid_utf8(text.substr(k)).compare(0, 3, "\xEF\xBF\xBD"), 0) << k;
  }
}

TEST(AsciiScan, FirstInvalidIsExactOnRandomBytes) {
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {"a", "hello world ", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                           "\x80", "\xC3", "\xED\xA0\x80", "\xF4\x90\x80\x80", std::string(150, 'x')};
  std::size_t invalid = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int count = static_cast<int>(rng() % 40);
    for (int k = 0; k < count; ++k) text += pieces[rng() % pieces.size()];
    expect_first_invalid_exact(text);
    invalid += unicode::first_invalid(text) != text.size();
  }
  EXPECT_GT(invalid, 1000u);  // both outcomes are exercised
  EXPECT_LT(invalid, 3000u);
}

TEST(AsciiScan, FirstInvalidIsExactOnTheCorpus) {
  std::mt19937 rng(3);
  std::size_t planted_found = 0;
  for (const std::string& doc : test::corpus().docs) {
    expect_first_invalid_exact(doc);
    if (doc.empty()) continue;
    std::string broken = doc;  // a stray continuation byte somewhere in real text
    const std::size_t at = rng() % broken.size();
    broken[at] = '\x80';
    expect_first_invalid_exact(broken);
    planted_found += unicode::first_invalid(broken) <= at;
  }
  EXPECT_GT(planted_found, 0u);
}

}  // namespace
}  // namespace llmtrain::tokenizer
