// Pattern matchers used by the Split pre-tokenizer and the Replace normalizer.
//
// A Split regex of tokenizer.json runs in Hugging Face through Oniguruma. For the patterns that real
// tokenizers use (GPT-2, Llama-3 / cl100k-style, Qwen2, o200k) we have hand-written scanners that give the
// same matches an order of magnitude faster; any other pattern runs through PCRE2 (UTF + UCP mode), with \s
// widened to Oniguruma's white space set.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace llmtrain::tokenizer {

class Matcher {
 public:
  virtual ~Matcher() = default;
  // The leftmost match starting at or after `from`; lookarounds see the whole text. False if none.
  virtual bool find(std::string_view text, std::size_t from, std::size_t* start, std::size_t* end) const = 0;
};

// A known pattern gets its hand-written scanner, anything else PCRE2; `where` names the file for errors.
std::unique_ptr<Matcher> make_regex_matcher(const std::string& pattern, const std::string& where);
// Always PCRE2 (tests compare it with the hand-written scanners).
std::unique_ptr<Matcher> make_pcre2_matcher(const std::string& pattern, const std::string& where);
std::unique_ptr<Matcher> make_literal_matcher(const std::string& literal);

// The hand-written scanners, exposed for the pre-tokenizers and tests.
std::unique_ptr<Matcher> make_gpt2_matcher();
std::unique_ptr<Matcher> make_cl100k_matcher(int max_digits);  // Llama-3: 3 digits; Qwen2: 1
std::unique_ptr<Matcher> make_o200k_matcher();

// Calls fn(start, end) for each match in order, with Oniguruma's iteration rule for empty matches (an empty
// match right where the previous match ended is skipped and the search moves on by one character).
template <typename Fn>
void for_each_match(const Matcher& m, std::string_view text, Fn&& fn) {
  std::size_t pos = 0, last_end = std::string_view::npos, start = 0, end = 0;
  while (pos <= text.size() && m.find(text, pos, &start, &end)) {
    if (start == end && end == last_end) {
      pos = end + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    fn(start, end);
    last_end = end;
    if (start == end) {
      pos = end + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
    } else {
      pos = end;
    }
  }
}

}  // namespace llmtrain::tokenizer
