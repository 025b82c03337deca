// fp32 -> bf16 on the device: a strided row-major matrix into another (bf16_round.hpp).
#include "bf16_round.hpp"

#include <cstdint>

#include "cuda_check.hpp"
#include "grid.cuh"
#include "llmtrain/core/bf16.hpp"

namespace llmtrain::model::cuda {
namespace {

__global__ void round_rows(std::uint16_t* dst, std::int64_t dst_ld, const float* src, std::int64_t rows,
                           std::int64_t cols, std::int64_t ld) {
  for_each_element(rows, cols,
                   [=](std::int64_t r, std::int64_t j) { dst[r * dst_ld + j] = bf16_from_float(src[r * ld + j]); });
}

}  // namespace

void round_rows_to_bf16(std::uint16_t* dst, std::int64_t dst_ld, const float* src, std::int64_t rows, std::int64_t cols,
                        std::int64_t ld, cudaStream_t stream) {
  if (rows * cols == 0) return;
  round_rows<<<matrix_blocks(rows, cols), kThreads, 0, stream>>>(dst, dst_ld, src, rows, cols, ld);
  check_launch("round_rows_to_bf16 (round_rows)");
}

}  // namespace llmtrain::model::cuda
