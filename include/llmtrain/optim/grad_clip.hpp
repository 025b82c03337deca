// The clipping factor a global gradient norm implies (torch.nn.utils.clip_grad_norm_ semantics). The
// norm comes from the parameter store (it knows how the gradient is split over ranks); the factor is
// applied inside the AdamW update (AdamW::step's grad_scale), saving a pass over memory.
#pragma once

namespace llmtrain::optim {

// max_norm / (norm + 1e-6) when max_norm > 0 and norm > max_norm, else 1.
double clip_factor(double norm, double max_norm);

}  // namespace llmtrain::optim
