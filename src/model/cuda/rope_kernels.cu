// Rotary embedding on the device (device_ops.hpp's rope_apply): one thread per rotated pair, with
// row_kernels.inc's rope_pair, so it computes what the host's rope_row does, element by element.
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "grid.cuh"
#include "row_math.cuh"

namespace llmtrain::model::cuda {
namespace {

// Pair i: row r, head h, index k < half (the pair (k, k + half) of that head).
__global__ void rotate_pairs(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len,
                             Index width, Index rotated_heads, Index head_dim, float sign) {
  const Index half = head_dim / 2, per_row = rotated_heads * half;
  for (Index i = first_element(); i < rows * per_row; i += grid_stride()) {
    const Index r = i / per_row, h = (i % per_row) / half, k = i % half;
    float* v = qk + r * width + h * head_dim;
    const Index angle = (r % seq_len) * half + k;
    rope_pair(v[k], v[k + half], cos_table[angle], sin_table[angle], sign);
  }
}

}  // namespace

void rope_apply(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len, Index width,
                Index rotated_heads, Index head_dim, int direction, cudaStream_t stream) {
  const Index pairs = rows * rotated_heads * (head_dim / 2);
  if (pairs == 0) return;
  rotate_pairs<<<blocks_for(pairs), kThreads, 0, stream>>>(qk, cos_table, sin_table, rows, seq_len, width,
                                                           rotated_heads, head_dim, float(direction));
  check_launch("rope_apply (rotate_pairs)");
}

}  // namespace llmtrain::model::cuda
