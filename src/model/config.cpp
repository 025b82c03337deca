// ModelConfig validation and derived sizes.
#include "llmtrain/model/config.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain::model {

void ModelConfig::validate() const {
  LLMTRAIN_CHECK(vocab_size > 0, "model.vocab_size must be positive, got ", vocab_size);
  LLMTRAIN_CHECK(dim > 0, "model.dim must be positive, got ", dim);
  LLMTRAIN_CHECK(n_layers > 0, "model.n_layers must be positive, got ", n_layers);
  LLMTRAIN_CHECK(n_heads > 0 && dim % n_heads == 0, "model.n_heads must divide model.dim = ", dim, ", got ",
                 n_heads);
  LLMTRAIN_CHECK(head_dim() % 2 == 0, "model.dim / model.n_heads (head dim) must be even for rotary embeddings, got ",
                 head_dim());
  LLMTRAIN_CHECK(n_kv_heads > 0 && n_heads % n_kv_heads == 0, "model.n_kv_heads must divide model.n_heads = ",
                 n_heads, ", got ", n_kv_heads);
  LLMTRAIN_CHECK(ffn_hidden > 0, "model.ffn_hidden must be positive, got ", ffn_hidden);
  LLMTRAIN_CHECK(max_seq_len > 0, "model.max_seq_len must be positive, got ", max_seq_len);
  LLMTRAIN_CHECK(rope_theta > 0, "model.rope_theta must be positive, got ", rope_theta);
  LLMTRAIN_CHECK(norm_eps > 0, "model.norm_eps must be positive, got ", norm_eps);
  LLMTRAIN_CHECK(init_std > 0, "model.init_std must be positive, got ", init_std);
}

std::int64_t ModelConfig::parameter_count() const {
  const std::int64_t attention = dim * qkv_width() + dim * dim;
  const std::int64_t mlp = 3 * dim * ffn_hidden;
  const std::int64_t block = attention + mlp + 2 * dim;
  return vocab_size * dim * (tied_embeddings ? 1 : 2) + n_layers * block + dim;
}

double ModelConfig::train_flops(std::int64_t tokens, std::int64_t seq_len) const {
  const double matmul_params = double(n_layers) * double(dim * qkv_width() + dim * dim + 3 * dim * ffn_hidden) +
                               double(vocab_size) * double(dim);
  // Causal attention: QK^T and PV over on average seq_len/2 keys, 2 flops per multiply-add, x3 for training.
  const double attention_per_token = 3.0 * 2.0 * 2.0 * double(n_layers) * double(dim) * double(seq_len) / 2.0;
  return double(tokens) * (6.0 * matmul_params + attention_per_token);
}

}  // namespace llmtrain::model
