// Host -> device copies of the small buffers a step uploads (a micro-batch's token ids, targets and document
// ids) through pinned staging buffers (cudaHostAlloc) on a copy stream of their own (cudaStreamNonBlocking),
// ordered against the compute stream with events both ways: the copy waits for the compute work queued before
// it (which may still read the destination), and the compute work queued after it waits for the copy. The host
// returns once its data is in a staging buffer, which is reused only once its last copy has finished (its
// event), so the host may run kSlots copies ahead of the device.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

namespace llmtrain::model::cuda {

class StagedUpload {
 public:
  // Larger copies (parameters at start-up) are not staged: the backend copies them from pageable memory.
  static constexpr std::int64_t kMaxBytes = std::int64_t(8) << 20;

  StagedUpload();
  ~StagedUpload();
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;

  // `bytes` (at most kMaxBytes) of `host` to device memory `dst`; `host` may be reused once this returns.
  void copy(void* dst, const void* host, std::int64_t bytes);

 private:
  static constexpr std::size_t kSlots = 4;
  struct Slot {
    void* pinned = nullptr;
    std::int64_t capacity = 0;
    cudaEvent_t copied = nullptr;  // recorded on the copy stream after the slot's last copy
  };
  cudaStream_t stream_ = nullptr;
  cudaEvent_t compute_queued_ = nullptr;  // recorded on the compute stream before each copy
  std::array<Slot, kSlots> slots_{};
  std::size_t next_ = 0;
};

}  // namespace llmtrain::model::cuda
