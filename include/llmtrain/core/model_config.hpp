// The shape of a Llama/Granite-style decoder, and the numbers derived from it (parameter count, flops).
//
// One struct for the TOML `[model]` section and for the model itself. In a file, vocab_size = 0,
// n_kv_heads = 0 and d_ff = 0 mean "derive it"; resolved() fills them in (and max_seq_len from
// data.seq_len) before a model is built. The member defaults serve tests and benchmarks that fill the
// struct directly; a configuration file gets the schema's defaults (src/config/schema_model.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmtrain {

struct ModelConfig {
  std::int64_t vocab_size = 50257;  // 0 in a file: the tokenizer's vocabulary size
  std::int64_t d_model = 256;       // width of the residual stream
  std::int64_t n_layers = 4;
  std::int64_t n_heads = 4;         // query heads; head_dim = d_model / n_heads
  std::int64_t n_kv_heads = 4;      // key/value heads (grouped-query attention); divides n_heads; 0: n_heads
  std::int64_t d_ff = 688;          // SwiGLU hidden width; 0: Llama's rule (8/3 d_model rounded up to 256)
  std::int64_t max_seq_len = 256;   // longest sequence the rotary table covers (data.seq_len in a run)
  std::int64_t max_position_embeddings = 0;  // the context the model is meant for (an import's source's, as
                                            // exports state it); 0: data.seq_len. Not used by the passes.
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  bool tie_embeddings = true;       // output head shares the token-embedding matrix
  bool mask_documents = false;      // attention stays within a document (uses Batch::doc_index)
  std::int32_t ignore_index = -1;   // target id that contributes no loss
  double init_std = 0.02;           // Llama-style normal init; output projections scaled by 1/sqrt(2 n_layers)
  std::int64_t seed = 1234;         // initial weights are a pure function of (seed, tensor, element)
  // Granite's scalings (Hugging Face GraniteConfig); the defaults are Llama's, under which the model computes
  // exactly what it computes without them.
  double embedding_multiplier = 1.0;  // scales the token embeddings entering the first block
  double residual_multiplier = 1.0;   // scales each attention and MLP output before its residual add
  double attention_multiplier = 0.0;  // the softmax scale of q.k; 0: 1 / sqrt(head_dim)
  double logits_scaling = 1.0;        // the logits are divided by it
  // Rotary frequencies: "default" (theta^(-2k/head_dim)) or "llama3", Llama 3.1's remapping of the low
  // frequencies to a longer context (transformers' rope_type "llama3", with its four parameters).
  std::string rope_type = "default";
  double rope_factor = 8.0;
  double rope_low_freq_factor = 1.0;
  double rope_high_freq_factor = 4.0;
  std::int64_t rope_original_max_position_embeddings = 8192;

  std::int64_t head_dim() const { return d_model / n_heads; }
  std::int64_t qkv_width() const { return (n_heads + 2 * n_kv_heads) * head_dim(); }
  // The rotary inverse frequencies, head_dim / 2 of them: theta^(-2k/head_dim), remapped by rope_type.
  std::vector<double> rope_inverse_frequencies() const;

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
