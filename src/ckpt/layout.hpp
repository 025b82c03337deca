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
// mix64(i * golden ^ bits of its value) (two bijections, so any change of one element changes its term), and
// slices computed anywhere add up to the dataset's checksum.
template <typename Bits>
std::uint64_t checksum_of(const unsigned char* bytes, std::uint64_t first_index, std::uint64_t count) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, bytes + i * sizeof(Bits), sizeof(Bits));  // little-endian: the value's bits
    sum += mix64(((first_index + i) * 0x9e3779b97f4a7c15ULL) ^ std::uint64_t(bits));
  }
  return sum;
}

inline std::uint64_t checksum(const void* data, ElementType t, std::uint64_t first_index, std::uint64_t count) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  switch (element_size(t)) {
    case 1: return checksum_of<std::uint8_t>(bytes, first_index, count);
    case 4: return checksum_of<std::uint32_t>(bytes, first_index, count);
    default: return checksum_of<std::uint64_t>(bytes, first_index, count);
  }
}

inline std::string tensor_dataset(const std::string& group, const std::string& unit, const std::string& tensor,
                                  const std::string& suffix) {
  std::string name = "/" + group + "/" + unit + "/" + tensor;
  return suffix.empty() ? name : name + "/" + suffix;
}

}  // namespace llmtrain::ckpt
