// Where the parameters, gradients and optimizer ranges of a run live, and how gradients are combined
// across ranks: the strategy of data parallelism.
//
// A store is the model's unit access (acquire / release / gradient / grad_ready, model/unit_access.hpp)
// plus what the trainer needs between micro-batches and the optimizer step. Each rank owns a range of every
// unit's flat buffer (the whole unit when replicated, 1/S of it when sharded); the optimizer updates exactly
// those ranges and a checkpoint writes them as hyperslabs of the global tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llmtrain/model/param_units.hpp"
#include "llmtrain/model/unit_access.hpp"
#include "llmtrain/parallel/trace.hpp"

namespace llmtrain::parallel {

// What a store's collectives took between two take_comm_times() calls: seconds, and the bytes this rank
// sent plus received, counted as a bandwidth-optimal (ring) algorithm moves them over a group of S ranks:
// an all-gather or a reduce-scatter of a buffer of N bytes (all S chunks) 2 (S - 1) / S N, an all-reduce
// 4 (S - 1) / S N (a reduce-scatter then an all-gather), in the wire type (bf16 halves them). At S = 2
// every algorithm moves exactly this much. docs/parallel.md, "Bytes per step".
struct CommTimes {
  double gather_s = 0, reduce_s = 0, exposed_s = 0;
  double gather_wait_s = 0;  // the part of exposed_s spent waiting for gathers
  std::int64_t gather_bytes = 0, reduce_bytes = 0;
};

// The bytes one rank sends plus receives in a ring all-gather or reduce-scatter of `buffer_bytes` over
// `ranks` (see CommTimes); an all-reduce is twice this.
inline std::int64_t ring_bytes(std::int64_t buffer_bytes, int ranks) {
  return 2 * (std::int64_t(ranks) - 1) * buffer_bytes / ranks;
}

class ParamStore : public model::UnitAccess<float> {
 public:
  virtual std::string strategy() const = 0;  // "replicated", "fsdp", "hsdp"

  // This rank's range of every unit: the parameters it updates, and (after reduce_gradients) their gradient.
  virtual std::vector<model::ParamUnit<float>>& param_shards() = 0;
  virtual std::vector<model::ParamUnit<float>>& grad_shards() = 0;

  // Before the first micro-batch of a step.
  virtual void zero_gradients() = 0;
  // Before each micro-batch's forward_backward: whether it is the step's last (the replicated store
  // reduces only the last one's accumulated gradient; a sharded store reduces every micro-batch).
  virtual void begin_micro_batch(bool last) = 0;
  // Drives this store's collectives in flight and issues what the window allows; compute calls it through
  // the progress poller (core/comm_progress.hpp).
  virtual void progress() = 0;
  // Collective, after the last micro-batch's backward: grad_shards() hold the mean over the ranks.
  virtual void reduce_gradients() = 0;
  // Collective: the L2 norm of the whole reduced gradient (every element counted once).
  virtual double grad_norm() = 0;
  // Called by the optimizer step after it has updated unit `unit`'s range (units in index order, which is
  // the forward order), when another pass follows: the range is final until that pass. A sharded store
  // starts gathering the next pass's first units then, so their gathers overlap the rest of the update.
  virtual void shard_updated(int /*unit*/) {}

  // Bytes this rank keeps between steps: parameters, gradients and the two AdamW moments of its ranges.
  virtual std::int64_t shard_bytes() const = 0;
  // Seconds spent since the last call (then reset): with a gather / a reduction in flight, and compute
  // blocked waiting for one; and the bytes of the gathers and reductions started since then.
  virtual CommTimes take_comm_times() = 0;
  // Records compute and communication spans into `trace` from now on (null: stop). It must outlive the
  // store or be unset first.
  void set_trace(Trace* trace) { trace_ = trace; }

 protected:
  Trace* trace_ = nullptr;
};

}  // namespace llmtrain::parallel
