// The sharded strategies, FSDP (one shard group of all ranks) and HSDP (shard groups of S ranks, replicated
// across groups): each unit's parameters, gradients and AdamW moments are flat buffers padded to a multiple
// of S, of which each rank keeps 1/S.
//
// acquire(u) all-gathers the unit (waiting only if its gather is not done yet); release(u) frees it;
// grad_ready(u) starts its reduce-scatter (HSDP: then an all-reduce of the chunk across groups) and the
// chunk is added into this rank's gradient shard, micro-batch after micro-batch. Gathers run ahead in a
// sliding window of at most K units (parallel.max_inflight_units) in the order the model will ask for them;
// reductions are bounded by R. The next pass's first gathers start during the optimizer step, as soon as
// their units are updated (shard_updated). docs/parallel.md gives the window's rules and the memory bound.
#pragma once

#include <memory>
#include <vector>

#include "llmtrain/core/model_config.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/parallel/param_store.hpp"
#include "llmtrain/parallel/store_options.hpp"

namespace llmtrain::parallel {

class FsdpStore final : public ParamStore {
 public:
  // `world` spans the data-parallel ranks and must outlive the store.
  FsdpStore(const ModelConfig& config, const StoreOptions& options, dist::Collectives& world);
  ~FsdpStore() override;

  std::string strategy() const override;
  std::vector<model::ParamUnit<float>>& param_shards() override { return param_shards_; }
  std::vector<model::ParamUnit<float>>& grad_shards() override { return grad_shards_; }
  void zero_gradients() override;
  void begin_micro_batch(bool last) override;
  void progress() override;
  void reduce_gradients() override;
  double grad_norm() override;
  void shard_updated(int unit) override;
  std::int64_t shard_bytes() const override;
  CommTimes take_comm_times() override;

  const float* acquire(int unit) override;
  void release(int unit) override;
  float* gradient(int unit) override;
  void grad_ready(int unit) override;

  // For tests of the window: units gathered or being gathered now, and gathers in flight.
  int gathered_units() const;
  int gathers_in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<model::ParamUnit<float>> param_shards_, grad_shards_;
};

}  // namespace llmtrain::parallel
