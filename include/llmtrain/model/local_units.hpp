// Every unit whole, in this process: the unit store of single-process work (gradient checks, reference
// tests, benchmarks) and the storage behind the replicated strategy. Its access hooks do nothing. On a
// backend's memory (a CUDA device's) the units live there (units_in_memory.hpp), initialised as on the host.
#pragma once

#include <vector>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/param_units.hpp"
#include "llmtrain/model/unit_access.hpp"
#include "llmtrain/model/units_in_memory.hpp"

namespace llmtrain::model {

template <typename T>
class LocalUnits final : public UnitAccess<T> {
 public:
  // Parameters initialised from the config's seed (init.hpp), gradients zero: in host memory, or in the
  // memory of `backend` (which must outlive the units) when given.
  explicit LocalUnits(const ModelConfig& config, Backend<T>* backend = nullptr);

  std::vector<ParamUnit<T>>& params() { return params_; }
  std::vector<ParamUnit<T>>& grads() { return grads_; }
  void zero_grads();

  const T* acquire(int unit) override { return params_[unit].flat.data(); }
  void release(int) override {}
  T* gradient(int unit) override { return grads_[unit].flat.data(); }
  void grad_ready(int) override {}

 private:
  Backend<T>* backend_;                  // null: host memory
  UnitsInMemory<T> params_in_backend_, grads_in_backend_;  // the buffers behind params_ and grads_ there
  std::vector<ParamUnit<T>> params_, grads_;
};

}  // namespace llmtrain::model
