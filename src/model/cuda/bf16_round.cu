// fp32 -> bf16 on the device: a strided row-major matrix into a contiguous one (bf16_round.hpp).
#include "bf16_round.hpp"

#include <cstdint>

#include "cuda_check.hpp"
#include "grid.cuh"
#include "llmtrain/core/bf16.hpp"

namespace llmtrain::model::cuda {
namespace {

__global__ void round_rows(std::uint16_t* dst, const float* src, std::int64_t rows, std::int64_t cols,
                           std::int64_t ld) {
  for (std::int64_t i = first_element(); i < rows * cols; i += grid_stride())
    dst[i] = bf16_from_float(src[(i / cols) * ld + i % cols]);
}

}  // namespace

void round_rows_to_bf16(std::uint16_t* dst, const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                        cudaStream_t stream) {
  if (rows * cols == 0) return;
  round_rows<<<blocks_for(rows * cols), kThreads, 0, stream>>>(dst, src, rows, cols, ld);
  check_launch("round_rows_to_bf16 (round_rows)");
}

}  // namespace llmtrain::model::cuda
