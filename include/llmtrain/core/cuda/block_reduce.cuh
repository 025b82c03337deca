// Reductions over the threads of one CUDA block in a fixed tree, for device code (.cu files) of any area:
// the model's row kernels (RMSNorm, cross-entropy) and the optimizer's gradient norm.
//
// Why a fixed tree: the order of floating-point additions decides the bits of the result, and training must
// repeat bitwise on one GPU. Each warp folds its 32 values by shuffles with halving offsets, then warp 0 folds
// the warps' results the same way; the shape depends only on blockDim.x, never on timing (no atomics).
#pragma once

namespace llmtrain::cuda {

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// The larger of a and b; a NaN in b is dropped, as fast::row_max drops it on the host.
struct Max {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};

// Every thread of the block passes its value and gets op folded over all of them. blockDim.x must be a multiple
// of 32 (at most 1024), every thread of the block must call it (it synchronises), and `identity` is op's
// neutral value (0 for Sum, -INFINITY for Max).
template <typename T, typename Op>
__device__ T block_reduce(T value, Op op, T identity) {
  __shared__ T warp_results[32];
  constexpr unsigned kAll = 0xffffffffu;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(kAll, value, offset));
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < warps ? warp_results[lane] : identity;
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(kAll, value, offset));
    if (lane == 0) warp_results[0] = value;
  }
  __syncthreads();
  const T result = warp_results[0];
  __syncthreads();  // the next call may overwrite warp_results only once every thread has read this result
  return result;
}

}  // namespace llmtrain::cuda
