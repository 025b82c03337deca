// The plain element-wise operations on the device (device_ops.hpp): copy, scale, fill.
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "grid.cuh"

namespace llmtrain::model::cuda {
namespace {

__global__ void scale_elements(float* x, float factor, Index n) {
  for (Index i = first_element(); i < n; i += grid_stride()) x[i] *= factor;
}

__global__ void fill_elements(float* dst, float value, Index n) {
  for (Index i = first_element(); i < n; i += grid_stride()) dst[i] = value;
}

}  // namespace

void copy(float* dst, const float* src, Index n, cudaStream_t stream) {
  if (n == 0) return;
  check_cuda(cudaMemcpyAsync(dst, src, std::size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream),
             "copy (cudaMemcpyAsync)");
}

void scale(float* x, float factor, Index n, cudaStream_t stream) {
  if (n == 0) return;
  scale_elements<<<blocks_for(n), kThreads, 0, stream>>>(x, factor, n);
  check_launch("scale (scale_elements)");
}

void fill(float* dst, float value, Index n, cudaStream_t stream) {
  if (n == 0) return;
  fill_elements<<<blocks_for(n), kThreads, 0, stream>>>(dst, value, n);
  check_launch("fill (fill_elements)");
}

}  // namespace llmtrain::model::cuda
