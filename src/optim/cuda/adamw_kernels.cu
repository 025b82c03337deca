// AdamW on the device (optim_kernels.hpp): one launch over every range, one block per chunk of a range, one
// thread per element with adamw_element.inc's arithmetic, the function the host's per-ISA loops run.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "optim_kernels.hpp"
#include "tensor_chunks.cuh"

namespace llmtrain::optim::cuda {

using isa::AdamWCoefficients;

namespace {

#define LLMTRAIN_KERNEL_FN __host__ __device__ inline
#include "../isa/adamw_element.inc"
#undef LLMTRAIN_KERNEL_FN

struct ChunkedAdamWRange {
  float* param;
  const float* grad;
  float* m;
  float* v;
  std::int64_t size;
  bool decay;
  std::int64_t first_block;
};

__global__ void adamw_chunks(const ChunkedAdamWRange* ranges, int count, AdamWCoefficients c) {
  const ChunkedAdamWRange& range = range_of_block(ranges, count);
  if (!range.decay) c.keep = 1.0f;
  std::int64_t begin = 0, end = 0;
  chunk_of_block(range, begin, end);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    adamw_element(range.param, range.grad, range.m, range.v, i, c);
}

}  // namespace

void adamw_update(const std::vector<AdamWRange>& ranges, const AdamWCoefficients& c, cudaStream_t stream) {
  std::vector<ChunkedAdamWRange> chunked;
  chunked.reserve(ranges.size());
  for (const AdamWRange& r : ranges) chunked.push_back({r.param, r.grad, r.m, r.v, r.size, r.decay, 0});
  const ChunkedRanges<ChunkedAdamWRange> list(std::move(chunked), stream);
  if (list.count() == 0) return;
  adamw_chunks<<<list.blocks(), kChunkThreads, 0, stream>>>(list.device(), list.count(), c);
  model::cuda::check_launch("adamw_update (adamw_chunks)");
}

}  // namespace llmtrain::optim::cuda
