// bf16, the 16-bit float format of parameters and gradients on the wire (FSDP, dist/dtype.hpp) and of the
// operands of bf16 matrix products (model/gemm.hpp). Stored as std::uint16_t: the upper half of an IEEE fp32
// (sign, 8 exponent bits, 7 mantissa bits), so widening is a shift and narrowing is one rounding
// (docs/collectives.md). The one definition of that rounding: the wire, the checkpoint export and the
// emulated bf16 products all round here.
#pragma once

#include <cstdint>
#include <cstring>

// The conversions also run inside device kernels (the FSDP store's wire buffers).
#if defined(__CUDACC__)
#define LLMTRAIN_HOST_DEVICE __host__ __device__
#else
#define LLMTRAIN_HOST_DEVICE
#endif

namespace llmtrain {

LLMTRAIN_HOST_DEVICE inline float bf16_to_float(std::uint16_t value) {
  const std::uint32_t bits = std::uint32_t(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Round to nearest, ties to even. A NaN stays a NaN (quiet, same sign): plain rounding would carry a
// payload held only in the low 16 bits into the exponent and turn it into an infinity.
LLMTRAIN_HOST_DEVICE inline std::uint16_t bf16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::uint16_t(bits >> 16);
}

// The fp32 value of the bf16 nearest to `value`: an operand rounded to bf16 but held in fp32.
LLMTRAIN_HOST_DEVICE inline float round_to_bf16(float value) { return bf16_to_float(bf16_from_float(value)); }

}  // namespace llmtrain
