// Hand-written scanners equivalent to the pre-tokenizer regexes of GPT-2 and of Llama-3 / Qwen2:
//
//   GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//            \s*[\r\n]+|\s+(?!\S)|\s+          (Qwen2: \p{N} instead of \p{N}{1,3})
//   o200k:   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//            [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//            \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Both patterns match at every position, so a scanner only computes where the match starting at `pos`
// ends, trying the alternatives in order as the regex engine does (including its backtracking on the
// white space alternatives). The differential tests compare them with PCRE2 on the whole corpus.
#include "matcher.hpp"
#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

using unicode::CharClass;

inline CharClass class_at(std::string_view t, std::size_t i, int* len) {
  const auto* p = reinterpret_cast<const unsigned char*>(t.data() + i);
  if (p[0] < 0x80) {
    *len = 1;
    return static_cast<CharClass>(unicode::detail::kAsciiClass[p[0]]);
  }
  if (p[0] < 0xE0) {
    *len = 2;
    return unicode::two_byte_class(p);
  }
  return unicode::char_class(unicode::decode(t.data() + i, len));
}

// End of the run of characters of class `cls` starting at i.
inline std::size_t run_end(std::string_view t, std::size_t i, CharClass cls) {
  int len = 0;
  while (i < t.size() && class_at(t, i, &len) == cls) i += static_cast<std::size_t>(len);
  return i;
}

// The white space alternatives shared by both patterns, at a white space character i:
// \s+(?!\S) takes the run minus its last character when a non-space follows, \s+ the single character.
inline std::size_t whitespace_end(std::string_view t, std::size_t i, std::size_t* last_newline) {
  std::size_t k = i, last_start = i;
  int len = 0;
  *last_newline = std::string_view::npos;
  while (k < t.size() && class_at(t, k, &len) == unicode::kSpace) {
    if (t[k] == '\r' || t[k] == '\n') *last_newline = k;
    last_start = k;
    k += static_cast<std::size_t>(len);
  }
  if (k == t.size() || last_start == i) return k;
  return last_start;
}

inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// 's 't 're 've 'm 'll 'd at i (t[i] == '\''); returns the end or 0.
inline std::size_t contraction_end(std::string_view t, std::size_t i, bool ignore_case) {
  if (i + 1 >= t.size()) return 0;
  const char c1 = ignore_case ? lower(t[i + 1]) : t[i + 1];
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return i + 2;
  // Oniguruma's case folding also maps U+017F LATIN SMALL LETTER LONG S to 's'.
  if (ignore_case && t.substr(i + 1, 2) == "\xC5\xBF") return i + 3;
  if (i + 2 >= t.size()) return 0;
  const char c2 = ignore_case ? lower(t[i + 2]) : t[i + 2];
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return i + 3;
  return 0;
}

class Gpt2Matcher final : public Matcher {
 public:
  bool find(std::string_view t, std::size_t from, std::size_t* start, std::size_t* end) const override {
    if (from >= t.size()) return false;
    *start = from;
    *end = match_end(t, from);
    return true;
  }

 private:
  static std::size_t match_end(std::string_view t, std::size_t i) {
    if (t[i] == '\'') {
      if (std::size_t e = contraction_end(t, i, false)) return e;
    }
    const std::size_t j = t[i] == ' ' ? i + 1 : i;  // the optional leading space
    if (j < t.size()) {
      int len = 0;
      const CharClass cls = class_at(t, j, &len);
      if (cls != unicode::kSpace) return run_end(t, j + static_cast<std::size_t>(len), cls);
    }
    std::size_t newline;
    return whitespace_end(t, i, &newline);
  }
};

class Cl100kMatcher final : public Matcher {
 public:
  explicit Cl100kMatcher(int max_digits) : max_digits_(max_digits) {}
  bool find(std::string_view t, std::size_t from, std::size_t* start, std::size_t* end) const override {
    if (from >= t.size()) return false;
    *start = from;
    *end = match_end(t, from);
    return true;
  }

