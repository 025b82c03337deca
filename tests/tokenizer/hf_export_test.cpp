// hf_tokenizer_json: the tokenizer.json written beside a checkpoint export encodes like the tokenizer the
// run used. GPT-2's encoder.json + vocab.bpe pair becomes a tokenizer.json whose every id of the
// differential corpus matches Hugging Face's GPT-2 (the corpus' reference digests) and llmtrain's loader
// of the pair; a tokenizer.json source comes back byte for byte; a path with no tokenizer is an error naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/tokenizer/hf_export.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"

namespace llmtrain::tokenizer {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(TokenizerHfExport, Gpt2PairBecomesATokenizerJsonThatEncodesAlike) {
  const Tokenizer pair = Tokenizer::load(test::gpt2_dir());
  const Tokenizer json = Tokenizer::load(write_temp("gpt2_export.json", hf_tokenizer_json(test::gpt2_dir())));
  EXPECT_EQ(json.vocab_size(), pair.vocab_size());
  EXPECT_EQ(json.token_to_id("<|endoftext|>"), pair.token_to_id("<|endoftext|>"));
  const test::Corpus& corpus = test::corpus();
  ASSERT_FALSE(corpus.docs.empty());
  for (std::size_t i = 0; i < corpus.docs.size(); ++i) {
    const std::vector<TokenId> ids = json.encode(corpus.docs[i]);
    ASSERT_EQ(test::ids_digest(ids), corpus.refs[i][0]) << "document " << i << " differs from Hugging Face's GPT-2";
    ASSERT_EQ(ids, pair.encode(corpus.docs[i])) << "document " << i;
    ASSERT_EQ(json.decode(ids), pair.decode(ids)) << "document " << i;
  }
  const std::vector<TokenId> framed = json.encode("one<|endoftext|>two");
  EXPECT_EQ(framed, pair.encode("one<|endoftext|>two"));
  EXPECT_NE(std::find(framed.begin(), framed.end(), *pair.token_to_id("<|endoftext|>")), framed.end());
}

TEST(TokenizerHfExport, TokenizerJsonComesBackAsItIs) {
  EXPECT_EQ(hf_tokenizer_json(test::mistral_json()), test::read_binary(test::mistral_json()));
}

TEST(TokenizerHfExport, NoTokenizerThereIsAnErrorNamingThePath) {
  const std::string empty = test::temp_dir() + "/no_tokenizer_here";
  std::filesystem::create_directories(empty);
  try {
    hf_tokenizer_json(empty);
    FAIL() << "an empty directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(empty + ": directory has no tokenizer.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace llmtrain::tokenizer
