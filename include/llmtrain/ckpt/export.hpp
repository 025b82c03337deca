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
// Our names map to Hugging Face's: embedding/tok_embedding -> model.embed_tokens.weight, block.N/wq ->
// model.layers.N.self_attn.q_proj.weight (wk, wv, wo likewise), w1/w3/w2 -> mlp.gate_proj/up_proj/down_proj,
// attn_norm/ffn_norm -> input_layernorm/post_attention_layernorm, head/final_norm -> model.norm.weight,
// head/output -> lm_head.weight (absent with tied embeddings). Matrices are [out, in] in both, and the rotary
// embedding rotates halves (HF's rotate_half), so no tensor is permuted.
struct ExportResult {
  std::uint64_t tensor_bytes = 0;
  std::vector<std::string> tensor_files;  // model.safetensors, or the shards in order
};
ExportResult export_safetensors(Reader& reader, const ExportOptions& options);

}  // namespace llmtrain::ckpt
