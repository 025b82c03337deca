// The one way device code reports a failed CUDA call: llmtrain::Error naming the call and CUDA's message.
// Host code only (.cpp, and the host side of .cu files).
#pragma once

#include <cuda_runtime_api.h>

#include "llmtrain/core/error.hpp"

namespace llmtrain::model::cuda {

inline void check_cuda(cudaError_t status, const char* what) {
  LLMTRAIN_CHECK(status == cudaSuccess, what, " failed: ", cudaGetErrorString(status));
}

// After a kernel launch: a bad configuration shows here, not at the next synchronisation.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace llmtrain::model::cuda
