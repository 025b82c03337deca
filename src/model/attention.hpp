// Causal grouped-query attention in tiles with an online softmax (FlashAttention-2 scheme, on gemm tiles).
//
// Memory is linear in the sequence length: the T x T score matrix never exists; only one tile x tile block
// of scores at a time. The forward pass keeps the output and the per-row log-sum-exp; the backward pass
// recomputes each score tile from Q and K. Score and value products go through gemm() on strided views of
// the fused QKV buffer (no transposes or copies); the softmax bookkeeping runs as Kokkos kernels. In bf16 the
// tile products round their operands (Q, K, V, P, dO, dS) to bf16, as the model's other products do.
//
// Layout: qkv is [batch*seq, (n_heads + 2 n_kv_heads) * head_dim]: query heads, then key heads, then
// value heads. Query head h reads key/value head h / (n_heads / n_kv_heads). out is [batch*seq,
// n_heads*head_dim]; lse is [batch, n_heads, seq]. With doc (per-token document ids, [batch*seq]) a query
// only sees keys of its own document.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "attention_shape.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/gemm.hpp"

namespace llmtrain::model {

// The model's attention over batch rows of seq positions (a decoder's step: seq 1), in tiles of up to 128.
AttentionShape attention_shape(const ModelConfig& config, std::int64_t batch, std::int64_t seq);

template <typename T>
class Attention {
 public:
  // Score and value products run in `precision` (the model's: bf16 rounds their operands, fp32 accumulates).
  explicit Attention(const AttentionShape& shape, Precision precision = Precision::Fp32);

  void forward(T* out, T* lse, const T* qkv, const std::int32_t* doc);
  // dqkv is overwritten with the gradient with respect to qkv.
  void backward(T* dqkv, const T* dout, const T* out, const T* lse, const T* qkv, const std::int32_t* doc);
  // Elements of T the constructor allocates (its tiles): part of Model::own_bytes.
  static std::int64_t elements(const AttentionShape& shape) { return 2 * shape.tile * shape.tile + 3 * shape.tile; }

 private:
  AttentionShape shape_;
  Precision precision_;
  Kokkos::View<T*> scores_;   // tile x tile
  Kokkos::View<T*> dscores_;  // tile x tile
  Kokkos::View<T*> row_max_, row_sum_, row_delta_;  // tile each
};

// Incremental decoding: one new query per row (shape.batch rows, shape.seq_len 1) against a key/value cache.
// qkv is this step's [rows, width] with its queries rotated; k and v are [rows, capacity, n_kv_heads *
// head_dim] with row b's keys and values at positions [0, length[b]) (the new token's included). The query
// heads sharing a key/value head go through the products together. scores: scratch of
// n_heads / n_kv_heads * capacity; row_max and row_sum of n_heads / n_kv_heads. out as forward's.
template <typename T>
void attention_decode(const AttentionShape& shape, T* out, const T* qkv, const T* k, const T* v,
                      std::int64_t capacity, const std::int64_t* length, T* scores, T* row_max, T* row_sum,
                      Precision precision);

}  // namespace llmtrain::model
