// ModelConfig: resolution of the derived fields, validation and derived sizes.
#include "llmtrain/core/model_config.hpp"

#include <cmath>

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
  LLMTRAIN_CHECK(embedding_multiplier > 0, "model.embedding_multiplier must be positive, got ", embedding_multiplier);
  LLMTRAIN_CHECK(residual_multiplier > 0, "model.residual_multiplier must be positive, got ", residual_multiplier);
  LLMTRAIN_CHECK(attention_multiplier >= 0, "model.attention_multiplier must be positive (0: 1/sqrt(head_dim)), got ",
                 attention_multiplier);
  LLMTRAIN_CHECK(logits_scaling > 0, "model.logits_scaling must be positive, got ", logits_scaling);
  LLMTRAIN_CHECK(rope_type == "default" || rope_type == "llama3", "model.rope_type must be \"default\" or \"llama3\", got \"",
                 rope_type, "\"");
  if (rope_type == "llama3") {
    LLMTRAIN_CHECK(rope_factor >= 1, "model.rope_factor must be at least 1, got ", rope_factor);
    LLMTRAIN_CHECK(rope_low_freq_factor > 0 && rope_high_freq_factor > rope_low_freq_factor,
                   "model.rope_high_freq_factor (", rope_high_freq_factor, ") must exceed model.rope_low_freq_factor (",
                   rope_low_freq_factor, ") > 0");
    LLMTRAIN_CHECK(rope_original_max_position_embeddings > 0,
                   "model.rope_original_max_position_embeddings must be positive, got ",
                   rope_original_max_position_embeddings);
  }
}

// Llama 3's remapping (Meta's reference code; transformers' rope_type "llama3"): wavelengths shorter than
// original_max_position_embeddings / high_freq_factor keep their frequency, those longer than
// original / low_freq_factor are stretched by `factor`, and those between blend the two linearly in
// original / wavelength.
std::vector<double> ModelConfig::rope_inverse_frequencies() const {
  const std::int64_t half = head_dim() / 2;
  std::vector<double> out(std::size_t(half), 0.0);
  const double pi = 3.14159265358979323846;
  for (std::int64_t k = 0; k < half; ++k) {
    const double inv = std::pow(rope_theta, -2.0 * double(k) / double(head_dim()));
    double mapped = inv;
    if (rope_type == "llama3") {
      const double original = double(rope_original_max_position_embeddings);
      const double wavelength = 2 * pi / inv;
      if (wavelength > original / rope_low_freq_factor) {
        mapped = inv / rope_factor;
      } else if (wavelength >= original / rope_high_freq_factor) {
        const double smooth = (original / wavelength - rope_low_freq_factor) / (rope_high_freq_factor - rope_low_freq_factor);
        mapped = (1 - smooth) * inv / rope_factor + smooth * inv;
      }
    }
    out[std::size_t(k)] = mapped;
  }
  return out;
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
