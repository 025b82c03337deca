// Fuzz target: arbitrary bytes as tokenizer.json. Loading must either succeed or throw
// llmtrain::Error (never crash or hang); a loaded tokenizer must normalize and encode without crashing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "llmtrain/core/error.hpp"
#include "tokenizer_impl.hpp"
#include "unicode.hpp"

namespace tk = llmtrain::tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tk::Tokenizer::Impl impl;
  try {
    tk::load_tokenizer_json(text, "fuzz.json", impl);
    tk::finish_loading(impl);
  } catch (const llmtrain::Error&) {
    return 0;
  }
  // Encode a few strings through the loaded pipeline (the public class needs a file, so drive Impl).
  tk::EncodeScratch scratch;
  std::vector<tk::TokenId> ids;
  // The fuzz input itself (as valid UTF-8) goes through the normalizer too, so NFC & co. see arbitrary text.
  const std::string input = tk::unicode::to_valid_utf8(text);
  for (std::string_view raw : {std::string_view("Hello world, it's 2024!"), std::string_view("  \t\r\n"),
                               std::string_view("caf\xC3\xA9 e\xCC\x81 \xF0\x9F\xA6\x99 <s>"), std::string_view(input)}) {
    std::string sample(raw);
    if (impl.normalizer) impl.normalizer->normalize(sample);
    ids.clear();
    if (impl.pre_tokenizer) {
      struct Sink final : tk::PieceSink {
        const tk::BpeModel* model;
        tk::EncodeScratch* scratch;
        std::vector<tk::TokenId>* out;
        void operator()(std::string_view piece, bool) override { model->encode_piece(piece, *scratch, *out); }
      } sink;
      sink.model = impl.model.get();
      sink.scratch = &scratch;
      sink.out = &ids;
      impl.pre_tokenizer->split(sample, true, sink);
    } else {
      impl.model->encode_piece(sample, scratch, ids);
    }
  }
  return 0;
}
