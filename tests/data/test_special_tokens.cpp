// Default document framing: BOS/EOS from the tokenizer's post-processor, else the family's
// end-of-document token, else none; explicit tokens from [tokenizer] are the app's business.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "llmtrain/data/tokenizer_encoder.hpp"

namespace fs = std::filesystem;
using namespace llmtrain;

namespace {

// A minimal tokenizer.json: vocabulary "a", "b" and the special tokens `specials` (ids 2, 3, ...), all of
// them added tokens, and the post-processor `post` ("" for none).
tokenizer::Tokenizer make_tokenizer(const std::vector<std::string>& specials, const std::string& post) {
  std::string vocab = R"("a": 0, "b": 1)", added;
  for (std::size_t i = 0; i < specials.size(); ++i) {
    const std::string id = std::to_string(i + 2);
    vocab += ", \"" + specials[i] + "\": " + id;
    added += std::string(i ? ", " : "") + R"({"id": )" + id + R"(, "content": ")" + specials[i] +
             R"(", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})";
  }
  char pattern[] = "/tmp/llmtrain-special-XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  std::ofstream(dir / "tokenizer.json")
      << R"({"added_tokens": [)" << added << R"(], )" << (post.empty() ? "" : R"("post_processor": )" + post + ", ")
      << R"("model": {"type": "BPE", "vocab": {)" << vocab << R"(}, "merges": []}})";
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load((dir / "tokenizer.json").string());
  fs::remove_all(dir);
  return tok;
}

TEST(DefaultSpecialTokens, PostProcessorTemplateWins) {
  const std::string post = R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
      {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [2], "tokens": ["<s>"]}}})";
  data::LoaderOptions options;
  data::set_default_special_tokens(make_tokenizer({"<s>", "</s>"}, post), options);
  EXPECT_EQ(options.bos_id, std::optional<TokenId>(2));
  EXPECT_FALSE(options.eos_id.has_value());
}

TEST(DefaultSpecialTokens, WithoutPostProcessorTheFamilysEndOfTextIsEos) {
  data::LoaderOptions llama3;
  data::set_default_special_tokens(make_tokenizer({"<s>", "<|end_of_text|>"}, ""), llama3);
  EXPECT_FALSE(llama3.bos_id.has_value());
  EXPECT_EQ(llama3.eos_id, std::optional<TokenId>(3));

  data::LoaderOptions sentencepiece;
  data::set_default_special_tokens(make_tokenizer({"<s>", "</s>"}, ""), sentencepiece);
  EXPECT_EQ(sentencepiece.eos_id, std::optional<TokenId>(3));

  data::LoaderOptions unframed;  // no known end-of-document token: documents are packed without separators
  data::set_default_special_tokens(make_tokenizer({"<pad>"}, ""), unframed);
  EXPECT_FALSE(unframed.bos_id.has_value());
  EXPECT_FALSE(unframed.eos_id.has_value());
}

}  // namespace
