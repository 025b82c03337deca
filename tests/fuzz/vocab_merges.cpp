// Fuzz target: the two-file tokenizer formats, vocab.json + merges.txt and GPT-2's encoder.json + vocab.bpe,
// through Tokenizer::load on a directory. Input: one flag byte ('e': the encoder.json + vocab.bpe names,
// anything else: vocab.json + merges.txt), then the vocabulary JSON, a "\n=====\n" line, the merges text.
// Loading must succeed or throw llmtrain::Error; a loaded tokenizer must encode text (the input itself
// included) and decode what it encoded without crashing or throwing.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_files.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool gpt2_names = data[0] == 'e';
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto parts = llmtrain::fuzz::split(input, "\n=====\n", 2);
  const llmtrain::fuzz::InputDir dir;
  dir.write(gpt2_names ? "encoder.json" : "vocab.json", parts[0]);
  dir.write(gpt2_names ? "vocab.bpe" : "merges.txt", parts[1]);
  try {
    const auto tokenizer = llmtrain::tokenizer::Tokenizer::load(dir.path().string());
    for (std::string_view text : {std::string_view("Hello world, it's 2024!\n  <|endoftext|>"), input})
      tokenizer.decode(tokenizer.encode(text));
  } catch (const llmtrain::Error&) {
    // a malformed vocabulary or merge list: the expected outcome for most inputs
  }
  return 0;
}
