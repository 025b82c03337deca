// What `llmtrain --dry-run` prints besides the resolved configuration: the parameter count of the model
// and an estimate of the memory each rank needs (weights, gradients, AdamW moments and activations).
#pragma once

#include <cstdint>
#include <string>

#include "llmtrain/core/config.hpp"

namespace llmtrain::apps {

struct ModelSize {
  std::int64_t vocab_size = 0;
  std::int64_t parameters = 0;       // all trainable parameters
  std::int64_t embedding = 0;        // token embedding (and untied head) parameters
  std::int64_t per_block = 0;
  std::int64_t activation_floats_per_token = 0;  // kept for backward, whole model
};

ModelSize model_size(const Config& config, std::int64_t vocab_size);

// Human-readable report of sizes and the per-rank memory estimate for `world_size` ranks.
std::string dry_run_report(const Config& config, const ModelSize& size, int world_size);

}  // namespace llmtrain::apps
