// Default document framing from a Hugging Face tokenizer (see tokenizer_encoder.hpp).
#include "llmtrain/data/tokenizer_encoder.hpp"

namespace llmtrain::data {

void set_default_special_tokens(const tokenizer::Tokenizer& tokenizer, LoaderOptions& options) {
  options.bos_id = tokenizer.bos_id();
  options.eos_id = tokenizer.eos_id();
  if (!options.bos_id && !options.eos_id) options.eos_id = tokenizer.token_to_id("<|endoftext|>");
}

}  // namespace llmtrain::data
