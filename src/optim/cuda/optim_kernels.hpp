// The optimizer's passes over the gradient and parameters on a CUDA device, as host-callable launchers
// (adamw_kernels.cu, grad_norm_kernels.cu): the device twins of AdamW::step's update and of the gradient's
// sum of squares (model::sum_of_squares) behind the global norm. Every pointer is in device memory; each call
// is one pass over all its ranges (a multi-tensor launch, not one launch per tensor), asynchronous on `stream`.
// Gradient clipping is AdamWCoefficients::clip (optim::clip_factor of the norm, on the host), as on the host.
// A failed launch throws llmtrain::Error naming it. No floating-point atomics: a run repeats bitwise.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "../adamw_range.hpp"
#include "../isa/adamw_kernels.hpp"

namespace llmtrain::optim::cuda {

using optim::AdamWRange;

// One AdamW step over every range with adamw_element.inc's arithmetic: decayed ranges with c as given, the
// others with c.keep = 1 (what AdamW::step computes for them: 1 - lr * 0).
void adamw_update(const std::vector<AdamWRange>& ranges, const isa::AdamWCoefficients& c, cudaStream_t stream);

struct TensorRange {
  const float* data;
  std::int64_t size;
};

// *out (a device double) = the sum of the squares of every element of every range, in double: per-block
// partial sums, then one block adds them in block order.
void squared_norm(double* out, const std::vector<TensorRange>& ranges, cudaStream_t stream);

}  // namespace llmtrain::optim::cuda
