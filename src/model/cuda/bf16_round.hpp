// fp32 -> bf16 on the device: the operand preparation of the cuBLASLt bf16 products (gemm_cublas.cpp). The
// rounding is core/bf16.hpp's bf16_from_float (nearest even, NaN stays NaN), the one the host uses too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmtrain::model::cuda {

// dst[r * dst_ld + j] = the bf16 bits of src[r * ld + j] for the rows x cols matrix src (row-major, leading
// dimension ld), asynchronous on `stream`; throws llmtrain::Error if the launch fails. dst's padding
// (columns cols..dst_ld) is not written.
void round_rows_to_bf16(std::uint16_t* dst, std::int64_t dst_ld, const float* src, std::int64_t rows, std::int64_t cols,
                        std::int64_t ld, cudaStream_t stream);

}  // namespace llmtrain::model::cuda
