// How the optimizer's multi-tensor launches cover a list of tensor ranges: each range is cut into chunks of
// kChunk elements, one block per chunk, numbered across the ranges in list order. The list goes to the device
// with the launch (stream-ordered memory, freed after the kernel), so a kernel finds its range by a binary
// search over first_block. For .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <vector>

#include "../../model/cuda/cuda_check.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::optim::cuda {

constexpr std::int64_t kChunk = 4096;
constexpr int kChunkThreads = 256;

// A range of any kind (with size and first_block members) from the ranges' first_block, the list sorted by it.
template <typename Range>
__device__ const Range& range_of_block(const Range* ranges, int count) {
  int lo = 0, hi = count - 1;  // the last range whose first block is at or before this one
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (ranges[mid].first_block <= std::int64_t(blockIdx.x))
      lo = mid;
    else
      hi = mid - 1;
  }
  return ranges[lo];
}

// This block's elements [begin, end) of its range.
template <typename Range>
__device__ void chunk_of_block(const Range& range, std::int64_t& begin, std::int64_t& end) {
  begin = (std::int64_t(blockIdx.x) - range.first_block) * kChunk;
  end = begin + kChunk < range.size ? begin + kChunk : range.size;
}

// The non-empty ranges numbered (first_block set) and copied to the device on `stream`; freed in stream order
// by the destructor, after the kernels queued before it.
template <typename Range>
class ChunkedRanges {
 public:
  ChunkedRanges(std::vector<Range> ranges, cudaStream_t stream) : stream_(stream) {
    for (const Range& r : ranges)
      if (r.size > 0) {
        list_.push_back(r);
        list_.back().first_block = blocks_;
        blocks_ += (r.size + kChunk - 1) / kChunk;
      }
    LLMTRAIN_CHECK(blocks_ <= INT_MAX, "a multi-tensor launch of ", blocks_, " blocks of ", kChunk,
                   " elements exceeds a grid's int");
    if (list_.empty()) return;
    const std::size_t bytes = list_.size() * sizeof(Range);
    model::cuda::check_cuda(cudaMallocAsync(&device_, bytes, stream_),
                            "cudaMallocAsync (tensor ranges)");
    model::cuda::check_cuda(cudaMemcpyAsync(device_, list_.data(), bytes, cudaMemcpyHostToDevice, stream_),
                            "cudaMemcpyAsync (tensor ranges)");
  }
  ~ChunkedRanges() {
    if (device_ != nullptr) cudaFreeAsync(device_, stream_);
  }
  ChunkedRanges(const ChunkedRanges&) = delete;
  ChunkedRanges& operator=(const ChunkedRanges&) = delete;

  const Range* device() const { return device_; }
  int count() const { return int(list_.size()); }
  unsigned blocks() const { return unsigned(blocks_); }

 private:
  cudaStream_t stream_;
  std::vector<Range> list_;
  std::int64_t blocks_ = 0;
  Range* device_ = nullptr;
};

}  // namespace llmtrain::optim::cuda
