// The clipping factor a global gradient norm implies (torch.nn.utils.clip_grad_norm_ semantics). The
// norm comes from the parameter store (it knows how the gradient is split over ranks); the factor is
// applied inside the AdamW update (AdamW::step's grad_scale), saving a pass over memory. The store's
// local part of the norm, where its gradient lives, is sum_of_squares below.
#pragma once

#include <vector>

#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::optim {

// max_norm / (norm + 1e-6) when max_norm > 0 and norm > max_norm, else 1.
double clip_factor(double norm, double max_norm);

// The sum of the squares of every element of `units`, in double: model::sum_of_squares for host units
// (`device` null), one device pass (optim::cuda::squared_norm, read back) for units in the memory of a CUDA
// backend `device`. The two sum in different orders (both fixed: each repeats bitwise).
double sum_of_squares(const std::vector<model::ParamUnit<float>>& units, model::Backend<float>* device);

}  // namespace llmtrain::optim
