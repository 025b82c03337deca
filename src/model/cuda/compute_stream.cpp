// The process's compute stream (compute_stream.hpp).
#include "compute_stream.hpp"

#include "cuda_check.hpp"

namespace llmtrain::model::cuda {

// Never destroyed: work may be queued on it until the process exits, and the CUDA runtime may already be
// torn down when static destructors run.
cudaStream_t compute_stream() {
  static const cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags (compute stream)");
    return created;
  }();
  return stream;
}

}  // namespace llmtrain::model::cuda
