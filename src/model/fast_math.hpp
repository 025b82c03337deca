// Vectorisable exp and row reductions for the softmax kernels (cross-entropy, attention).
//
// Why: glibc's scalar expf costs ~5 ns and the softmaxes call it ~10^8 times per step of the `small`
// model (vocabulary 50257 per token, T^2/2 scores per head); that alone was ~15 % of a step. The float
// exp below is branch-free (Cephes polynomial, max error ~2 ulp over the clamped range), so the compiler
// vectorises loops over it at any -march. Row sums and maxima use 8 independent lanes for the same
// reason (a single accumulator is a serial dependency chain that no compiler may reorder without
// -ffast-math); the lane order is fixed, so results stay bitwise reproducible. Double precision (the
// gradient checks) keeps std::exp.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace llmtrain::model::fast {

KOKKOS_INLINE_FUNCTION double exp(double x) { return std::exp(x); }

KOKKOS_INLINE_FUNCTION float exp(float x) {
  const float lo = -87.0f, hi = 88.0f;
  // NaN clamps to lo too: the exponent bits below must come from a finite k (NaN -> int is undefined).
  const float xc = x > lo ? (x < hi ? x : hi) : lo;
  // k = round(x / ln 2) by the 1.5 * 2^23 trick (no rounding instruction needed); r = x - k ln 2 in two parts.
  const float shifter = 12582912.0f;
  const float k = (xc * 1.44269504088896341f + shifter) - shifter;
  const float r = (xc - k * 0.693359375f) - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  // exp(-inf) and underflow give exactly 0; NaN stays NaN (a diverged run must see it).
  return x >= lo ? p * scale : (x < lo ? 0.0f : x);
}

constexpr int kLanes = 8;

template <typename T>
KOKKOS_INLINE_FUNCTION T row_max(const T* v, std::int64_t n) {
  T lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = -INFINITY;
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = v[j + l] > lane[l] ? v[j + l] : lane[l];
  for (; j < n; ++j) lane[0] = v[j] > lane[0] ? v[j] : lane[0];
  T m = lane[0];
  for (int l = 1; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
  return m;
}

// v[j] = exp(v[j] - shift); returns the sum of the new values.
template <typename T>
KOKKOS_INLINE_FUNCTION T exp_shifted_sum(T* v, std::int64_t n, T shift) {
  for (std::int64_t j = 0; j < n; ++j) v[j] = fast::exp(v[j] - shift);
  T lane[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += v[j + l];
  for (; j < n; ++j) lane[0] += v[j];
  T sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  return sum;
}

}  // namespace llmtrain::model::fast
