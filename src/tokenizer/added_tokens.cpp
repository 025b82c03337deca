// Added-token matching (see added_tokens.hpp): a byte trie walked from each candidate position.
#include "added_tokens.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "unicode.hpp"

namespace llmtrain::tokenizer {
namespace {

// Rust's \w approximated as letters, marks, numbers and '_' (\w counts only decimal numbers, and all
// connector punctuation).
bool is_word_char(std::uint32_t cp) { return cp == '_' || unicode::category(cp) != unicode::kNone; }

std::size_t previous_char(std::string_view text, std::size_t pos) {
  std::size_t p = pos - 1;
  while (p > 0 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80) --p;
  return p;
}

}  // namespace

bool is_word_boundary(std::string_view text, std::size_t begin, std::size_t end) {
  int len = 0;
  if (begin > 0 && is_word_char(unicode::decode(text.data() + previous_char(text, begin), &len))) return false;
  if (end < text.size() && is_word_char(unicode::decode(text.data() + end, &len))) return false;
  return true;
}

std::size_t strip_left(std::string_view text, std::size_t begin) {
  while (begin > 0) {
    const std::size_t p = previous_char(text, begin);
    int len = 0;
    if (unicode::char_class(unicode::decode(text.data() + p, &len)) != unicode::kSpace) break;
    begin = p;
  }
  return begin;
}

std::size_t strip_right(std::string_view text, std::size_t end) {
  while (end < text.size()) {
    int len = 0;
    if (unicode::char_class(unicode::decode(text.data() + end, &len)) != unicode::kSpace) break;
    end += static_cast<std::size_t>(len);
  }
  return end;
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) : tokens_(tokens), trie_(1) {
  for (std::size_t t = 0; t < tokens_.size(); ++t) {
    const std::string& s = tokens_[t].content;
    if (s.empty()) continue;
    first_byte_[static_cast<unsigned char>(s[0])] = true;
    int node = 0;
    for (unsigned char c : s) {
      int child = -1;
      for (const auto& [byte, index] : trie_[static_cast<std::size_t>(node)].children)
        if (byte == c) child = index;
      if (child < 0) {
        child = static_cast<int>(trie_.size());
        trie_[static_cast<std::size_t>(node)].children.emplace_back(c, child);
        trie_.emplace_back();
      }
      node = child;
    }
    trie_[static_cast<std::size_t>(node)].token = static_cast<int>(t);
  }
  if (std::count(std::begin(first_byte_), std::end(first_byte_), true) == 1)
    only_first_byte_ = static_cast<int>(std::find(std::begin(first_byte_), std::end(first_byte_), true) - first_byte_);
}

int AddedTokenMatcher::longest_at(std::string_view text, std::size_t pos, std::size_t* end) const {
  int node = 0, best = -1;
  for (std::size_t i = pos; i < text.size(); ++i) {
    int child = -1;
    for (const auto& [byte, index] : trie_[static_cast<std::size_t>(node)].children)
      if (byte == static_cast<unsigned char>(text[i])) child = index;
    if (child < 0) break;
    node = child;
    if (trie_[static_cast<std::size_t>(node)].token >= 0) {
      best = trie_[static_cast<std::size_t>(node)].token;
      *end = i + 1;
    }
  }
  return best;
}

// Real tokenizers' added tokens all start with the same byte ('<'), so memchr (vectorised by the C library)
// finds the candidates; this scan runs over every byte of every text, and a byte loop was 3 % of encoding.
std::size_t AddedTokenMatcher::next_candidate(std::string_view text, std::size_t pos) const {
  if (pos >= text.size()) return text.size();
  if (only_first_byte_ >= 0) {
    const void* found = std::memchr(text.data() + pos, only_first_byte_, text.size() - pos);
    return found ? static_cast<std::size_t>(static_cast<const char*>(found) - text.data()) : text.size();
  }
  while (pos < text.size() && !first_byte_[static_cast<unsigned char>(text[pos])]) ++pos;
  return pos;
}

AddedTokenMatcher::Match AddedTokenMatcher::find(std::string_view text, std::size_t from) const {
  for (std::size_t pos = next_candidate(text, from); pos < text.size(); pos = next_candidate(text, pos + 1)) {
    std::size_t end = 0;
    const int token = longest_at(text, pos, &end);
    if (token >= 0) return {pos, end, token};
  }
  return {text.size(), text.size(), -1};
}

}  // namespace llmtrain::tokenizer
