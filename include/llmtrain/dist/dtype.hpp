// Element types a collective can carry. bf16, the 16-bit format parameters and gradients travel in under
// FSDP, is stored as std::uint16_t and converted by core/bf16.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace llmtrain::dist
