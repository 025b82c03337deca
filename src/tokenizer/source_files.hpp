// Which files a tokenizer path names, by Tokenizer::load's rule, and reading them (defined in
// tokenizer_files.cpp; the export to Hugging Face's format reads the same files).
#pragma once

#include <string>

namespace llmtrain::tokenizer {

// A tokenizer.json file (merges empty), or the vocabulary and merges of GPT-2's pair: vocab.json +
// merges.txt, or OpenAI's encoder.json + vocab.bpe. A path that is not a directory is taken for a
// tokenizer.json; a directory holding none of them is an error naming it.
struct TokenizerFiles {
  std::string vocab_or_json, merges;
};
TokenizerFiles find_tokenizer_files(const std::string& path);

// A tokenizer file's bytes; an error names the file.
std::string read_file(const std::string& path);

}  // namespace llmtrain::tokenizer
