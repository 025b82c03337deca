// Every unit whole, in this process: the unit store of single-process work (gradient checks, reference
// tests, benchmarks) and the storage behind the replicated strategy. Its access hooks do nothing.
#pragma once

#include <vector>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/param_units.hpp"
#include "llmtrain/model/unit_access.hpp"

namespace llmtrain::model {

template <typename T>
class LocalUnits final : public UnitAccess<T> {
 public:
  // Parameters initialised from the config's seed (init.hpp), gradients zero.
  explicit LocalUnits(const ModelConfig& config);

  std::vector<ParamUnit<T>>& params() { return params_; }
  std::vector<ParamUnit<T>>& grads() { return grads_; }
  void zero_grads();

  const T* acquire(int unit) override { return params_[unit].flat.data(); }
  void release(int) override {}
  T* gradient(int unit) override { return grads_[unit].flat.data(); }
  void grad_ready(int) override {}

 private:
  std::vector<ParamUnit<T>> params_, grads_;
};

}  // namespace llmtrain::model
