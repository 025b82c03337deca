// Normalizers of tokenizer.json: rewrite a text segment before pre-tokenization (SentencePiece-style files
// use Prepend("▁") + Replace(" " -> "▁")). Unicode normalization forms (NFC, NFKC, ...) are not
// supported: loading a file that uses them fails with an error naming the normalizer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "matcher.hpp"

namespace llmtrain::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

std::unique_ptr<Normalizer> make_prepend(std::string prefix);
std::unique_ptr<Normalizer> make_replace(std::unique_ptr<Matcher> pattern, std::string content);
std::unique_ptr<Normalizer> make_strip(bool left, bool right);
std::unique_ptr<Normalizer> make_normalizer_sequence(std::vector<std::unique_ptr<Normalizer>> steps);

}  // namespace llmtrain::tokenizer
