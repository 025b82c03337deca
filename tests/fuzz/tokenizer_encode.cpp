// Fuzz target: arbitrary bytes as text for the GPT-2 and Mistral tokenizers of the test data
// (tests/tokenizer/data, unpacked once per process). Checks decode(encode(x)) == x after invalid UTF-8 is
// replaced (GPT-2), and that nothing crashes or throws (Mistral).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "llmtrain/tokenizer/tokenizer.hpp"
#include "test_data.hpp"
#include "unicode.hpp"

namespace tk = llmtrain::tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const tk::Tokenizer gpt2 = tk::Tokenizer::load(tk::test::gpt2_dir());
  static const tk::Tokenizer mistral = tk::Tokenizer::load(tk::test::mistral_json());
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string valid = tk::unicode::to_valid_utf8(text);
  if (gpt2.decode(gpt2.encode(text)) != valid) std::abort();
  if (gpt2.encode(text) != gpt2.encode(valid)) std::abort();
  mistral.decode(mistral.encode_with_special_tokens(text));
  return 0;
}
