// The NCCL probe of builds without CUDA (see nccl_probe.hpp): no NCCL. A CUDA build compiles
// src/dist/cuda/nccl_probe.cpp instead.
#include "llmtrain/dist/nccl_probe.hpp"

#ifndef LLMTRAIN_WITH_CUDA

#include "llmtrain/core/error.hpp"

namespace llmtrain::dist {

int nccl_version() { return 0; }

AllReduceTiming time_nccl_all_reduce(const Runtime&, std::size_t, int, double) {
  LLMTRAIN_FAIL("an NCCL all-reduce needs a build with LLMTRAIN_ENABLE_CUDA=ON");
}

}  // namespace llmtrain::dist

#endif
