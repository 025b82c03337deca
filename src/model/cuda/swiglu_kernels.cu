// SwiGLU on the device, forward and backward (device_ops.hpp): one thread per element of the hidden layer,
// with row_kernels.inc's swiglu_element / swiglu_backward_element, as the host's rows.
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "grid.cuh"
#include "row_math.cuh"

namespace llmtrain::model::cuda {
namespace {

// Element (r, j): the gate at h13[r, j], the up projection at h13[r, hidden + j].
__global__ void swiglu_forward_elements(float* out, const float* h13, Index rows, Index hidden) {
  for_each_element(rows, hidden, [=](Index r, Index j) {
    const Index gate = r * 2 * hidden + j;
    out[r * hidden + j] = swiglu_element(h13[gate], h13[gate + hidden]);
  });
}

__global__ void swiglu_backward_elements(float* dh13, const float* dout, const float* h13, Index rows, Index hidden) {
  for_each_element(rows, hidden, [=](Index r, Index j) {
    const Index gate = r * 2 * hidden + j;
    swiglu_backward_element(dh13[gate], dh13[gate + hidden], dout[r * hidden + j], h13[gate], h13[gate + hidden]);
  });
}

}  // namespace

void swiglu_forward(float* out, const float* h13, Index rows, Index hidden, cudaStream_t stream) {
  if (rows * hidden == 0) return;
  swiglu_forward_elements<<<matrix_blocks(rows, hidden), kThreads, 0, stream>>>(out, h13, rows, hidden);
  check_launch("swiglu_forward (swiglu_forward_elements)");
}

void swiglu_backward(float* dh13, const float* dout, const float* h13, Index rows, Index hidden, cudaStream_t stream) {
  if (rows * hidden == 0) return;
  swiglu_backward_elements<<<matrix_blocks(rows, hidden), kThreads, 0, stream>>>(dh13, dout, h13, rows, hidden);
  check_launch("swiglu_backward (swiglu_backward_elements)");
}

}  // namespace llmtrain::model::cuda
