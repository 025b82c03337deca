// Global gradient norm and the clipping factor it implies (torch.nn.utils.clip_grad_norm_ semantics).
// The factor is applied inside the AdamW update (AdamW::step's grad_scale), saving a pass over memory.
#pragma once

#include <vector>

#include "llmtrain/model/param_units.hpp"

namespace llmtrain::optim {

// sqrt of the sum of squares of every gradient element (accumulated in double, in a fixed order).
double global_norm(const std::vector<model::ParamUnit<float>>& grads);

// max_norm / (norm + 1e-6) when max_norm > 0 and norm > max_norm, else 1.
double clip_factor(double norm, double max_norm);

}  // namespace llmtrain::optim
