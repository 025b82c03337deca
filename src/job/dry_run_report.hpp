// What `llmtrain --dry-run` prints after the resolved configuration: the parameter count of the model
// and an estimate of the memory each rank needs (weights, gradients, AdamW moments and activations).
#pragma once

#include <string>

#include "llmtrain/core/config.hpp"
#include "llmtrain/core/model_config.hpp"

namespace llmtrain::job {

std::string dry_run_report(const Config& config, const ModelConfig& model, int world_size);

}  // namespace llmtrain::job
