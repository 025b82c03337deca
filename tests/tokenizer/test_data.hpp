// Test data for the tokenizer tests: the committed files under tests/tokenizer/data (zstd-compressed ones
// are unpacked once per process into a temporary folder) and the optional Llama-3 file from the shared
// data folder (LLMTRAIN_SHARED_DIR, else the build's default ../shared), which the repository cannot carry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmtrain::tokenizer::test {

std::string data_path(const std::string& name);       // tests/tokenizer/data/<name>
std::string read_binary(const std::string& path);
std::string unpacked(const std::string& zst_name, const std::string& as);  // path of the unpacked file
std::string gpt2_dir();       // holds encoder.json + vocab.bpe
std::string mistral_json();   // tokenizer.json
std::optional<std::string> llama3_json();  // data/llama3_tokenizer.json.zst, else the shared folder, else nullopt
std::string temp_dir();

// The differential corpus: documents and, per document, "count:hash" of HF's ids for gpt2, llama3,
// mistral, then "bytes:hash" of HF's decoded text for the same three.
struct Corpus {
  std::vector<std::string> docs;
  std::vector<std::vector<std::string>> refs;
};
const Corpus& corpus();

// FNV-1a 64 over the ids as little-endian int32, as make_corpus.py computes it.
std::string ids_digest(const std::vector<std::int32_t>& ids);
std::string text_digest(const std::string& text);

}  // namespace llmtrain::tokenizer::test
