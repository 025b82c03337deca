// Normalizers of tokenizer.json: rewrite a text segment before pre-tokenization (SentencePiece-style files
// use Prepend("▁") + Replace(" " -> "▁"); Qwen2 uses NFC). Others (Lowercase, BertNormalizer, ...) are
// not supported: loading a file that uses them fails with an error naming the normalizer.
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
// NFC: (false, true), NFKC: (true, true), NFD: (false, false), NFKD: (true, false).
std::unique_ptr<Normalizer> make_unicode_normalizer(bool compatibility, bool compose);
std::unique_ptr<Normalizer> make_normalizer_sequence(std::vector<std::unique_ptr<Normalizer>> steps);

}  // namespace llmtrain::tokenizer
