// Conversions between fp32 buffers and their bf16 copies on the wire (parallel.comm_dtype = "bf16"), as
// Kokkos kernels so that the buffers may live in device memory. Rounding is core/bf16.hpp's.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "llmtrain/core/bf16.hpp"

namespace llmtrain::parallel {

using Floats = Kokkos::View<float*>;
using Wire16 = Kokkos::View<std::uint16_t*>;

inline Floats uninitialised_floats(const std::string& label, std::int64_t n) {
  return Floats(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n);
}

// A bf16 copy of `from`.
inline Wire16 to_bf16(const Floats& from, const std::string& label) {
  Wire16 out(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), from.size());
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, from.size()),
                       KOKKOS_LAMBDA(std::int64_t i) { out(i) = bf16_from_float(from(i)); });
  return out;
}

// into[i] = (accumulate ? into[i] : 0) + fp32(from[i]).
inline void from_bf16(const Wire16& from, const Floats& into, bool accumulate) {
  Kokkos::parallel_for("from_bf16", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, from.size()),
                       KOKKOS_LAMBDA(std::int64_t i) {
                         const float v = bf16_to_float(from(i));
                         into(i) = accumulate ? into(i) + v : v;
                       });
}

// into[i] += from[i].
inline void add_into(const Floats& from, const Floats& into) {
  Kokkos::parallel_for("add_into", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, from.size()),
                       KOKKOS_LAMBDA(std::int64_t i) { into(i) += from(i); });
}

// into[i] = bf16(fp32(into[i]) + from[i]): one rounding.
inline void add_into_bf16(const Floats& from, const Wire16& into) {
  Kokkos::parallel_for("add_into_bf16", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, from.size()),
                       KOKKOS_LAMBDA(std::int64_t i) { into(i) = bf16_from_float(bf16_to_float(into(i)) + from(i)); });
}

inline void scale(const Floats& data, float factor) {
  Kokkos::parallel_for("scale", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, data.size()),
                       KOKKOS_LAMBDA(std::int64_t i) { data(i) *= factor; });
}

}  // namespace llmtrain::parallel
