// Which files a tokenizer path names, by Tokenizer::load's rule, and reading them (defined in
// tokenizer_files.cpp; the export to Hugging Face's format reads the same files).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

// The merges of a merges.txt / vocab.bpe text, one "left right" line each with its 1-based line number
// (for messages): CR line ends dropped, the "#version" header and empty lines skipped.
struct MergeLine {
  std::size_t number;
  std::string text;
};
std::vector<MergeLine> merge_lines(const std::string& merges_txt);

}  // namespace llmtrain::tokenizer
