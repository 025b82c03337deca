// Rotary embedding on the device (device_ops.hpp's rope_apply): one thread per rotated pair, with
// row_kernels.inc's rope_pair, so it computes what the host's rope_row does, element by element.
#include <climits>
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "grid.cuh"
#include "llmtrain/core/error.hpp"
#include "row_math.cuh"

namespace llmtrain::model::cuda {
namespace {

// Pair p of row r: head h = p / half, index k = p % half (the pair (k, k + half) of that head). A row's pairs
// number rotated_heads * half, a few thousand: 32-bit arithmetic.
__global__ void rotate_pairs(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len,
                             Index width, int rotated_heads, int head_dim, float sign) {
  const int half = head_dim / 2;
  for_each_element(rows, Index(rotated_heads) * half, [=](Index r, Index p) {
    const int h = int(p) / half, k = int(p) % half;
    float* v = qk + r * width + Index(h) * head_dim;
    const Index angle = (r % seq_len) * half + k;
    rope_pair(v[k], v[k + half], cos_table[angle], sin_table[angle], sign);
  });
}

}  // namespace

void rope_apply(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len, Index width,
                Index rotated_heads, Index head_dim, int direction, cudaStream_t stream) {
  const Index pairs_per_row = rotated_heads * (head_dim / 2);
  if (rows * pairs_per_row == 0) return;
  LLMTRAIN_CHECK(pairs_per_row <= INT_MAX, "rope_apply: ", rotated_heads, " heads of ", head_dim, " per row");
  rotate_pairs<<<matrix_blocks(rows, pairs_per_row), kThreads, 0, stream>>>(
      qk, cos_table, sin_table, rows, seq_len, width, int(rotated_heads), int(head_dim), float(direction));
  check_launch("rope_apply (rotate_pairs)");
}

}  // namespace llmtrain::model::cuda
