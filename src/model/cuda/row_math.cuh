// The host's element arithmetic compiled for host and device: fast_math.inc (fast::exp) and row_kernels.inc
// (the RMSNorm, SwiGLU, rotary and cross-entropy element functions) inside llmtrain::model::cuda. The kernels
// of this folder map elements to threads and call these functions, so the host tests of the row kernels check
// the arithmetic and the device tests check the mapping. For .cu files only (no Kokkos here).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#define LLMTRAIN_KERNEL_FN __host__ __device__ inline
namespace llmtrain::model::cuda {
namespace fast {
#include "../fast_math.inc"
}  // namespace fast
#include "../row_kernels.inc"
}  // namespace llmtrain::model::cuda
#undef LLMTRAIN_KERNEL_FN
