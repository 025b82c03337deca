// Builds the pipeline components from their tokenizer.json objects. Every "type" that is not supported is
// a load-time error naming the component and the file, never a silent difference.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decoders.hpp"
#include "llmtrain/tokenizer/tokenizer.hpp"
#include "normalizers.hpp"
#include "pre_tokenizers.hpp"

namespace llmtrain::tokenizer {

std::unique_ptr<Normalizer> build_normalizer(const nlohmann::json& j, const std::string& where);
std::unique_ptr<PreTokenizer> build_pre_tokenizer(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Decoder> build_decoder(const nlohmann::json& j, const std::string& where);
// Post-processor: the ids its "single" template puts before and after the sequence.
void build_post_processor(const nlohmann::json& j, const std::string& where, std::vector<TokenId>& prefix,
                          std::vector<TokenId>& suffix);
// True if a ByteLevel pre-tokenizer appears anywhere in j (then BPE sees byte-level text).
bool uses_byte_level(const nlohmann::json& pre_tokenizer);

}  // namespace llmtrain::tokenizer
