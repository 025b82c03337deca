// The shape of one attention call (batch rows of seq_len positions, grouped-query heads, tile, softmax scale),
// free of Kokkos so that the host tiles (attention.hpp) and the device kernels (cuda/attention_kernels.hpp)
// share it.
#pragma once

#include <cstdint>

namespace llmtrain::model {

struct AttentionShape {
  std::int64_t batch = 0, seq_len = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  std::int64_t tile = 128;  // query and key tile length (host tiles; the device kernels choose their own)
  double scale = 0;         // the softmax scale of q.k (Granite's attention_multiplier); 0: 1 / sqrt(head_dim)
  std::int64_t width() const { return (n_heads + 2 * n_kv_heads) * head_dim; }
  bool operator==(const AttentionShape& o) const {
    return batch == o.batch && seq_len == o.seq_len && n_heads == o.n_heads && n_kv_heads == o.n_kv_heads &&
           head_dim == o.head_dim && tile == o.tile && scale == o.scale;
  }
};

// The factor scores are scaled by before the softmax: shape.scale, or 1 / sqrt(head_dim) when it is 0. Training,
// decoding and the device kernels all use it (defined in attention.cpp for float and double).
template <typename T>
T attention_score_scale(const AttentionShape& shape);

}  // namespace llmtrain::model
