// Public API of the tokenizer: load a Hugging Face tokenizer (tokenizer.json, vocab.json + merges.txt, or
// GPT-2's encoder.json + vocab.bpe) and encode text into exactly the ids Hugging Face `tokenizers` produces.
//
// A Tokenizer is an immutable, shared value: copies are cheap (one shared pointer) and every const method
// may be called concurrently from several threads on one object. Encoding keeps a per-thread pre-token
// cache, so a thread that encodes many documents gets faster after its first few.
// See docs/tokenizer.md for the supported components, the exactness guarantees and measured speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmtrain::tokenizer {

using TokenId = std::int32_t;

class Tokenizer {
 public:
  // path: a tokenizer.json file, or a directory holding tokenizer.json, or vocab.json + merges.txt, or
  // encoder.json + vocab.bpe. Throws llmtrain::Error naming the file and the unsupported or malformed part.
  static Tokenizer load(const std::string& path);

  // Appends the ids of `text` to `out`, without the post-processor's special tokens (HF
  // `encode(text, add_special_tokens=False)`). Added tokens written in the text (e.g. "<|endoftext|>") are
  // recognised, as HF does. Invalid UTF-8 is first replaced by U+FFFD per maximal invalid subpart (Python's
  // bytes.decode("utf-8", "replace")), then encoded.
  void encode(std::string_view text, std::vector<TokenId>& out) const;
  std::vector<TokenId> encode(std::string_view text) const;
  // HF `encode(text, add_special_tokens=True)`: applies the post-processor (e.g. prepends BOS).
  std::vector<TokenId> encode_with_special_tokens(std::string_view text) const;

  // HF `decode(ids, skip_special_tokens=False)`. Throws on an id outside the vocabulary.
  std::string decode(const TokenId* ids, std::size_t n) const;
  std::string decode(const std::vector<TokenId>& ids) const { return decode(ids.data(), ids.size()); }

  // One more than the largest id of the model vocabulary and the added tokens (the embedding table size).
  std::size_t vocab_size() const;
  // The single special token the post-processor puts first / last (TemplateProcessing), if any.
  std::optional<TokenId> bos_id() const;
  std::optional<TokenId> eos_id() const;
  std::optional<TokenId> token_to_id(std::string_view token) const;
  // 64-bit hash of the loaded file contents: equal files give equal fingerprints (drift detection).
  std::uint64_t fingerprint() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// decode()'s bytes as text: each maximal invalid UTF-8 subpart (a token boundary inside a character)
// becomes U+FFFD, as transformers' decode (Python's bytes.decode("utf-8", "replace")) prints it.
std::string to_valid_utf8(std::string_view bytes);

}  // namespace llmtrain::tokenizer
