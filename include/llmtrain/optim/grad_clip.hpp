// Global gradient norm and clipping by it (torch.nn.utils.clip_grad_norm_ semantics).
#pragma once

#include <vector>

#include "llmtrain/model/param_units.hpp"

namespace llmtrain::optim {

// sqrt of the sum of squares of every gradient element (accumulated in double).
double global_norm(const std::vector<model::ParamUnit<float>>& grads);

// If max_norm > 0 and norm > max_norm, scales every gradient by max_norm / (norm + 1e-6).
// Returns the norm before clipping.
double clip_by_global_norm(std::vector<model::ParamUnit<float>>& grads, double max_norm);

}  // namespace llmtrain::optim
