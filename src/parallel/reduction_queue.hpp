// Gradient reductions in flight, at most R at once (parallel.max_inflight_reductions), each started when a
// unit's gradient is ready and finished in start order.
//
// One reduction takes a unit's whole gradient (padded to a multiple of the shard group size S) to this
// rank's chunk of the sum: a reduce-scatter over the shard group, then (HSDP) an all-reduce of the chunk
// over the replica group; the replicated strategy has no shard group and all-reduces the whole buffer.
// HSDP needs the replica group's sum once per step, not per micro-batch: the micro-batches before the last
// stop after the shard group (Into::accumulate_in_group), and the last one adds what they accumulated into
// its chunk before the all-reduce (Into::fold_and_replicate), so train.grad_accum divides the traffic
// between groups (on a cluster, the traffic between nodes). The
// second stage of the oldest reduction is issued only once its first completes and every older reduction
// has been finished, so every rank issues the same collectives in the same order on each communicator, as
// MPI and NCCL require, whatever the timing.
//
// Gathers come first on a shared link: a sharded store passes a Link, and a reduction whose gradient is ready
// is put on the wire only while no gather is queued or running (compute is about to need that gather; the
// reduction is needed only at the end of backward). Reductions still start in order, and one is started
// anyway when compute must wait for it (R in flight, wait_all). A rank that waits for a reduction keeps
// the gathers moving (Link::advance): a peer may be waiting for one of our gathers before it can open its
// own gate and start the reduction we wait for.
#pragma once

#include <deque>
#include <functional>
#include <string>

#include "busy_clock.hpp"
#include "llmtrain/dist/collectives.hpp"
#include "llmtrain/parallel/param_store.hpp"
#include "llmtrain/parallel/trace.hpp"
#include "wire.hpp"

namespace llmtrain::parallel {

class ReductionQueue {
 public:
  // The gathers sharing the link with the reductions (empty functions: none).
  struct Link {
    std::function<bool()> gathers_busy;   // a gather queued or on the wire
    std::function<void()> advance;        // completes finished gathers and starts queued ones, never blocks
  };

  // shards: the shard group, or null for a plain all-reduce; replicas: the group the chunks are then summed
  // over, or null. At least one is given. Both must outlive the queue.
  ReductionQueue(int max_inflight, dist::DType wire, dist::Collectives* shards, dist::Collectives* replicas,
                 BusyClock& busy, BusyClock& exposed, Link link = {});

  // How a reduction's result meets `into`.
  enum class Into {
    write,                // into = the sum (without a shard group `into` may be `full` itself: in place)
    accumulate,           // into += the sum over the shard group and then the replica group, if any
    accumulate_in_group,  // into += the sum over the shard group only (hsdp, before the last micro-batch)
    fold_and_replicate,   // into = the replica group's sum of (the shard group's sum + into) (hsdp, the last)
  };  // without a replica group, accumulate_in_group and fold_and_replicate are accumulate
  // Queues the reduction of `full` (S * chunk values) and puts it on the wire unless gathers hold the link;
  // its result, this rank's chunk of the sum, meets `into` as `how` says. Waits for the oldest reduction
  // first when R are in flight. Neither buffer may be touched until wait_all(). `label` names it in a trace.
  void start(Floats full, Floats into, Into how, const std::string& label);
  // Starts the queued reductions the link allows and advances the oldest ones, without blocking.
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
    Into how = Into::write;
    bool started = false;
    bool second_stage = false;
    dist::Request request;
    std::string label;
    double begin_us = 0;
  };
  void launch(Reduction& r);
  void launch_allowed();  // starts queued reductions in order while no gather holds the link
  // Moves the oldest reduction on (starting it if it is still queued) once its current stage completes.
  void advance_front();
  void finish(Reduction& r);
  void wait_exposed(int until);  // compute waits until at most `until` reductions are in flight

  int max_inflight_;
  dist::DType wire_;
  dist::Collectives* shards_;
  dist::Collectives* replicas_;
  BusyClock& busy_;
  BusyClock& exposed_;
  Link link_;
  std::deque<Reduction> queue_;
  Trace* trace_ = nullptr;
  std::int64_t bytes_ = 0;
};

}  // namespace llmtrain::parallel
