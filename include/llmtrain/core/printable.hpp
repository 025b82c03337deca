// Bytes from an input file made safe to put in a message: printable ASCII as is, every other byte (control
// characters, bytes of binary or non-UTF-8 data) as \xNN, so an error never writes raw bytes to a terminal.
#pragma once

#include <string>
#include <string_view>

namespace llmtrain {

inline std::string printable(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += digits[b >> 4];
      out += digits[b & 15];
    }
  }
  return out;
}

}  // namespace llmtrain
