// Export of a checkpoint's model for other software: Hugging Face Llama tensors in a safetensors file plus
// the config.json that transformers' LlamaForCausalLM loads.
#pragma once

#include <string>

#include "llmtrain/ckpt/checkpoint.hpp"

namespace llmtrain::ckpt {

struct ExportOptions {
  std::string output_dir;
  bool bf16 = false;  // else fp32
};

// Collective over the reader's ranks (rank 0 writes): output_dir/model.safetensors and output_dir/config.json.
// Our names map to Hugging Face's: embedding/tok_embedding -> model.embed_tokens.weight, block.N/wq ->
// model.layers.N.self_attn.q_proj.weight (wk, wv, wo likewise), w1/w3/w2 -> mlp.gate_proj/up_proj/down_proj,
// attn_norm/ffn_norm -> input_layernorm/post_attention_layernorm, head/final_norm -> model.norm.weight,
// head/output -> lm_head.weight (absent with tied embeddings). Matrices are [out, in] in both, and the rotary
// embedding rotates halves (HF's rotate_half), so no tensor is permuted. Returns the bytes of tensor data.
std::uint64_t export_safetensors(Reader& reader, const ExportOptions& options);

}  // namespace llmtrain::ckpt
