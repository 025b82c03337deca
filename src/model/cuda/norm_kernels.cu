// RMSNorm on the device, forward and backward (device_ops.hpp), with row_kernels.inc's element arithmetic.
//
// A row (2048+ elements) is one block: each thread sums a strided share of the row, block_reduce folds the
// shares in a fixed tree, and the threads then write their elements. The weight's gradient sums over rows per
// column: a block owns kColumns columns and kRowLanes lanes of rows; each thread sums its lane's rows in order
// (a warp reads one row's kColumns consecutive floats at a time) and one thread per column adds the lanes in
// order. Every order is fixed, so the results repeat bitwise; they differ from the host's in rounding only.
#include <cstdint>

#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "llmtrain/core/cuda/block_reduce.cuh"
#include "row_math.cuh"

namespace llmtrain::model::cuda {
namespace {

using llmtrain::cuda::block_reduce;
using llmtrain::cuda::Sum;

constexpr int kRowThreads = 256;
constexpr int kColumns = 32;
constexpr int kRowLanes = 32;

__global__ void rmsnorm_forward_rows(float* out, float* rstd, const float* x, const float* w, Index dim, double eps) {
  const float* xr = x + Index(blockIdx.x) * dim;
  float* o = out + Index(blockIdx.x) * dim;
  float sum = 0;
  for (Index j = threadIdx.x; j < dim; j += blockDim.x) sum += xr[j] * xr[j];
  const float s = rmsnorm_rstd(block_reduce(sum, Sum{}, 0.0f), dim, eps);
  for (Index j = threadIdx.x; j < dim; j += blockDim.x) o[j] = rmsnorm_element(xr[j], s, w[j]);
  if (threadIdx.x == 0) rstd[blockIdx.x] = s;
}

__global__ void rmsnorm_backward_dx_rows(float* dx, const float* dout, const float* x, const float* w,
                                         const float* rstd, Index dim) {
  const Index offset = Index(blockIdx.x) * dim;
  const float s = rstd[blockIdx.x];
  float dot = 0;
  for (Index j = threadIdx.x; j < dim; j += blockDim.x)
    dot += rmsnorm_dot_term(dout[offset + j], w[j], x[offset + j], s);
  const float mean_dot = block_reduce(dot, Sum{}, 0.0f) / float(dim);
  for (Index j = threadIdx.x; j < dim; j += blockDim.x)
    dx[offset + j] += rmsnorm_dx_term(dout[offset + j], w[j], x[offset + j], s, mean_dot);
}

// Block of kColumns x kRowLanes threads: column blockIdx.x * kColumns + threadIdx.x, rows
// threadIdx.y + k * kRowLanes.
__global__ void rmsnorm_backward_dw_columns(float* dw, const float* dout, const float* x, const float* rstd, Index rows,
                                            Index dim) {
  __shared__ float lanes[kRowLanes][kColumns + 1];  // +1: the final column-wise reads hit distinct banks
  const Index j = Index(blockIdx.x) * kColumns + threadIdx.x;
  float sum = 0;
  if (j < dim)
    for (Index r = threadIdx.y; r < rows; r += kRowLanes)
      sum += rmsnorm_dw_term(dout[r * dim + j], x[r * dim + j], rstd[r]);
  lanes[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && j < dim) {
    float total = 0;
    for (int lane = 0; lane < kRowLanes; ++lane) total += lanes[lane][threadIdx.x];
    dw[j] += total;
  }
}

}  // namespace

void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, Index rows, Index dim, double eps,
                     cudaStream_t stream) {
  if (rows == 0) return;
  rmsnorm_forward_rows<<<unsigned(rows), kRowThreads, 0, stream>>>(out, rstd, x, w, dim, eps);
  check_launch("rmsnorm_forward (rmsnorm_forward_rows)");
}

void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w, const float* rstd,
                      Index rows, Index dim, cudaStream_t stream) {
  if (rows == 0 || dim == 0) return;
  rmsnorm_backward_dx_rows<<<unsigned(rows), kRowThreads, 0, stream>>>(dx, dout, x, w, rstd, dim);
  check_launch("rmsnorm_backward (rmsnorm_backward_dx_rows)");
  const dim3 block(kColumns, kRowLanes);
  rmsnorm_backward_dw_columns<<<unsigned((dim + kColumns - 1) / kColumns), block, 0, stream>>>(dw, dout, x, rstd, rows,
                                                                                              dim);
  check_launch("rmsnorm_backward (rmsnorm_backward_dw_columns)");
}

}  // namespace llmtrain::model::cuda
