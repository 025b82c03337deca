// The clipping factor (see grad_clip.hpp).
#include "llmtrain/optim/grad_clip.hpp"

namespace llmtrain::optim {

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

}  // namespace llmtrain::optim
