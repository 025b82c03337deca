// GPT-2's byte-to-character alphabet: ByteLevel maps each byte to a printable Unicode character so that
// BPE vocabularies can be stored as text. Printable Latin-1 bytes map to themselves, the others to U+0100+.
#pragma once

#include <array>
#include <cstdint>

namespace llmtrain::tokenizer {

struct ByteLevelAlphabet {
  std::array<std::uint32_t, 256> byte_to_char{};
  std::array<std::int16_t, 324> char_to_byte{};  // indexed by code point < 324, -1 if not in the alphabet

  ByteLevelAlphabet() {
    char_to_byte.fill(-1);
    std::uint32_t extra = 0;
    for (std::uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      byte_to_char[b] = printable ? b : 256 + extra++;
      char_to_byte[byte_to_char[b]] = static_cast<std::int16_t>(b);
    }
  }
  int byte_of(std::uint32_t cp) const { return cp < char_to_byte.size() ? char_to_byte[cp] : -1; }
};

inline const ByteLevelAlphabet& byte_level_alphabet() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

}  // namespace llmtrain::tokenizer
