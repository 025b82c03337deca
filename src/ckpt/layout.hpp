// What the writer and the reader of a checkpoint agree on: dataset names, element types and the checksum.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "llmtrain/core/hash.hpp"

namespace llmtrain::ckpt {

enum class ElementType { f32, u8, u64, i64 };

inline std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::f32: return 4;
    case ElementType::u8: return 1;
    default: return 8;
  }
}
inline const char* type_name(ElementType t) {
  switch (t) {
    case ElementType::f32: return "f32";
    case ElementType::u8: return "u8";
    case ElementType::u64: return "u64";
    default: return "i64";
  }
}
// Stored little-endian, whatever the host.
inline hid_t file_type(ElementType t) {
  switch (t) {
    case ElementType::f32: return H5T_IEEE_F32LE;
    case ElementType::u8: return H5T_STD_U8LE;
    case ElementType::u64: return H5T_STD_U64LE;
    default: return H5T_STD_I64LE;
  }
}
inline hid_t memory_type(ElementType t) {
  switch (t) {
    case ElementType::f32: return H5T_NATIVE_FLOAT;
    case ElementType::u8: return H5T_NATIVE_UINT8;
    case ElementType::u64: return H5T_NATIVE_UINT64;
    default: return H5T_NATIVE_INT64;
  }
}

// Sum over elements [first_index, first_index + count) held at `data`, modulo 2^64: element i contributes
// mix64(mix64(i) ^ bits of its value), so slices computed anywhere add up to the dataset's checksum.
inline std::uint64_t checksum(const void* data, ElementType t, std::uint64_t first_index, std::uint64_t count) {
  const std::size_t size = element_size(t);
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes + i * size, size);  // little-endian hosts: the value's bits, zero-extended
    sum += mix64(mix64(first_index + i) ^ bits);
  }
  return sum;
}

inline std::string tensor_dataset(const std::string& group, const std::string& unit, const std::string& tensor,
                                  const std::string& suffix) {
  std::string name = "/" + group + "/" + unit + "/" + tensor;
  return suffix.empty() ? name : name + "/" + suffix;
}

}  // namespace llmtrain::ckpt
