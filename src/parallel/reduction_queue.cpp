// Gradient reductions in flight (see reduction_queue.hpp).
#include "reduction_queue.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain::parallel {

ReductionQueue::ReductionQueue(int max_inflight, dist::DType wire, dist::Collectives* shards,
                               dist::Collectives* replicas, BusyClock& busy, BusyClock& exposed, Link link)
    : max_inflight_(max_inflight), wire_(wire), shards_(shards), replicas_(replicas), busy_(busy), exposed_(exposed),
      link_(std::move(link)) {
  LLMTRAIN_CHECK(max_inflight >= 1, "parallel.max_inflight_reductions must be at least 1, got ", max_inflight);
  LLMTRAIN_CHECK(shards || replicas, "a reduction needs a shard group or a replica group");
}

void ReductionQueue::wait_exposed(int until) {
  if (int(queue_.size()) <= until) return;
  const double begin = trace_ ? trace_->now_us() : 0;
  exposed_.set(true);
  while (int(queue_.size()) > until) advance_front();
  exposed_.set(false);
  if (trace_) trace_->span(Trace::compute, "wait: reductions", begin, trace_->now_us());
}

void ReductionQueue::start(Floats full, Floats into, Into how, const std::string& label) {
  LLMTRAIN_CHECK(shards_ || (how != Into::accumulate_in_group && how != Into::fold_and_replicate),
                 "a reduction without a shard group has no group-only stage");
  // Without a replica group there is no second stage to hold back or fold into: both add the group's sum.
  if (!replicas_ && (how == Into::accumulate_in_group || how == Into::fold_and_replicate)) how = Into::accumulate;
  wait_exposed(max_inflight_ - 1);
  Reduction r;
  r.label = label;
  r.into = into;
  r.how = how;
  const bool bf16 = wire_ == dist::DType::bf16;
  const std::int64_t wire_bytes = std::int64_t(full.size() * dist::dtype_size(wire_));
  if (shards_) bytes_ += ring_bytes(wire_bytes, shards_->size());
  if (replicas_ && how != Into::accumulate_in_group)
    bytes_ += 2 * ring_bytes(shards_ ? wire_bytes / shards_->size() : wire_bytes, replicas_->size());
  if (bf16) r.full_wire = to_bf16(full, "grad_wire");
  else r.full = full;  // the bf16 path drops the fp32 buffer here: it is no longer needed
  Kokkos::fence();
  queue_.push_back(std::move(r));
  launch_allowed();
}

void ReductionQueue::launch_allowed() {
  for (Reduction& r : queue_) {
    if (r.started) continue;
    if (link_.gathers_busy && link_.gathers_busy()) return;
    launch(r);
  }
}

void ReductionQueue::launch(Reduction& r) {
  r.started = true;
  busy_.set(true);
  if (trace_) r.begin_us = trace_->now_us();
  const bool bf16 = wire_ == dist::DType::bf16;
  if (shards_) {
    const std::size_t chunk = (bf16 ? r.full_wire.size() : r.full.size()) / std::size_t(shards_->size());
    if (bf16) {
      r.chunk_wire = Wire16(Kokkos::view_alloc(Kokkos::WithoutInitializing, "grad_chunk_wire"), chunk);
      r.request = shards_->reduce_scatter_sum(r.full_wire.data(), r.chunk_wire.data(), chunk, wire_);
    } else {
      r.chunk = uninitialised_floats("grad_chunk", std::int64_t(chunk));
      r.request = shards_->reduce_scatter_sum(r.full.data(), r.chunk.data(), chunk, wire_);
    }
  } else {
    r.second_stage = true;
    if (bf16) r.request = replicas_->all_reduce_sum(r.full_wire.data(), r.full_wire.size(), wire_);
    else r.request = replicas_->all_reduce_sum(r.full.data(), r.full.size(), wire_);
  }
}

void ReductionQueue::advance_front() {
  Reduction& r = queue_.front();
  if (!r.started) launch(r);
  if (link_.advance)
    while (!r.request.test()) link_.advance();
  else
    r.request.wait();
  if (!r.second_stage && replicas_ && r.how != Into::accumulate_in_group) {
    r.second_stage = true;
    const bool bf16 = wire_ == dist::DType::bf16;
    if (r.how == Into::fold_and_replicate) {  // the earlier micro-batches' sums join this one's
      if (bf16) add_into_bf16(r.into, r.chunk_wire);
      else add_into(r.into, r.chunk);
      Kokkos::fence();
    }
    if (bf16) r.request = replicas_->all_reduce_sum(r.chunk_wire.data(), r.chunk_wire.size(), wire_);
    else r.request = replicas_->all_reduce_sum(r.chunk.data(), r.chunk.size(), wire_);
    return;
  }
  finish(r);
  queue_.pop_front();
  busy_.set(!queue_.empty() && queue_.front().started);  // reductions start in order
}

void ReductionQueue::finish(Reduction& r) {
  // fold_and_replicate's sum already holds what `into` held: it is written, not added.
  const bool accumulate = r.how == Into::accumulate || r.how == Into::accumulate_in_group;
  if (shards_) {
    if (wire_ == dist::DType::bf16) from_bf16(r.chunk_wire, r.into, accumulate);
    else if (accumulate) add_into(r.chunk, r.into);
    else Kokkos::deep_copy(r.into, r.chunk);
  } else if (wire_ == dist::DType::bf16) {
    from_bf16(r.full_wire, r.into, accumulate);
  } else {
    LLMTRAIN_CHECK(!accumulate && r.into.data() == r.full.data(), "an all-reduce without a shard group is in place");
  }
  Kokkos::fence();
  if (trace_) trace_->span(Trace::communication, r.label, r.begin_us, trace_->now_us());
}

void ReductionQueue::progress() {
  launch_allowed();
  while (!queue_.empty() && queue_.front().started && queue_.front().request.test()) advance_front();
}

void ReductionQueue::wait_all() { wait_exposed(0); }

std::int64_t ReductionQueue::take_bytes() {
  const std::int64_t out = bytes_;
  bytes_ = 0;
  return out;
}

}  // namespace llmtrain::parallel
