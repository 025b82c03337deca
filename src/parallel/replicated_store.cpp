// Replicated parameters, gradients all-reduced unit by unit during the last backward (see
// replicated_store.hpp).
#include "llmtrain/parallel/replicated_store.hpp"

#include <cmath>

#include "busy_clock.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/optim/grad_clip.hpp"
#include "reduction_queue.hpp"

namespace llmtrain::parallel {

struct ReplicatedStore::Clocks {
  BusyClock reduce, exposed;
};

ReplicatedStore::ReplicatedStore(const ModelConfig& config, dist::Collectives& comm, const StoreOptions& options,
                                 model::Backend<float>* device)
    : device_(device && device->device() == model::Device::Cuda ? device : nullptr),
      units_(config, device_),
      world_(comm.size()),
      comm_(comm.split(0, comm.rank())),
      clocks_(std::make_unique<Clocks>()),
      reductions_(std::make_unique<ReductionQueue>(options.max_inflight_reductions, options.comm_dtype, nullptr,
                                                   comm_.get(), clocks_->reduce, clocks_->exposed)) {
  LLMTRAIN_CHECK(!device_ || options.comm_dtype == dist::DType::f32, "parallel.comm_dtype = \"bf16\": a run on ",
                 "devices all-reduces gradients in fp32 in this build; use parallel.comm_dtype = \"fp32\"");
}

ReplicatedStore::~ReplicatedStore() = default;

void ReplicatedStore::zero_gradients() {
  reductions_->wait_all();
  for (auto& request : device_reductions_) request.wait();
  device_reductions_.clear();
  units_.zero_grads();
  last_micro_batch_ = true;
}

void ReplicatedStore::grad_ready(int unit) {
  units_.grad_ready(unit);
  if (!last_micro_batch_) return;
  if (device_) return device_grad_ready(unit);
  Kokkos::fence();
  const Floats& g = units_.grads()[std::size_t(unit)].flat;
  reductions_->set_trace(trace_);
  reductions_->start(g, g, ReductionQueue::Into::write, "all_reduce " + units_.grads()[std::size_t(unit)].layout.name);
  reductions_->progress();
}

// The NCCL stream does not wait for the compute stream: the gradient is complete on the device before the
// all-reduce is issued, and the waits in reduce_gradients order the compute stream's later work after it.
void ReplicatedStore::device_grad_ready(int unit) {
  if (world_ == 1) return;
  device_->synchronize();
  const model::ParamUnit<float>& g = units_.grads()[std::size_t(unit)];
  device_reductions_.push_back(comm_->all_reduce_sum(g.flat.data(), g.flat.size(), dist::DType::f32));
  device_reduce_bytes_ += 2 * ring_bytes(std::int64_t(4 * g.flat.size()), world_);
}

void ReplicatedStore::progress() {
  reductions_->progress();
  for (auto& request : device_reductions_) request.test();
}

void ReplicatedStore::reduce_gradients() {
  reductions_->wait_all();
  for (auto& request : device_reductions_) request.wait();
  device_reductions_.clear();
  if (device_) {
    for (auto& unit : units_.grads())
      device_->scale(unit.flat.data(), 1.0f / float(world_), std::int64_t(unit.flat.size()));
    return;
  }
  for (auto& unit : units_.grads()) scale(unit.flat, 1.0f / float(world_));
  Kokkos::fence();
}

// Every rank holds the same whole reduced gradient: its own sum of squares is the global one.
double ReplicatedStore::grad_norm() { return std::sqrt(optim::sum_of_squares(units_.grads(), device_)); }

std::int64_t ReplicatedStore::shard_bytes() const {
  std::int64_t bytes = 0;
  for (auto& unit : const_cast<model::LocalUnits<float>&>(units_).params()) bytes += 4 * 4 * std::int64_t(unit.flat.size());
  return bytes;
}

CommTimes ReplicatedStore::take_comm_times() {
  const std::int64_t device_bytes = device_reduce_bytes_;
  device_reduce_bytes_ = 0;
  return {0.0, clocks_->reduce.take(), clocks_->exposed.take(), 0.0, 0, reductions_->take_bytes() + device_bytes};
}

}  // namespace llmtrain::parallel
