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

#ifndef LLMTRAIN_KERNEL_FN
#define LLMTRAIN_KERNEL_FN KOKKOS_INLINE_FUNCTION
#endif

namespace llmtrain::model::fast {
KOKKOS_INLINE_FUNCTION double exp(double x) { return std::exp(x); }
#include "fast_math.inc"
}  // namespace llmtrain::model::fast
