// Added tokens ("added_tokens" of tokenizer.json, e.g. "<|endoftext|>"): they are cut out of the text
// before normalization (or, for "normalized": true tokens, out of the normalized text) and map directly to
// their id. Matching is leftmost-longest like Hugging Face's Aho-Corasick matcher, with the token's
// lstrip / rstrip (absorb white space on that side) and single_word (only between non-word characters).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmtrain/tokenizer/tokenizer.hpp"

namespace llmtrain::tokenizer {

struct AddedToken {
  std::string content;
  TokenId id = 0;
  bool lstrip = false, rstrip = false, single_word = false, normalized = false;
};

// Helpers for AddedTokenMatcher::split (defined in added_tokens.cpp).
bool is_word_boundary(std::string_view text, std::size_t begin, std::size_t end);
std::size_t strip_left(std::string_view text, std::size_t begin);
std::size_t strip_right(std::string_view text, std::size_t end);

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(const std::vector<AddedToken>& tokens);

  bool empty() const { return tokens_.empty(); }
  // Calls fn(text_part, -1) for text between tokens and fn({}, id) for each token, in order.
  template <typename Fn>
  void split(std::string_view text, Fn&& fn) const;

 private:
  struct Match {
    std::size_t begin, end;
    int token;
  };
  // The leftmost-longest match starting at or after `from`; token = -1 if none.
  Match find(std::string_view text, std::size_t from) const;
  int longest_at(std::string_view text, std::size_t pos, std::size_t* end) const;
  // The first position at or after pos whose byte starts some token, or text.size().
  std::size_t next_candidate(std::string_view text, std::size_t pos) const;

  struct Node {
    std::vector<std::pair<unsigned char, int>> children;
    int token = -1;
  };
  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_;
  bool first_byte_[256] = {};
  int only_first_byte_ = -1;  // the byte all tokens start with, if they share one
};

template <typename Fn>
void AddedTokenMatcher::split(std::string_view text, Fn&& fn) const {
  std::size_t done = 0;  // text before `done` has been emitted
  std::size_t from = 0;
  while (!tokens_.empty()) {
    const Match m = find(text, from);
    if (m.token < 0) break;
    const AddedToken& token = tokens_[static_cast<std::size_t>(m.token)];
    std::size_t begin = m.begin, end = m.end;
    from = m.end;
    if (token.single_word && !is_word_boundary(text, begin, end)) continue;
    if (token.lstrip) begin = std::max(strip_left(text, begin), done);
    if (token.rstrip) end = strip_right(text, end);
    if (begin > done) fn(text.substr(done, begin - done), TokenId(-1));
    fn(std::string_view(), token.id);
    done = end;
    from = std::max(from, end);
  }
  if (done < text.size()) fn(text.substr(done), TokenId(-1));
}

}  // namespace llmtrain::tokenizer
