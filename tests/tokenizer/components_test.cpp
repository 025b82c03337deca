// Every supported tokenizer.json component against Hugging Face: data/component_cases.json (made by
// make_component_cases.py) holds small tokenizers with one component swapped in at a time, and HF's ids
// (without and with special tokens) and decoded text for a set of inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"

namespace llmtrain::tokenizer {
namespace {

TEST(TokenizerComponents, MatchHuggingFace) {
  const nlohmann::json cases = nlohmann::json::parse(test::read_binary(test::data_path("component_cases.json")));
  ASSERT_GE(cases.size(), 20u);
  std::size_t checked = 0;
  for (const auto& c : cases) {
    const std::string name = c["name"].get<std::string>();
    const std::string path = test::temp_dir() + "/" + name + ".json";
    std::ofstream(path) << c["tokenizer"].dump();
    const Tokenizer tok = Tokenizer::load(path);
    for (const auto& r : c["results"]) {
      const std::string text = r["text"].get<std::string>();
      const auto ids = r["ids"].get<std::vector<TokenId>>();
      EXPECT_EQ(tok.encode(text), ids) << name << ": '" << text << "'";
      EXPECT_EQ(tok.encode_with_special_tokens(text), r["with_special"].get<std::vector<TokenId>>())
          << name << ": '" << text << "'";
      EXPECT_EQ(tok.decode(ids), r["decoded"].get<std::string>()) << name << ": '" << text << "'";
      ++checked;
    }
  }
  EXPECT_GE(checked, 300u);
}

}  // namespace
}  // namespace llmtrain::tokenizer
