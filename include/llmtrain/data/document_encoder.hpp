// How the data loader turns a document's text into token ids: a small interface of its own, so the loader
// does not depend on one tokenizer implementation (tests use the byte encoder below; the trainer adapts the
// project's Hugging Face tokenizer with tokenizer_encoder.hpp).
//
// Exactly-once delivery with on-the-fly tokenization rests on one property of every encoder: encode() is a
// pure function of the text. A loader that resumes a document at token t re-encodes it and skips t tokens.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "llmtrain/core/batch.hpp"

namespace llmtrain::data {

class DocumentEncoder {
 public:
  virtual ~DocumentEncoder() = default;
  // Appends the ids of `text` to `out`, without special tokens. Must be deterministic and thread-safe.
  virtual void encode(std::string_view text, std::vector<TokenId>& out) const = 0;
  // Identifies the encoder's vocabulary and rules: a saved loader state is only valid with the same one.
  virtual std::uint64_t fingerprint() const = 0;
};

// One token per byte (ids 0..255): the trivial deterministic encoder of the tests and of byte-level runs.
class ByteEncoder final : public DocumentEncoder {
 public:
  void encode(std::string_view text, std::vector<TokenId>& out) const override {
    for (unsigned char c : text) out.push_back(static_cast<TokenId>(c));
  }
  std::uint64_t fingerprint() const override { return 0x62797465656e63ULL; }  // "byteenc"
};

}  // namespace llmtrain::data
