// Values written as TOML text (toml_text.hpp).
#include "toml_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "llmtrain/core/quoted.hpp"

namespace llmtrain::schema {

std::string real_to_toml(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest digits that read back as the same double ("1.8e+03" for 1800), then written plainly.
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific).ptr;
  const std::string scientific(buffer, end);  // [-]d[.ddd]e(+|-)dd
  const std::size_t e = scientific.find('e');
  const bool negative = scientific[0] == '-';
  std::string digits = scientific.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent > 6) {  // 1e-5, 1e7: the short form where plain digits are hard to count
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + "e" + std::to_string(exponent);
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const std::size_t whole = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

std::string value_to_toml(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&value)) return real_to_toml(*d);
  return quoted(std::get<std::string>(value));
}

}  // namespace llmtrain::schema
