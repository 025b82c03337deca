// Decoders of tokenizer.json: turn the token strings of ids back into text. Like Hugging Face, each decoder
// rewrites the whole list of token strings (decode_chain) and the final strings are concatenated.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace llmtrain::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Decoder> make_byte_level_decoder();
std::unique_ptr<Decoder> make_replace_decoder(std::string pattern, std::string content);
std::unique_ptr<Decoder> make_byte_fallback_decoder();
std::unique_ptr<Decoder> make_fuse_decoder();
std::unique_ptr<Decoder> make_strip_decoder(std::string content, std::size_t start, std::size_t stop);
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, bool strip_first_space);
std::unique_ptr<Decoder> make_decoder_sequence(std::vector<std::unique_ptr<Decoder>> steps);

}  // namespace llmtrain::tokenizer
