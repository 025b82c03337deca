// Where the parameters, gradients and optimizer ranges of a run live, and how gradients are combined
// across ranks: the strategy of data parallelism.
//
// A store is the model's unit access (acquire / release / gradient / grad_ready, model/unit_access.hpp)
// plus what the trainer needs between micro-batches and the optimizer step. Each rank owns a range of every
// unit's flat buffer (the whole unit when replicated, 1/S of it when sharded); the optimizer updates exactly
// those ranges and a checkpoint writes them as hyperslabs of the global tensors.
#pragma once

#include <string>
#include <vector>

#include "llmtrain/model/param_units.hpp"
#include "llmtrain/model/unit_access.hpp"

namespace llmtrain::parallel {

class ParamStore : public model::UnitAccess<float> {
 public:
  virtual std::string strategy() const = 0;  // "replicated", "fsdp", "hsdp"

  // This rank's range of every unit: the parameters it updates, and (after reduce_gradients) their gradient.
  virtual std::vector<model::ParamUnit<float>>& param_shards() = 0;
  virtual std::vector<model::ParamUnit<float>>& grad_shards() = 0;

  // Before the first micro-batch of a step.
  virtual void zero_gradients() = 0;
  // Collective, after the last micro-batch's backward: grad_shards() hold the mean over the ranks.
  virtual void reduce_gradients() = 0;
  // Collective: the L2 norm of the whole reduced gradient (every element counted once).
  virtual double grad_norm() = 0;
};

}  // namespace llmtrain::parallel
