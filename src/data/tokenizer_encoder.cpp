// Default document framing from a Hugging Face tokenizer (see tokenizer_encoder.hpp).
#include "llmtrain/data/tokenizer_encoder.hpp"

namespace llmtrain::data {

void set_default_special_tokens(const tokenizer::Tokenizer& tokenizer, LoaderOptions& options) {
  options.bos_id = tokenizer.bos_id();
  options.eos_id = tokenizer.eos_id();
  // No post-processor framing: use the end-of-document token of the family the vocabulary is from
  // (GPT-2 and cl100k "<|endoftext|>", Llama-3 "<|end_of_text|>", SentencePiece models "</s>").
  for (const char* eos : {"<|endoftext|>", "<|end_of_text|>", "</s>"})
    if (!options.bos_id && !options.eos_id) options.eos_id = tokenizer.token_to_id(eos);
}

}  // namespace llmtrain::data
