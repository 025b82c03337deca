// The shape of a Llama/Granite-style decoder, and the numbers derived from it (parameter count, flops).
//
// Plain data: the app maps the TOML `[model]` section onto it; tests and benchmarks fill it directly.
#pragma once

#include <cstdint>
#include <string>

namespace llmtrain::model {

struct ModelConfig {
  std::int64_t vocab_size = 50257;
  std::int64_t dim = 256;           // width of the residual stream
  std::int64_t n_layers = 4;
  std::int64_t n_heads = 4;         // query heads; head_dim = dim / n_heads
  std::int64_t n_kv_heads = 4;      // key/value heads (grouped-query attention); divides n_heads
  std::int64_t ffn_hidden = 688;    // SwiGLU hidden width
  std::int64_t max_seq_len = 256;   // longest sequence the rotary table covers
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  bool tied_embeddings = true;      // output head shares the token-embedding matrix
  bool doc_masking = false;         // attention stays within a document (uses Batch::doc_index)
  std::int32_t ignore_index = -1;   // target id that contributes no loss
  double init_std = 0.02;           // Llama-style normal init; output projections scaled by 1/sqrt(2 n_layers)
  std::uint64_t seed = 1234;

  std::int64_t head_dim() const { return dim / n_heads; }
  std::int64_t qkv_width() const { return (n_heads + 2 * n_kv_heads) * head_dim(); }

  // Throws llmtrain::Error naming the offending key and value.
  void validate() const;

  std::int64_t parameter_count() const;
  // Matrix-multiply flops of one forward+backward pass over `tokens` tokens of sequence length `seq_len`
  // (6 per parameter-weight product plus causal attention); the numerator of MFU.
  double train_flops(std::int64_t tokens, std::int64_t seq_len) const;
};

}  // namespace llmtrain::model
