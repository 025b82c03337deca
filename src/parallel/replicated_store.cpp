// Replicated parameters, gradients all-reduced unit by unit during the last backward (see
// replicated_store.hpp).
#include "llmtrain/parallel/replicated_store.hpp"

#include <cmath>

#include "busy_clock.hpp"
#include "reduction_queue.hpp"

namespace llmtrain::parallel {

struct ReplicatedStore::Clocks {
  BusyClock reduce, exposed;
};

ReplicatedStore::ReplicatedStore(const ModelConfig& config, dist::Collectives& comm, const StoreOptions& options)
    : units_(config),
      world_(comm.size()),
      comm_(comm.split(0, comm.rank())),
      clocks_(std::make_unique<Clocks>()),
      reductions_(std::make_unique<ReductionQueue>(options.max_inflight_reductions, options.comm_dtype, nullptr,
                                                   comm_.get(), clocks_->reduce, clocks_->exposed)) {}

ReplicatedStore::~ReplicatedStore() = default;

void ReplicatedStore::zero_gradients() {
  reductions_->wait_all();
  units_.zero_grads();
  last_micro_batch_ = true;
}

void ReplicatedStore::grad_ready(int unit) {
  units_.grad_ready(unit);
  if (!last_micro_batch_) return;
  Kokkos::fence();
  const Floats& g = units_.grads()[std::size_t(unit)].flat;
  reductions_->set_trace(trace_);
  reductions_->start(g, g, ReductionQueue::Into::write, "all_reduce " + units_.grads()[std::size_t(unit)].layout.name);
  reductions_->progress();
}

void ReplicatedStore::progress() { reductions_->progress(); }

void ReplicatedStore::reduce_gradients() {
  reductions_->wait_all();
  for (auto& unit : units_.grads()) scale(unit.flat, 1.0f / float(world_));
  Kokkos::fence();
}

// Every rank holds the same whole reduced gradient: its own sum of squares is the global one.
double ReplicatedStore::grad_norm() { return std::sqrt(model::sum_of_squares(units_.grads())); }

std::int64_t ReplicatedStore::shard_bytes() const {
  std::int64_t bytes = 0;
  for (auto& unit : const_cast<model::LocalUnits<float>&>(units_).params()) bytes += 4 * 4 * std::int64_t(unit.flat.size());
  return bytes;
}

CommTimes ReplicatedStore::take_comm_times() {
  return {0.0, clocks_->reduce.take(), clocks_->exposed.take(), 0.0, 0, reductions_->take_bytes()};
}

}  // namespace llmtrain::parallel
