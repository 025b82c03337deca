// One tensor range an AdamW step updates: the device path's unit of work (device_passes.hpp,
// cuda/optim_kernels.hpp), free of CUDA headers so host code can build the list.
#pragma once

#include <cstdint>

namespace llmtrain::optim {

// `size` consecutive elements of a parameter, its gradient and its two moments; decay: whether weight decay
// applies (AdamWOptions::decay_norms_and_embeddings or not a norm weight or embedding).
struct AdamWRange {
  float* param;
  const float* grad;
  float* m;
  float* v;
  std::int64_t size;
  bool decay;
};

}  // namespace llmtrain::optim
