// GPT-2's vocabulary + merges pair as a tokenizer.json (see hf_export.hpp). The fields are those of Hugging
// Face's own GPT-2 tokenizer.json, so transformers' PreTrainedTokenizerFast loads the export as it loads
// that model's tokenizer.
#include "llmtrain/tokenizer/hf_export.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "llmtrain/core/error.hpp"
#include "source_files.hpp"

namespace llmtrain::tokenizer {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

json byte_level(bool add_prefix_space, bool trim_offsets) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", add_prefix_space}, {"trim_offsets", trim_offsets},
          {"use_regex", true}};
}

std::string from_vocab_and_merges(const fs::path& vocab_path, const fs::path& merges_path) {
  json vocab;
  try {
    vocab = json::parse(read_file(vocab_path.string()));
  } catch (const json::exception& e) {
    LLMTRAIN_FAIL(vocab_path.string(), ": not a JSON vocabulary: ", e.what());
  }
  LLMTRAIN_CHECK(vocab.is_object(), vocab_path.string(), ": not a JSON object of token -> id");
  json merges = json::array();
  for (const MergeLine& line : merge_lines(read_file(merges_path.string()))) merges.push_back(line.text);
  json added = json::array();
  if (const auto eot = vocab.find("<|endoftext|>"); eot != vocab.end())
    added.push_back({{"id", *eot}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  const json out = {{"version", "1.0"},
                    {"truncation", nullptr},
                    {"padding", nullptr},
                    {"added_tokens", added},
                    {"normalizer", nullptr},
                    {"pre_tokenizer", byte_level(false, true)},
                    {"post_processor", byte_level(true, false)},
                    {"decoder", byte_level(true, true)},
                    {"model",
                     {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", nullptr},
                      {"continuing_subword_prefix", ""},
                      {"end_of_word_suffix", ""},
                      {"fuse_unk", false},
                      {"byte_fallback", false},
                      {"vocab", vocab},
                      {"merges", merges}}}};
  return out.dump();
}

}  // namespace

std::string hf_tokenizer_json(const std::string& path) {
  const TokenizerFiles files = find_tokenizer_files(path);
  if (files.merges.empty()) return read_file(files.vocab_or_json);
  return from_vocab_and_merges(files.vocab_or_json, files.merges);
}

}  // namespace llmtrain::tokenizer
