// Host copies of a device run's units at the checkpoint boundary (see host_copies.hpp).
#include "host_copies.hpp"

#include "llmtrain/model/units_in_memory.hpp"

namespace llmtrain::job {

HostCopies::HostCopies(parallel::ParamStore& store, optim::AdamW& optimizer, model::Backend<float>* device)
    : store_(store), optimizer_(optimizer), device_(device && device->device() == model::Device::Cuda ? device : nullptr) {
  if (!device_) return;
  params_ = model::allocate_like(store_.param_shards(), "checkpoint.param");
  m_ = model::allocate_like(optimizer_.first_moments(), "checkpoint.adamw.m");
  v_ = model::allocate_like(optimizer_.second_moments(), "checkpoint.adamw.v");
}

HostCopies::Units HostCopies::current() {
  if (!device_) return {&store_.param_shards(), &optimizer_.first_moments(), &optimizer_.second_moments()};
  model::copy_to_host(*device_, params_, store_.param_shards());
  model::copy_to_host(*device_, m_, optimizer_.first_moments());
  model::copy_to_host(*device_, v_, optimizer_.second_moments());
  return {&params_, &m_, &v_};
}

HostCopies::Units HostCopies::to_fill() {
  if (!device_) return {&store_.param_shards(), &optimizer_.first_moments(), &optimizer_.second_moments()};
  return {&params_, &m_, &v_};
}

void HostCopies::loaded(bool moments) {
  if (!device_) return;
  model::copy_from_host(*device_, store_.param_shards(), params_);
  if (moments) {
    model::copy_from_host(*device_, optimizer_.first_moments(), m_);
    model::copy_from_host(*device_, optimizer_.second_moments(), v_);
  }
  device_->synchronize();
}

}  // namespace llmtrain::job
