// libFuzzer target: arbitrary bytes as text for the GPT-2 and Mistral tokenizers of the test data.
// Checks decode(encode(x)) == x after invalid UTF-8 is replaced (GPT-2), and that nothing crashes or
// throws (Mistral). Needs LLMTRAIN_FUZZ_GPT2 (a directory with encoder.json + vocab.bpe) and
// LLMTRAIN_FUZZ_MISTRAL (a tokenizer.json); see docs/tokenizer.md for the command.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "llmtrain/tokenizer/tokenizer.hpp"
#include "unicode.hpp"

namespace tk = llmtrain::tokenizer;

namespace {
const tk::Tokenizer& load(const char* variable) {
  const char* path = std::getenv(variable);
  if (!path) {
    std::fprintf(stderr, "set %s (see docs/tokenizer.md)\n", variable);
    std::abort();
  }
  static std::vector<std::unique_ptr<tk::Tokenizer>> kept;
  kept.push_back(std::make_unique<tk::Tokenizer>(tk::Tokenizer::load(path)));
  return *kept.back();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tk::Tokenizer& gpt2 = load("LLMTRAIN_FUZZ_GPT2");
  static const tk::Tokenizer& mistral = load("LLMTRAIN_FUZZ_MISTRAL");
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string valid = tk::unicode::to_valid_utf8(text);
  if (gpt2.decode(gpt2.encode(text)) != valid) std::abort();
  if (gpt2.encode(text) != gpt2.encode(valid)) std::abort();
  mistral.decode(mistral.encode_with_special_tokens(text));
  return 0;
}
