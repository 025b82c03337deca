// The replicated strategy: every rank holds every unit whole (model::LocalUnits) and acquire / release do
// nothing. Gradients accumulate over the step's micro-batches in the whole buffers; during the last
// micro-batch's backward, grad_ready(u) starts u's all-reduce, so the reductions overlap the rest of
// backward (as PyTorch DDP does), at most R (parallel.max_inflight_reductions) at once.
//
// On a CUDA device (a device backend given) the units live in its memory (model::LocalUnits over the backend):
// one rank reduces nothing; several all-reduce each unit's gradient in fp32 in place (the NCCL collectives,
// on their own stream, issued once the compute stream has produced it), and the mean, the norm and the
// update run on the device.
#pragma once

#include <memory>
#include <vector>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/model/local_units.hpp"
#include "llmtrain/parallel/param_store.hpp"
#include "llmtrain/parallel/store_options.hpp"

namespace llmtrain::parallel {

class ReductionQueue;

class ReplicatedStore final : public ParamStore {
 public:
  // `comm` spans the data-parallel ranks and must outlive the store. Uses options.max_inflight_reductions
  // and options.comm_dtype (fp32 only on a device). `device`: a CUDA backend whose memory holds the units
  // (it must outlive the store), or null (host memory).
  ReplicatedStore(const ModelConfig& config, dist::Collectives& comm, const StoreOptions& options = {},
                  model::Backend<float>* device = nullptr);
  ~ReplicatedStore() override;

  std::string strategy() const override { return "replicated"; }
  std::vector<model::ParamUnit<float>>& param_shards() override { return units_.params(); }
  std::vector<model::ParamUnit<float>>& grad_shards() override { return units_.grads(); }
  void zero_gradients() override;
  void begin_micro_batch(bool last) override { last_micro_batch_ = last; }
  void progress() override;
  void reduce_gradients() override;
  double grad_norm() override;
  std::int64_t shard_bytes() const override;
  CommTimes take_comm_times() override;

  const float* acquire(int unit) override { return units_.acquire(unit); }
  void release(int unit) override { units_.release(unit); }
  float* gradient(int unit) override { return units_.gradient(unit); }
  void grad_ready(int unit) override;

 private:
  struct Clocks;
  void device_grad_ready(int unit);

  model::Backend<float>* device_;  // null: host memory
  model::LocalUnits<float> units_;
  int world_;
  std::unique_ptr<dist::Collectives> comm_;
  std::unique_ptr<Clocks> clocks_;
  std::unique_ptr<ReductionQueue> reductions_;    // host memory
  std::vector<dist::Request> device_reductions_;  // device memory: the gradient all-reduces in flight
  std::int64_t device_reduce_bytes_ = 0;
  bool last_micro_batch_ = true;
};

}  // namespace llmtrain::parallel
