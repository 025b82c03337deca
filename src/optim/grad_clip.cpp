// Global gradient norm (double accumulation) and clipping.
#include "llmtrain/optim/grad_clip.hpp"

#include <cmath>

namespace llmtrain::optim {

using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;

double global_norm(const std::vector<model::ParamUnit<float>>& grads) {
  double total = 0;
  for (const auto& unit : grads) {
    const float* g = unit.flat.data();
    double sum = 0;
    Kokkos::parallel_reduce("grad_norm", Range(0, std::int64_t(unit.flat.size())),
                            KOKKOS_LAMBDA(std::int64_t i, double& acc) { acc += double(g[i]) * double(g[i]); }, sum);
    total += sum;
  }
  return std::sqrt(total);
}

double clip_by_global_norm(std::vector<model::ParamUnit<float>>& grads, double max_norm) {
  const double norm = global_norm(grads);
  if (max_norm > 0 && norm > max_norm) {
    const float scale = float(max_norm / (norm + 1e-6));
    for (auto& unit : grads) {
      float* g = unit.flat.data();
      Kokkos::parallel_for("clip", Range(0, std::int64_t(unit.flat.size())), KOKKOS_LAMBDA(std::int64_t i) { g[i] *= scale; });
    }
  }
  return norm;
}

}  // namespace llmtrain::optim
