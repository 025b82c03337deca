// How the element-wise kernels of this folder cover their elements, each thread striding over the grid so
// that any size (64-bit) launches with a capped grid: n elements in blocks of kThreads threads, or a row-major
// rows x cols matrix with the rows along the grid's y and the columns along x (no 64-bit division per
// element to find an element's row). For .cu files only.
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

// Blocks for a rows x cols matrix: x covers a row's columns, y the rows (at most 65535, the limit of y).
inline dim3 matrix_blocks(std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t kMaxX = std::int64_t(1) << 16, kMaxY = 65535;
  return dim3(unsigned(std::min((cols + kThreads - 1) / kThreads, kMaxX)), unsigned(std::min(rows, kMaxY)));
}

// This thread's first element (or column) and its stride in a grid-stride loop.
__device__ inline std::int64_t first_element() { return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t grid_stride() { return std::int64_t(gridDim.x) * blockDim.x; }

// Calls f(r, j) for every element of a rows x cols matrix launched with matrix_blocks.
template <typename F>
__device__ void for_each_element(std::int64_t rows, std::int64_t cols, F f) {
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (std::int64_t j = first_element(); j < cols; j += grid_stride()) f(r, j);
}

}  // namespace llmtrain::model::cuda
