// The one mapping between our checkpoint's dataset names and Hugging Face Llama's tensor names, which the
// safetensors export and the import both use (so that one is the exact inverse of the other):
//   /model/embedding/tok_embedding  <-> model.embed_tokens.weight
//   /model/block.N/wq, wk, wv, wo   <-> model.layers.N.self_attn.{q,k,v,o}_proj.weight
//   /model/block.N/w1, w3, w2       <-> model.layers.N.mlp.{gate,up,down}_proj.weight
//   /model/block.N/attn_norm        <-> model.layers.N.input_layernorm.weight
//   /model/block.N/ffn_norm         <-> model.layers.N.post_attention_layernorm.weight
//   /model/head/final_norm          <-> model.norm.weight
//   /model/head/output              <-> lm_head.weight
// Matrices are [out, in] in both, and our rotary embedding rotates halves (HF's rotate_half), so no tensor is
// transposed or permuted either way.
#pragma once

#include <string>

namespace llmtrain::ckpt {

// Hugging Face's name of a dataset; "" for a dataset outside /model; an error for one inside it that has none.
std::string hf_tensor_name(const std::string& dataset);

// The dataset ("/model/<unit>/<tensor>") a Hugging Face tensor fills; "" for a name outside the mapping.
std::string dataset_of_hf_tensor(const std::string& hf_name);

}  // namespace llmtrain::ckpt