 private:
  std::size_t match_end(std::string_view t, std::size_t i) const {
    const char c = t[i];
    if (c == '\'') {
      if (std::size_t e = contraction_end(t, i, true)) return e;
    }
    int len = 0;
    const CharClass cls = class_at(t, i, &len);
    const std::size_t next = i + static_cast<std::size_t>(len);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (cls == unicode::kLetter) return run_end(t, next, unicode::kLetter);
    int next_len = 0;
    if (cls != unicode::kNumber && c != '\r' && c != '\n' && next < t.size() &&
        class_at(t, next, &next_len) == unicode::kLetter)
      return run_end(t, next, unicode::kLetter);
    // \p{N}{1,3}
    if (cls == unicode::kNumber) {
      std::size_t k = next;
      for (int count = 1; count < max_digits_ && k < t.size() && class_at(t, k, &len) == unicode::kNumber; ++count)
        k += static_cast<std::size_t>(len);
      return k;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    const std::size_t j = c == ' ' ? i + 1 : i;
    if (j < t.size() && class_at(t, j, &len) == unicode::kOther) {
      std::size_t k = run_end(t, j, unicode::kOther);
      while (k < t.size() && (t[k] == '\r' || t[k] == '\n')) ++k;
      return k;
    }
    // \s*[\r\n]+ , then \s+(?!\S) , then \s+
    std::size_t last_newline;
    const std::size_t e = whitespace_end(t, i, &last_newline);
    if (last_newline != std::string_view::npos) return last_newline + 1;
    return e;
  }
  int max_digits_;
};

// o200k's letter classes: "upper" U = [Lu Lt Lm Lo M], "lower" W = [Ll Lm Lo M] (Lm, Lo, M are in both).
inline bool is_upper(unicode::Category c) {
  return c == unicode::kLu || c == unicode::kLt || c == unicode::kLm || c == unicode::kLo || c == unicode::kMark;
}
inline bool is_lower(unicode::Category c) {
  return c == unicode::kLl || c == unicode::kLm || c == unicode::kLo || c == unicode::kMark;
}
inline unicode::Category category_at(std::string_view t, std::size_t i, int* len) {
  return unicode::category(unicode::decode(t.data() + i, len));
}

class O200kMatcher final : public Matcher {
 public:
  bool find(std::string_view t, std::size_t from, std::size_t* start, std::size_t* end) const override {
    if (from >= t.size()) return false;
    *start = from;
    *end = match_end(t, from);
    return true;
  }

 private:
  // An optional case-insensitive contraction after a word ending at e.
  static std::size_t with_contraction(std::string_view t, std::size_t e) {
    if (e < t.size() && t[e] == '\'') {
      if (std::size_t c = contraction_end(t, e, true)) return c;
    }
    return e;
  }
  // U*W+ at q as the backtracking engine finds it, or 0: the greedy U run, then a W run after it, else the
  // last W character inside the U run.
  static std::size_t upper_star_lower_plus(std::string_view t, std::size_t q) {
    std::size_t j = q, last_lower_end = 0;
    int len = 0;
    while (j < t.size()) {
      const unicode::Category c = category_at(t, j, &len);
      if (!is_upper(c)) break;
      j += static_cast<std::size_t>(len);
      if (is_lower(c)) last_lower_end = j;
    }
    std::size_t k = j;
    while (k < t.size() && is_lower(category_at(t, k, &len))) k += static_cast<std::size_t>(len);
    if (k > j) return k;
    return last_lower_end;
  }
  // U+W* at q, or 0.
  static std::size_t upper_plus_lower_star(std::string_view t, std::size_t q) {
    std::size_t j = q;
    int len = 0;
    while (j < t.size() && is_upper(category_at(t, j, &len))) j += static_cast<std::size_t>(len);
    if (j == q) return 0;
    while (j < t.size() && is_lower(category_at(t, j, &len))) j += static_cast<std::size_t>(len);
    return j;
  }

  static std::size_t match_end(std::string_view t, std::size_t i) {
    int len = 0;
    const CharClass cls = class_at(t, i, &len);
    const std::size_t next = i + static_cast<std::size_t>(len);
    // The optional [^\r\n\p{L}\p{N}] prefix is tried first, then its absence.
    const bool prefix = cls != unicode::kLetter && cls != unicode::kNumber && t[i] != '\r' && t[i] != '\n';
    for (auto word : {&upper_star_lower_plus, &upper_plus_lower_star}) {
      if (prefix) {
        if (std::size_t e = word(t, next)) return with_contraction(t, e);
      }
      if (std::size_t e = word(t, i)) return with_contraction(t, e);
    }
    if (cls == unicode::kNumber) {  // \p{N}{1,3}
      std::size_t k = next;
      for (int count = 1; count < 3 && k < t.size() && class_at(t, k, &len) == unicode::kNumber; ++count)
        k += static_cast<std::size_t>(len);
      return k;
    }
    const std::size_t j = t[i] == ' ' ? i + 1 : i;  // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    if (j < t.size() && class_at(t, j, &len) == unicode::kOther) {
      std::size_t k = run_end(t, j, unicode::kOther);
      while (k < t.size() && (t[k] == '\r' || t[k] == '\n' || t[k] == '/')) ++k;
      return k;
    }
    std::size_t last_newline;
    const std::size_t e = whitespace_end(t, i, &last_newline);
    if (last_newline != std::string_view::npos) return last_newline + 1;
    return e;
  }
};

}  // namespace

std::unique_ptr<Matcher> make_o200k_matcher() { return std::make_unique<O200kMatcher>(); }

std::unique_ptr<Matcher> make_gpt2_matcher() { return std::make_unique<Gpt2Matcher>(); }
std::unique_ptr<Matcher> make_cl100k_matcher(int max_digits) { return std::make_unique<Cl100kMatcher>(max_digits); }

}  // namespace llmtrain::tokenizer
