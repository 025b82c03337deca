// bf16 conversions (core/bf16.hpp), the one rounding of the wire, the checkpoint export and the emulated bf16
// products: nearest even checked bit for bit (truncation or ties-away-from-zero fail it), NaN kept a NaN, and
// round_to_bf16 giving the fp32 of a bf16 value for every input, NaN included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "llmtrain/core/bf16.hpp"

namespace llmtrain {
namespace {

bool is_nan(std::uint16_t v) { return (v & 0x7fffu) > 0x7f80u; }

std::uint32_t bits_of(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

float from_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

TEST(Bf16, ConversionRoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(bf16_from_float(1.0f), 0x3f80);
  EXPECT_EQ(bf16_from_float(-2.0f), 0xc000);
  EXPECT_EQ(bf16_from_float(1.0f + 0x1p-9f), 0x3f80);               // below half a step
  EXPECT_EQ(bf16_from_float(1.0f + 0x1p-8f), 0x3f80);               // tie, down to even
  EXPECT_EQ(bf16_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);    // just above the tie
  EXPECT_EQ(bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3f82);           // tie, up to even
  EXPECT_EQ(bf16_from_float(-(1.0f + 3 * 0x1p-8f)), 0xbf82);        // ties are symmetric
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7f80);  // rounds to infinity
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::infinity()), 0x7f80);
  const float low_payload_nan = from_bits(0xff800001u);  // payload in the low half only: plain rounding makes it infinite
  EXPECT_TRUE(is_nan(bf16_from_float(low_payload_nan)));
  EXPECT_EQ(bf16_from_float(low_payload_nan) & 0x8000, 0x8000);  // sign kept
  EXPECT_EQ(bf16_to_float(0x3f81), 1.0f + 0x1p-7f);
}

TEST(Bf16, RoundToBf16IsTheFp32OfTheNearestBf16) {
  EXPECT_EQ(round_to_bf16(1.0f + 0x1p-8f), 1.0f);                       // tie, down to even
  EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);        // tie, up to even
  EXPECT_EQ(round_to_bf16(-(1.0f + 0x1p-8f + 0x1p-20f)), -(1.0f + 0x1p-7f));
  // Every result is a bf16 value (its low 16 bits clear), NaNs included: an operand of a bf16 product
  // carries no more than bf16 does.
  for (const std::uint32_t bits : {0x3f812345u, 0xff800001u, 0x7fc00001u, 0x7f7fffffu, 0x00000001u}) {
    const float rounded = round_to_bf16(from_bits(bits));
    EXPECT_EQ(bits_of(rounded) & 0xffffu, 0u) << std::hex << bits;
    EXPECT_EQ(bits_of(rounded) >> 16, bf16_from_float(from_bits(bits))) << std::hex << bits;
  }
  EXPECT_TRUE(std::isnan(round_to_bf16(from_bits(0xff800001u))));
}

}  // namespace
}  // namespace llmtrain
