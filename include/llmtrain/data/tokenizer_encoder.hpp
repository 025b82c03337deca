// The project's Hugging Face tokenizer as the data loader's DocumentEncoder, and the special tokens the
// loader frames documents with by default.
#pragma once

#include <utility>

#include "llmtrain/data/document_encoder.hpp"
#include "llmtrain/data/options.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

namespace llmtrain::data {

class TokenizerEncoder final : public DocumentEncoder {
 public:
  explicit TokenizerEncoder(tokenizer::Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
  void encode(std::string_view text, std::vector<TokenId>& out) const override { tokenizer_.encode(text, out); }
  std::uint64_t fingerprint() const override { return tokenizer_.fingerprint(); }
  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  tokenizer::Tokenizer tokenizer_;
};

// BOS / EOS from the tokenizer's post-processor (TemplateProcessing); a tokenizer without one gets its
// family's end-of-document token as EOS: "<|endoftext|>" (GPT-2, the separator it was trained with),
// "<|end_of_text|>" (Llama-3) or "</s>" (SentencePiece models), the first one its vocabulary has.
void set_default_special_tokens(const tokenizer::Tokenizer& tokenizer, LoaderOptions& options);

}  // namespace llmtrain::data
