// Pinned, stream-ordered host -> device copies (see staged_upload.hpp).
#include "staged_upload.hpp"

#include <cstdio>
#include <cstring>

#include "compute_stream.hpp"
#include "cuda_check.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::model::cuda {

StagedUpload::StagedUpload() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (copy stream)");
  check_cuda(cudaEventCreateWithFlags(&compute_queued_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  for (Slot& slot : slots_)
    check_cuda(cudaEventCreateWithFlags(&slot.copied, cudaEventDisableTiming), "cudaEventCreateWithFlags");
}

// A destructor cannot throw: a failure is reported on stderr.
StagedUpload::~StagedUpload() {
  cudaError_t status = cudaStreamSynchronize(stream_);
  for (Slot& slot : slots_) {
    if (slot.pinned && status == cudaSuccess) status = cudaFreeHost(slot.pinned);
    cudaEventDestroy(slot.copied);
  }
  cudaEventDestroy(compute_queued_);
  cudaStreamDestroy(stream_);
  if (status != cudaSuccess)
    std::fprintf(stderr, "llmtrain: releasing the pinned upload buffers failed: %s\n", cudaGetErrorString(status));
}

void StagedUpload::copy(void* dst, const void* host, std::int64_t bytes) {
  LLMTRAIN_CHECK(bytes >= 0 && bytes <= kMaxBytes, "a staged upload of ", bytes, " bytes (at most ", kMaxBytes, ")");
  if (bytes == 0) return;
  Slot& slot = slots_[next_];
  next_ = (next_ + 1) % kSlots;
  check_cuda(cudaEventSynchronize(slot.copied), "cudaEventSynchronize (staging buffer)");
  if (slot.capacity < bytes) {
    if (slot.pinned) check_cuda(cudaFreeHost(slot.pinned), "cudaFreeHost");
    slot.pinned = nullptr;
    slot.capacity = 0;
    check_cuda(cudaHostAlloc(&slot.pinned, std::size_t(bytes), cudaHostAllocDefault), "cudaHostAlloc (staging buffer)");
    slot.capacity = bytes;
  }
  std::memcpy(slot.pinned, host, std::size_t(bytes));
  check_cuda(cudaEventRecord(compute_queued_, compute_stream()), "cudaEventRecord (compute stream)");
  check_cuda(cudaStreamWaitEvent(stream_, compute_queued_, 0), "cudaStreamWaitEvent (copy stream)");
  check_cuda(cudaMemcpyAsync(dst, slot.pinned, std::size_t(bytes), cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (staged host to device)");
  check_cuda(cudaEventRecord(slot.copied, stream_), "cudaEventRecord (copy stream)");
  check_cuda(cudaStreamWaitEvent(compute_stream(), slot.copied, 0), "cudaStreamWaitEvent (compute stream)");
}

}  // namespace llmtrain::model::cuda
