// fp32 -> bf16 on the GPU (nearest even, NaN stays NaN): a strided row-major matrix into a contiguous one.
// The operand preparation of the cuBLASLt bf16 products (gemm_cublas.cpp); the host path rounds the same
// way while packing (src/model/isa/gemm_bf16_avx512.cpp).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace llmtrain::model {
namespace {

__global__ void round_rows(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           __nv_bfloat16* dst) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  dst[i] = __float2bfloat16_rn(src[(i / cols) * ld + i % cols]);
}

}  // namespace

// dst[r * cols + j] = bf16(src[r * ld + j]) on the default stream; returns the launch's cudaError_t.
int cuda_round_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, void* dst) {
  const std::int64_t count = rows * cols;
  if (count == 0) return int(cudaSuccess);
  constexpr int kThreads = 256;
  round_rows<<<unsigned((count + kThreads - 1) / kThreads), kThreads>>>(src, rows, cols, ld,
                                                                       static_cast<__nv_bfloat16*>(dst));
  return int(cudaGetLastError());
}

}  // namespace llmtrain::model
