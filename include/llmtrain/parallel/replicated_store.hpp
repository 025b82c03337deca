// The replicated strategy: every rank holds every unit whole (model::LocalUnits), the access hooks do
// nothing, and the gradients are all-reduced (mean) once per step. The FSDP store implements the same
// interface with sharded units.
#pragma once

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/parallel/param_store.hpp"

namespace llmtrain::parallel {

class ReplicatedStore final : public ParamStore {
 public:
  // `comm` spans the data-parallel ranks and must outlive the store.
  ReplicatedStore(const ModelConfig& config, dist::Collectives& comm);

  std::string strategy() const override { return "replicated"; }
  std::vector<model::ParamUnit<float>>& param_shards() override { return units_.params(); }
  std::vector<model::ParamUnit<float>>& grad_shards() override { return units_.grads(); }
  void zero_gradients() override { units_.zero_grads(); }
  void reduce_gradients() override;
  double grad_norm() override;

  const float* acquire(int unit) override { return units_.acquire(unit); }
  void release(int unit) override { units_.release(unit); }
  float* gradient(int unit) override { return units_.gradient(unit); }
  void grad_ready(int unit) override { units_.grad_ready(unit); }

 private:
  model::LocalUnits<float> units_;
  dist::Collectives& comm_;
};

}  // namespace llmtrain::parallel
