// The shape of a Llama/Granite-style decoder, and the numbers derived from it (parameter count, flops).
//
// One struct for the TOML `[model]` section and for the model itself. In a file, vocab_size = 0,
// n_kv_heads = 0 and d_ff = 0 mean "derive it"; resolved() fills them in (and max_seq_len from
// data.seq_len) before a model is built. The member defaults serve tests and benchmarks that fill the
// struct directly; a configuration file gets the schema's defaults (src/config/schema_model.cpp).
#pragma once

#include <cstdint>

namespace llmtrain {

struct ModelConfig {
  std::int64_t vocab_size = 50257;  // 0 in a file: the tokenizer's vocabulary size
  std::int64_t d_model = 256;       // width of the residual stream
  std::int64_t n_layers = 4;
  std::int64_t n_heads = 4;         // query heads; head_dim = d_model / n_heads
  std::int64_t n_kv_heads = 4;      // key/value heads (grouped-query attention); divides n_heads; 0: n_heads
  std::int64_t d_ff = 688;          // SwiGLU hidden width; 0: Llama's rule (8/3 d_model rounded up to 256)
  std::int64_t max_seq_len = 256;   // longest sequence the rotary table covers (data.seq_len in a run)
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  bool tie_embeddings = true;       // output head shares the token-embedding matrix
  bool mask_documents = false;      // attention stays within a document (uses Batch::doc_index)
  std::int32_t ignore_index = -1;   // target id that contributes no loss
  double init_std = 0.02;           // Llama-style normal init; output projections scaled by 1/sqrt(2 n_layers)
  std::int64_t seed = 1234;         // initial weights are a pure function of (seed, tensor, element)

  std::int64_t head_dim() const { return d_model / n_heads; }
  std::int64_t qkv_width() const { return (n_heads + 2 * n_kv_heads) * head_dim(); }

  // The derived fields filled in: vocab_size (when 0) from the tokenizer, n_kv_heads and d_ff by rule,
  // max_seq_len = seq_len. Validates the result.
  ModelConfig resolved(std::int64_t tokenizer_vocab_size, std::int64_t seq_len) const;

  // Throws llmtrain::Error naming the offending key and value.
  void validate() const;

  std::int64_t parameter_count() const;
  // Matrix-multiply flops of one forward+backward pass over `tokens` tokens of sequence length `seq_len`
  // (6 per parameter-weight product plus causal attention); the numerator of MFU.
  double train_flops(std::int64_t tokens, std::int64_t seq_len) const;
};

}  // namespace llmtrain
