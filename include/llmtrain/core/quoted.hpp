// A string written as a double-quoted literal that both JSON and TOML (a basic string) read back as the same
// bytes: quote, backslash and every control character escaped (TOML forbids them raw, tab excepted, which is
// escaped to be seen; DEL included), other bytes, UTF-8 included, as they are.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace llmtrain {

inline std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04X", byte);
          out += escape;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace llmtrain
