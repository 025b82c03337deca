// Element types a collective can carry, and bf16, the 16-bit format parameters and gradients travel in
// under FSDP. bf16 is stored as std::uint16_t: the upper half of an IEEE fp32 (sign, 8 exponent bits,
// 7 mantissa bits), so widening is a shift and narrowing is one rounding (docs/collectives.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// The bf16 conversions also run inside device kernels (the FSDP store's wire buffers).
#if defined(__CUDACC__)
#define LLMTRAIN_HOST_DEVICE __host__ __device__
#else
#define LLMTRAIN_HOST_DEVICE
#endif

namespace llmtrain::dist {

enum class DType { f32, bf16, f64, i64 };

inline std::size_t dtype_size(DType type) {
  switch (type) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::f64: return 8;
    case DType::i64: return 8;
  }
  return 0;
}

inline const char* dtype_name(DType type) {
  switch (type) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i64: return "i64";
  }
  return "unknown";
}

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

}  // namespace llmtrain::dist
