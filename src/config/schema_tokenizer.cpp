// The [tokenizer] section of the configuration schema (schema.hpp): which tokenizer, and which BOS/EOS tokens
// frame documents. Each entry binds a key to its member of TokenizerConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema tokenizer_section() {
  using C = Config;
  SectionSchema section{"tokenizer", "The Hugging Face tokenizer used to tokenize raw text on the fly.", {}};
  section.fields = {
      bind_member(&C::tokenizer, &TokenizerConfig::path, required<C>("tokenizer", "path", Kind::InputPath,
           "A tokenizer.json file, or a directory holding tokenizer.json, vocab.json + merges.txt, or "
           "encoder.json + vocab.bpe.")),
      bind_member(&C::tokenizer, &TokenizerConfig::bos_token, text<C>("tokenizer", "bos_token", Kind::String, "",
           "Token put before every document; empty takes the tokenizer's post-processor (Llama: <|begin_of_text|>).")),
      bind_member(&C::tokenizer, &TokenizerConfig::eos_token, text<C>("tokenizer", "eos_token", Kind::String, "",
           "Token put after every document; empty takes the post-processor's, else the first of <|endoftext|>, "
           "<|end_of_text|>, </s> in the vocabulary.")),
  };
  return section;
}

}  // namespace llmtrain::schema
