// Gradient reductions in flight, at most R at once (parallel.max_inflight_reductions), each started when a
// unit's gradient is ready and finished in start order.
//
// One reduction takes a unit's whole gradient (padded to a multiple of the shard group size S) to this
// rank's chunk of the sum: a reduce-scatter over the shard group, then (HSDP) an all-reduce of the chunk
// over the replica group; the replicated strategy has no shard group and all-reduces the whole buffer. The
// second stage of the oldest reduction is issued only once its first completes and every older reduction
// has been finished, so every rank issues the same collectives in the same order on each communicator, as
// MPI and NCCL require, whatever the timing.
#pragma once

#include <deque>

#include <string>

#include "busy_clock.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/parallel/param_store.hpp"
#include "llmtrain/parallel/trace.hpp"
#include "wire.hpp"

namespace llmtrain::parallel {

class ReductionQueue {
 public:
  // shards: the shard group, or null for a plain all-reduce; replicas: the group the chunks are then summed
  // over, or null. At least one is given. Both must outlive the queue.
  ReductionQueue(int max_inflight, dist::DType wire, dist::Collectives* shards, dist::Collectives* replicas,
                 BusyClock& busy, BusyClock& exposed);

  // Starts reducing `full` (S * chunk values). Its result, this rank's chunk of the sum, is added into
  // `into` (accumulate) or written to it; without a shard group `into` may be `full` itself. Waits for the
  // oldest reduction first when R are in flight. Neither buffer may be touched until wait_all().
  // `label` names the reduction in a trace.
  void start(Floats full, Floats into, bool accumulate, const std::string& label);
  // Advances the oldest reductions without blocking.
  void progress();
  void wait_all();
  int in_flight() const { return int(queue_.size()); }
  // Bytes of the reductions started since the last call (param_store.hpp, CommTimes), then reset.
  std::int64_t take_bytes();
  void set_trace(Trace* trace) { trace_ = trace; }

 private:
  struct Reduction {
    Floats full, chunk, into;
    Wire16 full_wire, chunk_wire;
    bool accumulate = false;
    bool second_stage = false;
    dist::Request request;
    std::string label;
    double begin_us = 0;
  };
  // Moves the oldest reduction on once its current stage is complete; true when it finished.
  void advance_front();
  void finish(Reduction& r);
  void wait_exposed(int until);  // compute waits until at most `until` reductions are in flight

  int max_inflight_;
  dist::DType wire_;
  dist::Collectives* shards_;
  dist::Collectives* replicas_;
  BusyClock& busy_;
  BusyClock& exposed_;
  std::deque<Reduction> queue_;
  Trace* trace_ = nullptr;
  std::int64_t bytes_ = 0;
};

}  // namespace llmtrain::parallel
