// A tokenizer as Hugging Face's tokenizers library reads it, for checkpoint exports: the tokenizer.json
// text that encodes exactly like Tokenizer::load(path) does.
#pragma once

#include <string>

namespace llmtrain::tokenizer {

// A tokenizer.json source (the file, or a directory holding one) comes back as it is. GPT-2's vocabulary
// and merges pair (vocab.json + merges.txt, or OpenAI's encoder.json + vocab.bpe, which transformers does
// not read) becomes the tokenizer.json of the pipeline Tokenizer::load gives the pair: byte-level BPE with
// GPT-2's split and no prefix space, the byte-level decoder, and "<|endoftext|>" as a special added token
// when the vocabulary has it. Errors name the file.
std::string hf_tokenizer_json(const std::string& path);

}  // namespace llmtrain::tokenizer
