// Warmup + cosine / linear / constant learning-rate schedules.
#include "llmtrain/optim/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "llmtrain/core/error.hpp"

namespace llmtrain::optim {

Decay parse_decay(const std::string& name) {
  if (name == "cosine") return Decay::Cosine;
  if (name == "linear") return Decay::Linear;
  if (name == "constant") return Decay::Constant;
  LLMTRAIN_FAIL("train.schedule must be \"cosine\", \"linear\" or \"constant\", got \"", name, "\"");
}

double learning_rate(const ScheduleOptions& o, std::int64_t step) {
  if (step < o.warmup_steps) return o.lr * double(step + 1) / double(o.warmup_steps);
  if (o.decay == Decay::Constant) return o.lr;
  const double span = double(std::max<std::int64_t>(1, o.total_steps - o.warmup_steps));
  const double progress = std::clamp(double(step - o.warmup_steps) / span, 0.0, 1.0);
  const double shape = o.decay == Decay::Cosine ? 0.5 * (1.0 + std::cos(M_PI * progress)) : 1.0 - progress;
  return o.min_lr + (o.lr - o.min_lr) * shape;
}

}  // namespace llmtrain::optim
