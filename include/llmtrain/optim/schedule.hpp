// Learning-rate schedules: linear warmup, then cosine, linear or constant decay to min_lr.
#pragma once

#include <cstdint>
#include <string>

namespace llmtrain::optim {

enum class Decay { Cosine, Linear, Constant };
Decay parse_decay(const std::string& name);  // "cosine" | "linear" | "constant"; throws llmtrain::Error

struct ScheduleOptions {
  Decay decay = Decay::Cosine;
  double lr = 3e-4;              // peak learning rate, reached at the end of warmup
  double min_lr = 3e-5;          // reached at total_steps (cosine, linear)
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;
};

// Learning rate of optimizer step `step` (0-based): warmup rises linearly to lr over warmup_steps
// ((step + 1) / warmup_steps), then decays over the remaining steps. The warm-up does not depend on
// total_steps: with total_steps < warmup_steps the rate rises for the whole run and never reaches lr.
double learning_rate(const ScheduleOptions& options, std::int64_t step);

}  // namespace llmtrain::optim
