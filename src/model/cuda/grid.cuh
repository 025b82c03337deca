// How the element-wise kernels of this folder cover n elements: blocks of kThreads threads, each thread
// striding over the grid, the grid capped so that any n (64-bit) launches. For .cu files only.
#pragma once

#include <algorithm>
#include <cstdint>

namespace llmtrain::model::cuda {

constexpr int kThreads = 256;

// Enough blocks for one element per thread, at most 2^20 (more only adds scheduling work: threads stride).
inline unsigned blocks_for(std::int64_t n) {
  constexpr std::int64_t kMaxBlocks = std::int64_t(1) << 20;
  return unsigned(std::min((n + kThreads - 1) / kThreads, kMaxBlocks));
}

// This thread's first element and its stride in a grid-stride loop.
__device__ inline std::int64_t first_element() { return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t grid_stride() { return std::int64_t(gridDim.x) * blockDim.x; }

}  // namespace llmtrain::model::cuda
