// unicode::two_byte_class, the direct table the pre-tokenizer scanners use for two-byte characters, against
// the general lookup char_class(decode()) on every two-byte code point (U+0080..U+07FF): the scanners' splits,
// hence the output, depend on the two agreeing everywhere.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

TEST(CharClass, TwoByteTableAgreesOnEveryTwoByteCodePoint) {
  std::array<int, 4> seen{};
  for (std::uint32_t cp = 0x80; cp < 0x800; ++cp) {
    const unsigned char utf8[2] = {static_cast<unsigned char>(0xC0 | cp >> 6),
                                   static_cast<unsigned char>(0x80 | (cp & 0x3F))};
    int len = 0;
    const unicode::CharClass general = unicode::char_class(unicode::decode(reinterpret_cast<const char*>(utf8), &len));
    ASSERT_EQ(len, 2);
    ASSERT_EQ(unicode::two_byte_class(utf8), general) << "U+" << std::hex << cp;
    ++seen[general];
  }
  // Every class occurs among them (U+0085 and U+00A0 are white space), so a table that ignored its input
  // could not pass.
  for (int n : seen) EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace llmtrain::tokenizer
