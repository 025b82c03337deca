// ModelConfig: resolution of the derived fields, validation and derived sizes.
#include "llmtrain/core/model_config.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain {

ModelConfig ModelConfig::resolved(std::int64_t tokenizer_vocab_size, std::int64_t seq_len) const {
  ModelConfig out = *this;
  if (out.vocab_size == 0) out.vocab_size = tokenizer_vocab_size;
  if (out.n_kv_heads == 0) out.n_kv_heads = out.n_heads;
  if (out.d_ff == 0) out.d_ff = (8 * out.d_model / 3 + 255) / 256 * 256;
  out.max_seq_len = seq_len;
  out.validate();
  return out;
}

void ModelConfig::validate() const {
  LLMTRAIN_CHECK(vocab_size > 0, "model.vocab_size must be positive, got ", vocab_size);
  LLMTRAIN_CHECK(d_model > 0, "model.d_model must be positive, got ", d_model);
  LLMTRAIN_CHECK(n_layers > 0, "model.n_layers must be positive, got ", n_layers);
  LLMTRAIN_CHECK(n_heads > 0 && d_model % n_heads == 0, "model.n_heads must divide model.d_model = ", d_model, ", got ",
                 n_heads);
  LLMTRAIN_CHECK(head_dim() % 2 == 0, "model.d_model / model.n_heads (head d_model) must be even for rotary embeddings, got ",
                 head_dim());
  LLMTRAIN_CHECK(n_kv_heads > 0 && n_heads % n_kv_heads == 0, "model.n_kv_heads must divide model.n_heads = ",
                 n_heads, ", got ", n_kv_heads);
  LLMTRAIN_CHECK(d_ff > 0, "model.d_ff must be positive, got ", d_ff);
  LLMTRAIN_CHECK(max_seq_len > 0, "model.max_seq_len must be positive, got ", max_seq_len);
  LLMTRAIN_CHECK(rope_theta > 0, "model.rope_theta must be positive, got ", rope_theta);
  LLMTRAIN_CHECK(norm_eps > 0, "model.norm_eps must be positive, got ", norm_eps);
  LLMTRAIN_CHECK(init_std > 0, "model.init_std must be positive, got ", init_std);
}

std::int64_t ModelConfig::parameter_count() const {
  const std::int64_t attention = d_model * qkv_width() + d_model * d_model;
  const std::int64_t mlp = 3 * d_model * d_ff;
  const std::int64_t block = attention + mlp + 2 * d_model;
  return vocab_size * d_model * (tie_embeddings ? 1 : 2) + n_layers * block + d_model;
}

double ModelConfig::train_flops(std::int64_t tokens, std::int64_t seq_len) const {
  const double matmul_params = double(n_layers) * double(d_model * qkv_width() + d_model * d_model + 3 * d_model * d_ff) +
                               double(vocab_size) * double(d_model);
  // Causal attention: QK^T and PV over on average seq_len/2 keys, 2 flops per multiply-add, x3 for training.
  const double attention_per_token = 3.0 * 2.0 * 2.0 * double(n_layers) * double(d_model) * double(seq_len) / 2.0;
  return double(tokens) * (6.0 * matmul_params + attention_per_token);
}

}  // namespace llmtrain
