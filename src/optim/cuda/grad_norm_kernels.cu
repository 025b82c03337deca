// The gradient's sum of squares on the device (optim_kernels.hpp's squared_norm), in double and in a fixed
// order: each block sums one chunk of a range (each thread its strided share in order, then block_reduce's
// fixed tree) into its own partial; then one block adds the partials the same way, in block order. No atomics,
// so the norm, and with it the clipping factor, repeats bitwise.
#include <cstdint>
#include <utility>
#include <vector>

#include "llmtrain/core/cuda/block_reduce.cuh"
#include "optim_kernels.hpp"
#include "tensor_chunks.cuh"

namespace llmtrain::optim::cuda {
namespace {

using llmtrain::cuda::block_reduce;
using llmtrain::cuda::Sum;

constexpr int kFinalThreads = 1024;

struct ChunkedTensorRange {
  const float* data;
  std::int64_t size;
  std::int64_t first_block;
};

__global__ void chunk_sums_of_squares(double* partials, const ChunkedTensorRange* ranges, int count) {
  const ChunkedTensorRange& range = range_of_block(ranges, count);
  std::int64_t begin = 0, end = 0;
  chunk_of_block(range, begin, end);
  double sum = 0;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const double x = range.data[i];
    sum += x * x;
  }
  sum = block_reduce(sum, Sum{}, 0.0);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void sum_partials(double* out, const double* partials, std::int64_t n) {
  double sum = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += partials[i];
  sum = block_reduce(sum, Sum{}, 0.0);
  if (threadIdx.x == 0) *out = sum;
}

}  // namespace

void squared_norm(double* out, const std::vector<TensorRange>& ranges, cudaStream_t stream) {
  std::vector<ChunkedTensorRange> chunked;
  chunked.reserve(ranges.size());
  for (const TensorRange& r : ranges) chunked.push_back({r.data, r.size, 0});
  const ChunkedRanges<ChunkedTensorRange> list(std::move(chunked), stream);
  double* partials = nullptr;
  if (list.count() > 0) {
    model::cuda::check_cuda(cudaMallocAsync(&partials, list.blocks() * sizeof(double), stream),
                            "cudaMallocAsync (squared_norm partials)");
    chunk_sums_of_squares<<<list.blocks(), kChunkThreads, 0, stream>>>(partials, list.device(), list.count());
    model::cuda::check_launch("squared_norm (chunk_sums_of_squares)");
  }
  sum_partials<<<1, kFinalThreads, 0, stream>>>(out, partials, list.blocks());
  model::cuda::check_launch("squared_norm (sum_partials)");
  if (partials != nullptr)
    model::cuda::check_cuda(cudaFreeAsync(partials, stream), "cudaFreeAsync (squared_norm partials)");
}

}  // namespace llmtrain::optim::cuda
