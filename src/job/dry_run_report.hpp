// What `llmtrain --dry-run` prints after the resolved configuration: the parameter count of the model,
// the batch, the warning of a run shorter than its warm-up, and an estimate of the memory each rank needs
// (weights, gradients, AdamW moments and activations) in host memory, or on its CUDA device.
#pragma once

#include <string>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"

namespace llmtrain::job {

// Bytes per rank, estimated for float32 training (what the dry run prints and the memory check compares), in
// host memory (place host) or on the rank's CUDA device (place device: the same state, window and activations,
// the device's workspaces instead of the host's buffers).
struct MemoryEstimate {
  dist::TensorPlace place = dist::TensorPlace::host;
  double state_replicated = 0;              // weights + gradients + AdamW moments, whole on every rank
  double fsdp_state = 0, fsdp_window = 0;   // state sharded over all ranks; gathered units and gradients
  double hsdp_state = 0, hsdp_window = 0;   // over parallel.shard_group_size (0: it does not divide the ranks)
  double activations = 0;                   // what the model allocates for its micro-batches (Model::own_bytes)
  double head_copies = 0;                   // train.precision = "bf16": the head weight packed twice in bf16
  double checkpoint_staging = 0;            // checkpoint.async: this rank's share of weights and moments
  double memory_snapshot = 0;               // checkpoint.memory_every_steps: the part's buffer (the files in
                                            // memory_dir are reported apart)
  double device_workspaces = 0;             // on a device: cuBLASLt's workspace and, with train.precision =
                                            // "bf16", the product operands rounded to bf16
  // What a rank allocates beside the parameter state, whatever the strategy (the host-only terms are 0 on a
  // device, the device-only one on the host).
  double beside_state() const {
    return activations + head_copies + checkpoint_staging + memory_snapshot + device_workspaces;
  }
  double data_parallel() const { return state_replicated + beside_state(); }
  // Everything a rank holds under parallel.strategy = strategy.
  double total(const std::string& strategy) const;
};

MemoryEstimate estimate_memory(const Config& config, const ModelConfig& model, int world_size,
                               dist::TensorPlace place = dist::TensorPlace::host);

// "1.50 GiB"
std::string format_bytes(double bytes);

std::string dry_run_report(const Config& config, const ModelConfig& model, int world_size);

// The "device memory" section of the dry run: estimate_memory(..., device) per strategy, with its terms.
std::string device_memory_report(const Config& config, const ModelConfig& model, int world_size);

}  // namespace llmtrain::job
