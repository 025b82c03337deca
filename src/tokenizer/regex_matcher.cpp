// Regex matchers: known patterns map to the hand-written scanners (known_patterns.cpp); other patterns
// compile with PCRE2 (JIT when available). Literal patterns (Split/Replace with "String") use find().
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "llmtrain/core/error.hpp"
#include "matcher.hpp"

namespace llmtrain::tokenizer {
namespace {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// \s as Oniguruma has it (White_Space). PCRE2's UCP \s lacks U+0085 and has U+180E, so it is spelled out.
const char* const kWhiteSpace = "\\t\\n\\x0B\\f\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

std::string onig_compatible(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      else if (e == 'S' && !in_class) out += "[^" + std::string(kWhiteSpace) + "]";
      else (out += '\\') += e;
      continue;
    }
    if (c == '[' && !in_class) in_class = true;
    else if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

class Pcre2Matcher final : public Matcher {
 public:
  Pcre2Matcher(const std::string& pattern, const std::string& where) {
    const std::string translated = onig_compatible(pattern);
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                          PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!code_) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      LLMTRAIN_FAIL(where, ": cannot compile regex '", pattern, "' at offset ", offset, ": ",
                    reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // optional speed-up; the interpreter is the fallback
  }
  ~Pcre2Matcher() override { pcre2_code_free(code_); }
  Pcre2Matcher(const Pcre2Matcher&) = delete;
  Pcre2Matcher& operator=(const Pcre2Matcher&) = delete;

  bool find(std::string_view text, std::size_t from, std::size_t* start, std::size_t* end) const override {
    struct MatchData {
      pcre2_match_data* data = pcre2_match_data_create(64, nullptr);
      ~MatchData() { pcre2_match_data_free(data); }
    };
    thread_local MatchData match;
    const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), from,
                               PCRE2_NO_UTF_CHECK, match.data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    LLMTRAIN_CHECK(rc >= 0, "PCRE2 match failed with error ", rc);
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.data);
    *start = ovector[0];
    *end = ovector[1];
    return true;
  }

 private:
  pcre2_code* code_ = nullptr;
};

class LiteralMatcher final : public Matcher {
 public:
  explicit LiteralMatcher(std::string literal) : literal_(std::move(literal)) {}
  bool find(std::string_view text, std::size_t from, std::size_t* start, std::size_t* end) const override {
    if (literal_.empty() || from > text.size()) return false;
    const std::size_t p = text.find(literal_, from);
    if (p == std::string_view::npos) return false;
    *start = p;
    *end = p + literal_.size();
    return true;
  }

 private:
  std::string literal_;
};

}  // namespace

std::unique_ptr<Matcher> make_regex_matcher(const std::string& pattern, const std::string& where) {
  if (pattern == kGpt2Pattern) return make_gpt2_matcher();
  if (pattern == kLlama3Pattern) return make_cl100k_matcher(3);
  if (pattern == kQwen2Pattern) return make_cl100k_matcher(1);
  if (pattern == kO200kPattern) return make_o200k_matcher();
  return make_pcre2_matcher(pattern, where);
}

std::unique_ptr<Matcher> make_pcre2_matcher(const std::string& pattern, const std::string& where) {
  return std::make_unique<Pcre2Matcher>(pattern, where);
}

std::unique_ptr<Matcher> make_literal_matcher(const std::string& literal) {
  return std::make_unique<LiteralMatcher>(literal);
}

}  // namespace llmtrain::tokenizer
