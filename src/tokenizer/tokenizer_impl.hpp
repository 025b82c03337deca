// The loaded tokenizer: the Hugging Face pipeline (added tokens -> normalizer -> pre-tokenizer -> BPE ->
// post-processor; decoder for the way back) as plain members. Built by tokenizer_files.cpp, run by tokenizer.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "added_tokens.hpp"
#include "bpe_model.hpp"
#include "decoders.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "normalizers.hpp"
#include "pre_tokenizers.hpp"

namespace llmtrain::tokenizer {

struct Tokenizer::Impl {
  std::string source;             // the file(s) it was loaded from, for messages
  std::uint64_t fingerprint = 0;  // hash of the file contents
  std::uint64_t serial = 0;       // unique per loaded tokenizer: keys the per-thread scratch

  std::vector<AddedToken> added_tokens;
  AddedTokenMatcher raw_added;         // matched in the input text
  AddedTokenMatcher normalized_added;  // matched in the normalized text
  std::unique_ptr<Normalizer> normalizer;      // null: none
  std::unique_ptr<PreTokenizer> pre_tokenizer; // null: the whole segment is one piece
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<Decoder> decoder;            // null: tokens joined with spaces (as HF)

  // Post-processor (TemplateProcessing's "single" template): ids around the sequence.
  std::vector<TokenId> prefix, suffix;

  std::vector<std::string> id_to_token;  // model vocabulary and added tokens
  StringMap token_ids;                   // the inverse, for token_to_id()
};

// Parses tokenizer.json text (in tokenizer_files.cpp); `where` names the file in error messages.
void load_tokenizer_json(const std::string& json_text, const std::string& where, Tokenizer::Impl& impl);
// Builds the GPT-2 pipeline around a vocab.json / merges.txt pair (in tokenizer_files.cpp).
void load_vocab_and_merges(const std::string& vocab_json, const std::string& vocab_where,
                           const std::string& merges_txt, const std::string& merges_where, Tokenizer::Impl& impl);
// Fills id_to_token, token_ids and the added-token matchers once the parts are set (in tokenizer.cpp).
void finish_loading(Tokenizer::Impl& impl);

}  // namespace llmtrain::tokenizer
