// Export of a checkpoint's model for other software: Hugging Face Llama tensors in safetensors files plus
// what transformers reads beside them (config.json for LlamaForCausalLM, generation_config.json, the
// tokenizer), so that from_pretrained, AutoTokenizer and generate() work on the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmtrain/ckpt/checkpoint.hpp"

namespace llmtrain::ckpt {

struct ExportOptions {
  std::string output_dir;
  bool bf16 = false;  // else fp32
  // The tokens documents were framed with (config.json's and generation_config.json's bos_token_id /
  // eos_token_id: without them transformers falls back to ids 1 and 2); unset: null.
  std::optional<std::int64_t> bos_id, eos_id;
  std::string bos_token, eos_token;  // their text, for tokenizer_config.json
  // The tokenizer as tokenizer.json (tokenizer/hf_export.hpp); empty: no tokenizer files are written.
  std::string tokenizer_json;
  // Tensors beyond this many bytes go into several files, model-0000i-of-0000N.safetensors, named by
  // model.safetensors.index.json, as transformers' save_pretrained does (its default max_shard_size, 5 GB).
  std::uint64_t max_shard_bytes = 5'000'000'000;
};

// Collective over the reader's ranks (rank 0 writes) into output_dir: model.safetensors (or its shards and
// their index), config.json, generation_config.json and, with a tokenizer, tokenizer.json and
// tokenizer_config.json (PreTrainedTokenizerFast with the bos and eos tokens).
// config.json describes a LlamaForCausalLM, or a GraniteForCausalLM when the model has Granite's multipliers;
// Llama 3's rotary remapping goes in rope_scaling; max_position_embeddings is model.max_position_embeddings
// (an import's source's), else data.seq_len.
// Tensor names map as src/ckpt/hf_names.hpp says (head/output -> lm_head.weight is absent with tied
// embeddings); no tensor is transposed or permuted, and the import (hf_import.hpp) is the exact inverse.
struct ExportResult {
  std::uint64_t tensor_bytes = 0;
  std::vector<std::string> tensor_files;  // model.safetensors, or the shards in order
};
ExportResult export_safetensors(Reader& reader, const ExportOptions& options);

}  // namespace llmtrain::ckpt
