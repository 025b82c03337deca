// Replicated parameters with one gradient all-reduce per step (see replicated_store.hpp).
#include "llmtrain/parallel/replicated_store.hpp"

#include <cmath>
#include <vector>

namespace llmtrain::parallel {

ReplicatedStore::ReplicatedStore(const ModelConfig& config, dist::Collectives& comm) : units_(config), comm_(comm) {}

void ReplicatedStore::reduce_gradients() {
  std::vector<dist::Request> pending;
  for (auto& unit : units_.grads())
    pending.push_back(comm_.all_reduce_sum(unit.flat.data(), unit.flat.size(), dist::DType::f32));
  const float scale = 1.0f / float(comm_.size());
  for (std::size_t u = 0; u < pending.size(); ++u) {
    pending[u].wait();
    float* g = units_.grads()[u].flat.data();
    Kokkos::parallel_for("grad_mean", Kokkos::RangePolicy<Kokkos::IndexType<std::int64_t>>(0, units_.grads()[u].flat.size()),
                         KOKKOS_LAMBDA(std::int64_t i) { g[i] *= scale; });
  }
}

// Every rank holds the same whole reduced gradient: its own sum of squares is the global one.
double ReplicatedStore::grad_norm() { return std::sqrt(model::sum_of_squares(units_.grads())); }

}  // namespace llmtrain::parallel
